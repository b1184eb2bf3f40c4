import { loadConfig } from './config';
import { errorOf, real } from './config.spec-helpers';

describe('loadConfig: hostile-caller settings', () => {
  it('reads key scopes; a bare key holds every shop scope', () => {
    const c = loadConfig({
      ...real,
      API_KEYS: 'store-key-0123456789:payments+refunds,all-scopes-key-0123456',
    });
    expect(c.apiKeys).toEqual(['store-key-0123456789', 'all-scopes-key-0123456']);
    expect(c.shopKeys).toEqual([
      { key: 'store-key-0123456789', scopes: ['payments', 'refunds'] },
      { key: 'all-scopes-key-0123456', scopes: ['payments', 'refunds', 'payouts', 'read'] },
    ]);
  });

  it.each([
    'store-key-0123456789:admin',
    'store-key-0123456789:',
    'short:payments',
    'store-key-0123456789:payments+',
  ])('refuses API_KEYS=%s with one line, never printing the key', (keys) => {
    const e = errorOf({ ...real, API_KEYS: keys });
    expect(e.variable).toBe('API_KEYS');
    expect(e.message).not.toContain('store-key');
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it.each([
    [undefined, false],
    ['false', false],
    ['0', false],
    ['1', 1],
    ['2', 2],
    ['10.0.0.1', ['10.0.0.1']],
    [
      '10.0.0.0/8, 192.168.1.7,::1,fd00:1::/48',
      ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00:1::/48'],
    ],
    ['2001:db8::/32', ['2001:db8::/32']],
    ['::ffff:10.0.0.0/104', ['::ffff:10.0.0.0/104']],
    ['::ffff:10.1.2.3', ['::ffff:10.1.2.3']],
    ['loopback', ['loopback']],
    ['loopback,10.0.0.0/8', ['loopback', '10.0.0.0/8']],
  ])('TRUST_PROXY=%s → %j', (value, expected) => {
    expect(
      loadConfig(value === undefined ? real : { ...real, TRUST_PROXY: value }).trustProxy,
    ).toEqual(expected);
  });

  // A trusted range that holds ordinary clients lets them choose their own address.
  it.each([
    ['0.0.0.0/0', 'every IPv4'],
    ['0.0.0.0/1,128.0.0.0/1', 'every IPv4'],
    ['0.0.0.0/1, 128.0.0.0/1', 'every IPv4'],
    ['128.0.0.0/1,0.0.0.0/1', 'every IPv4'],
    ['10.0.0.0/7', 'wider than /8'],
    ['1.2.3.4/4', 'wider than /8'],
    ['::/0', 'every IPv'],
    ['::/1,8000::/1', 'every IPv'],
    ['2000::/3', 'wider than /32'],
    ['fd00::/8', 'wider than /32'],
    ['::ffff:0:0/96', 'every IPv4'],
    ['::ffff:0.0.0.0/96', 'every IPv4'],
    ['8000::/1', 'wider than /32'],
    ['2001:db8::/33,2001:db9::/31', 'wider than /32'],
    ['::ffff:0:0/100', 'wider than /8'],
    ['::/64', 'every IPv4'],
    ['::ffff:0:0/95', 'every IPv4'],
    ['uniquelocal', 'uniquelocal (fc00::/7)'],
    ['linklocal', 'linklocal (fe80::/10)'],
    [Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`).join(','), 'every IPv4'],
    [
      Array.from({ length: 256 }, (_, i) =>
        i < 128 ? `${i}.0.0.0/8` : `::ffff:${i}.0.0.0/104`,
      ).join(','),
      'every IPv4',
    ],
  ])('refuses the wide TRUST_PROXY=%s with one line (%s)', (value, why) => {
    const e = errorOf({ ...real, TRUST_PROXY: value });
    expect(e.variable).toBe('TRUST_PROXY');
    expect(e.message).toContain(why);
    expect(e.message).toContain('TRUST_PROXY_ALLOW_WIDE');
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it.each(['0.0.0.0/0', '0.0.0.0/1,128.0.0.0/1', '::/0', 'uniquelocal'])(
    'takes the wide TRUST_PROXY=%s when TRUST_PROXY_ALLOW_WIDE=true',
    (value) => {
      expect(
        loadConfig({ ...real, TRUST_PROXY: value, TRUST_PROXY_ALLOW_WIDE: 'true' }).trustProxy,
      ).toEqual(value.split(','));
      expect(
        errorOf({ ...real, TRUST_PROXY: value, TRUST_PROXY_ALLOW_WIDE: 'maybe' }).variable,
      ).toBe('TRUST_PROXY_ALLOW_WIDE');
    },
  );

  it.each([
    'true',
    'yes',
    '10.0.0.0/33',
    'example.com',
    '10.0.0.1/8/1',
    '1.2.3',
    'Loopback',
    'loopback/8',
  ])('refuses TRUST_PROXY=%s with one line', (value) => {
    const e = errorOf({ ...real, TRUST_PROXY: value });
    expect(e.variable).toBe('TRUST_PROXY');
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('has database time limits and rate limits with defaults', () => {
    const c = loadConfig(real);
    expect(c.db).toEqual({
      poolSize: 20,
      acquireTimeoutMs: 10000,
      statementTimeoutMs: 45000,
      lockTimeoutMs: 40000,
      idleInTxTimeoutMs: 60000,
    });
    expect(c.rateLimits).toEqual({
      perKeyRps: 50,
      publicPerIpRps: 10,
      unauthenticatedPerIpRps: 5,
      batchUploadsPerKey: 2,
    });
    const set = loadConfig({
      ...real,
      DB_POOL_SIZE: '5',
      DB_STATEMENT_TIMEOUT_MS: '1000',
      RATE_LIMIT_PER_KEY_RPS: '0',
    });
    expect(set.db.poolSize).toBe(5);
    expect(set.db.statementTimeoutMs).toBe(1000);
    expect(set.rateLimits.perKeyRps).toBe(0);
    expect(errorOf({ ...real, DB_POOL_SIZE: '0' }).variable).toBe('DB_POOL_SIZE');
    expect(loadConfig({ ...real, BATCH_UPLOADS_PER_KEY: '4' }).rateLimits.batchUploadsPerKey).toBe(4);
    expect(errorOf({ ...real, BATCH_UPLOADS_PER_KEY: '0' }).variable).toBe('BATCH_UPLOADS_PER_KEY');
  });

  it('has HTTP server limits with defaults, set from the environment', () => {
    expect(loadConfig(real).http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1024,
    });
    const set = loadConfig({
      ...real,
      HTTP_HEADERS_TIMEOUT_MS: '500',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
      HTTP_MAX_CONNECTIONS: '10',
      RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '0',
    });
    expect(set.http).toEqual({
      headersTimeoutMs: 500,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 65000,
      maxConnections: 10,
    });
    expect(set.rateLimits.unauthenticatedPerIpRps).toBe(0);
    for (const [name, value] of [
      ['HTTP_HEADERS_TIMEOUT_MS', '0'],
      ['HTTP_REQUEST_TIMEOUT_MS', 'soon'],
      ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '-1'],
      ['HTTP_MAX_CONNECTIONS', '0'],
      ['RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS', 'many'],
    ]) {
      const e = errorOf({ ...real, [name]: value });
      expect(e.variable).toBe(name);
      expect(e.message.split('\n')).toHaveLength(1);
    }
    expect(errorOf({ ...real, HTTP_HEADERS_TIMEOUT_MS: '40000' }).variable).toBe(
      'HTTP_HEADERS_TIMEOUT_MS',
    );
  });

  it('keeps rate-limit counters in memory unless REDIS_URL names a redis:// or rediss:// server', () => {
    expect(loadConfig(real).rateLimitStore).toEqual({ redisUrl: undefined, prefix: 'rl' });
    expect(loadConfig({ ...real, REDIS_URL: ' ' }).rateLimitStore.redisUrl).toBeUndefined();
    for (const value of [
      'redis://127.0.0.1:6379',
      'redis://:pw@redis:6379/2',
      'rediss://user:pw@cache.example.com:6380',
      'redis://[::1]:6379/0',
    ]) {
      expect(loadConfig({ ...real, REDIS_URL: value }).rateLimitStore.redisUrl).toBe(value);
    }
    expect(
      loadConfig({ ...real, RATE_LIMIT_REDIS_PREFIX: 'staging:payments' }).rateLimitStore.prefix,
    ).toBe('staging:payments');
    expect(loadConfig({ ...real, RATE_LIMIT_REDIS_PREFIX: '' }).rateLimitStore.prefix).toBe('rl');
  });

  it.each([
    'http://:hunter2-secret@redis:6379',
    'redis-secret-host:6379',
    '127.0.0.1:6379',
    'redis://:hunter2-secret@',
    'redis://:hunter2-secret@redis:6379/zero',
    'redis://:hunter2-secret@redis:6379/0/1',
    'unix:///tmp/redis.sock?password=hunter2-secret',
    'redis:///hunter2-secret',
  ])('refuses REDIS_URL=%s with one line that never repeats it', (value) => {
    const e = errorOf({ ...real, REDIS_URL: value });
    expect(e.variable).toBe('REDIS_URL');
    expect(e.message.split('\n')).toHaveLength(1);
    expect(e.message).not.toContain('hunter2');
    expect(e.message).not.toContain('secret');
  });

  it.each(['a'.repeat(65), 'rl prefix', 'rl\nx', 'rl*', 'rl{1}', 'rl/x', 'rl\u00e9'])(
    'refuses RATE_LIMIT_REDIS_PREFIX=%j with one line',
    (value) => {
      const e = errorOf({ ...real, RATE_LIMIT_REDIS_PREFIX: value });
      expect(e.variable).toBe('RATE_LIMIT_REDIS_PREFIX');
      expect(e.message.split('\n')).toHaveLength(1);
    },
  );
});
