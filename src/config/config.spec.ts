import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_GATEWAY_CALLS, loadConfig } from './config';

const real = {
  GATEWAY_BASE_URL: 'https://pay.example.com/gateway/v1/',
  GATEWAY_SHOP_ID: '42',
  GATEWAY_SECRET_KEY: 's3cr3t-value',
  API_KEYS: 'shop-key-0123456789abcdef',
  ADMIN_API_KEYS: 'admin-key-0123456789abcdef',
  PUBLIC_BASE_URL: 'https://payments.example.com',
  DATA_ENCRYPTION_KEYS: `k2026:${Buffer.alloc(32, 1).toString('base64')}`,
};

const devRing = (dir: string): { text: string; path: string } => ({
  text: `dev:${Buffer.alloc(32, 2).toString('base64')}`,
  path: `${dir}/data-encryption-keys`,
});

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('uses the sandbox and generated keys with no settings', () => {
    let n = 0;
    const c = loadConfig({}, () => `generated-key-${n++}`, devRing);
    expect(c.sandboxMode).toBe(true);
    expect(c.port).toBe(3000);
    expect(c.gateway.baseUrl).toBe('http://127.0.0.1:4010/gateway/v1/');
    expect(c.apiKeys).toEqual(['generated-key-0']);
    expect(c.adminApiKeys).toEqual(['generated-key-1']);
    expect(c.generatedKeys).toBe(true);
    expect(c.notifyAllowedIps).toEqual(
      expect.arrayContaining(['35.198.100.222', '35.198.175.25', '127.0.0.1']),
    );
    // Sandbox mode is for building against: 2 s payout polls unless set (30 s outside it).
    expect(c.payouts.pollIntervalS).toBe(2);
    expect(c.payouts.pollMaxS).toBe(7200);
    expect(c.gateway.timeoutMs).toBe(30000);
    expect(c.publicBaseUrl).toBe('http://localhost:3000');
    expect(c.gateway.calls).toEqual(DEFAULT_GATEWAY_CALLS);
    expect(c.dataEncryptionKeys.map((k) => k.id)).toEqual(['dev']);
    expect(c.devKeyRingPath).toBe('.data/data-encryption-keys');
    expect(c.docsEnabled).toBe(true);
    expect(c.insecureHttp).toEqual([]);
  });

  it('takes the gateway facts as defaults', () => {
    const c = loadConfig(real);
    expect(c.sandboxMode).toBe(false);
    expect(c.gateway.calls['invoice/create-refund'].path).toBe('invoice/create-refund');
    expect(c.gateway.calls['invoice/unhold'].signed).toEqual(['invoice_id', 'now', 'shop_id']);
    expect(c.gateway.duplicateErrorCode).toBe(6);
    expect(c.gateway.absentErrorCode).toBe(7);
    expect(c.payouts.status).toEqual({ success: [5], failed: [8], rejected: [6] });
    expect(c.notifyAllowedIps).toEqual(['35.198.100.222', '35.198.175.25']);
  });

  it('lets the unshown call shapes be reconfigured', () => {
    const c = loadConfig({
      ...real,
      GATEWAY_CALLS: '{"invoice/create-refund":{"path":"refund/create"}}',
    });
    expect(c.gateway.calls['invoice/create-refund']).toEqual({
      path: 'refund/create',
      signed: ['amount', 'invoice_id', 'shop_id', 'shop_refund_id'],
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ GATEWAY_BASE_URL: 'https://x.example/api/' }, 'GATEWAY_BASE_URL'],
    [{ PAYOUT_POLL_INTERVAL_S: '-1' }, 'PAYOUT_POLL_INTERVAL_S'],
    [{ GATEWAY_CALLS: '{"nope":{}}' }, 'GATEWAY_CALLS'],
    [{ GATEWAY_FATAL_ERROR_CODES: '10,x' }, 'GATEWAY_FATAL_ERROR_CODES'],
  ])('names the variable in one line for %p', (env, variable) => {
    const e = errorOf({ ...real, ...env });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(variable);
    expect(e.message).toContain(variable);
    expect(e.message).not.toContain('\n');
  });

  it('refuses a real gateway without credentials or keys, and never prints the secret', () => {
    expect(errorOf({ ...real, GATEWAY_SECRET_KEY: '' }).variable).toBe('GATEWAY_SECRET_KEY');
    expect(errorOf({ ...real, API_KEYS: '' }).variable).toBe('API_KEYS');
    expect(errorOf({ ...real, ADMIN_API_KEYS: '' }).variable).toBe('ADMIN_API_KEYS');
    expect(errorOf({ ...real, PORT: 'x' }).message).not.toContain('s3cr3t-value');
  });

  describe('secrets at rest and production guard rails', () => {
    it('reads the key ring: the first key seals, every key opens', () => {
      const second = `old:${Buffer.alloc(32, 3).toString('base64')}`;
      const c = loadConfig({
        ...real,
        DATA_ENCRYPTION_KEYS: `${real.DATA_ENCRYPTION_KEYS}, ${second}`,
      });
      expect(c.dataEncryptionKeys.map((k) => k.id)).toEqual(['k2026', 'old']);
      expect(c.devKeyRingPath).toBeUndefined();
    });

    it.each([
      [{ DATA_ENCRYPTION_KEYS: '' }, 'DATA_ENCRYPTION_KEYS'],
      [{ DATA_ENCRYPTION_KEYS: 'no-colon' }, 'DATA_ENCRYPTION_KEYS'],
      [
        { DATA_ENCRYPTION_KEYS: `a:${Buffer.alloc(16).toString('base64')}` },
        'DATA_ENCRYPTION_KEYS',
      ],
      [
        { DATA_ENCRYPTION_KEYS: `a b:${Buffer.alloc(32).toString('base64')}` },
        'DATA_ENCRYPTION_KEYS',
      ],
      [
        {
          DATA_ENCRYPTION_KEYS: `a:${Buffer.alloc(32).toString('base64')},a:${Buffer.alloc(32).toString('base64')}`,
        },
        'DATA_ENCRYPTION_KEYS',
      ],
      [{ GATEWAY_BASE_URL: 'http://pay.example.com/gateway/v1/' }, 'GATEWAY_BASE_URL'],
      [{ PUBLIC_BASE_URL: 'http://payments.example.com' }, 'PUBLIC_BASE_URL'],
      // Unset, the public address defaults to http://localhost: not an address for production.
      [{ PUBLIC_BASE_URL: '' }, 'PUBLIC_BASE_URL'],
      [{ ALLOW_INSECURE_HTTP: 'maybe' }, 'ALLOW_INSECURE_HTTP'],
      [{ GATEWAY_SECRET_KEY: 'sandbox-secret-key' }, 'GATEWAY_SECRET_KEY'],
      [{ GATEWAY_SHOP_ID: '1001' }, 'GATEWAY_SHOP_ID'],
      [{ GATEWAY_SHOP_ID: '01001' }, 'GATEWAY_SHOP_ID'],
    ])('outside sandbox mode refuses %p in one line naming %s', (env, variable) => {
      const e = errorOf({ ...real, PUBLIC_BASE_URL: 'https://payments.example.com', ...env });
      expect(e).toBeInstanceOf(ConfigError);
      expect(e.variable).toBe(variable);
      expect(e.message).not.toContain('\n');
      expect(e.message).not.toContain(Buffer.alloc(32).toString('base64'));
    });

    it('accepts http:// only with ALLOW_INSECURE_HTTP=true, and says which addresses', () => {
      const c = loadConfig({
        ...real,
        GATEWAY_BASE_URL: 'http://10.0.0.5/gateway/v1/',
        PUBLIC_BASE_URL: 'https://payments.example.com',
        ALLOW_INSECURE_HTTP: 'true',
      });
      expect(c.insecureHttp).toEqual(['GATEWAY_BASE_URL']);
      const d = loadConfig({ ...real, PUBLIC_BASE_URL: '', ALLOW_INSECURE_HTTP: 'true' });
      expect(d.insecureHttp).toEqual(['PUBLIC_BASE_URL']);
    });

    it('NODE_ENV=production without GATEWAY_BASE_URL is an error, not a sandbox', () => {
      const e = errorOf({ NODE_ENV: 'production' });
      expect(e.variable).toBe('GATEWAY_BASE_URL');
      expect(loadConfig({ NODE_ENV: 'development' }, undefined, devRing).sandboxMode).toBe(true);
    });

    it('serves /docs by default in sandbox mode only; DOCS_ENABLED decides', () => {
      const prod = { ...real, PUBLIC_BASE_URL: 'https://payments.example.com' };
      expect(loadConfig(prod).docsEnabled).toBe(false);
      expect(loadConfig({ ...prod, DOCS_ENABLED: 'true' }).docsEnabled).toBe(true);
      expect(loadConfig({ DOCS_ENABLED: 'false' }, undefined, devRing).docsEnabled).toBe(false);
    });

    it('keeps the development API keys under the data directory: made once, the same at every start', () => {
      const dir = mkdtempSync(join(tmpdir(), 'devkeys-'));
      try {
        const first = loadConfig({ DATA_DIR: dir });
        const again = loadConfig({ DATA_DIR: dir });
        const path = join(dir, 'development-api-keys');
        expect(first.devApiKeysPath).toBe(path);
        expect(first.generatedKeys).toBe(true);
        expect(first.apiKeys[0]).toMatch(/^dev_/);
        expect(first.adminApiKeys[0]).not.toBe(first.apiKeys[0]);
        expect([again.apiKeys, again.adminApiKeys]).toEqual([first.apiKeys, first.adminApiKeys]);
        expect(again.shopKeys).toEqual(first.shopKeys);
        expect(statSync(path).mode & 0o077).toBe(0);
        // A configured key wins; the other is still the kept one.
        const mixed = loadConfig({ DATA_DIR: dir, ADMIN_API_KEYS: 'configured-admin-key-0001' });
        expect(mixed.apiKeys).toEqual(first.apiKeys);
        expect(mixed.adminApiKeys).toEqual(['configured-admin-key-0001']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it.each([
      [
        'a line of something else',
        'shop=dev_aaaaaaaaaaaaaaaaaaaa\nadmin=dev_bbbbbbbbbbbbbbbbbbbb\nroot=x\n',
      ],
      ['a missing admin key', 'shop=dev_aaaaaaaaaaaaaaaaaaaa\n'],
      ['a key too short', 'shop=short\nadmin=dev_bbbbbbbbbbbbbbbbbbbb\n'],
      ['one key for both', 'shop=dev_aaaaaaaaaaaaaaaaaaaa\nadmin=dev_aaaaaaaaaaaaaaaaaaaa\n'],
      ['an empty file', ''],
    ])('a kept development keys file with %s stops start-up naming the file', (_what, text) => {
      const dir = mkdtempSync(join(tmpdir(), 'devkeys-'));
      try {
        writeFileSync(join(dir, 'development-api-keys'), text, { mode: 0o600 });
        let error: unknown;
        try {
          loadConfig({ DATA_DIR: dir });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).variable).toBe(join(dir, 'development-api-keys'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keys made by a given generator are not kept', () => {
      const dir = mkdtempSync(join(tmpdir(), 'devkeys-'));
      try {
        const c = loadConfig({ DATA_DIR: dir }, () => 'generated-key-0123456789', devRing);
        expect(c.devApiKeysPath).toBeUndefined();
        expect(existsSync(join(dir, 'development-api-keys'))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keeps the development key ring under the data directory: made once, then read', () => {
      const dir = mkdtempSync(join(tmpdir(), 'ring-'));
      try {
        const first = loadConfig({ DATA_DIR: dir });
        const again = loadConfig({ DATA_DIR: dir });
        expect(first.devKeyRingPath).toBe(join(dir, 'data-encryption-keys'));
        expect(again.dataEncryptionKeys).toEqual(first.dataEncryptionKeys);
        expect(statSync(join(dir, 'data-encryption-keys')).mode & 0o077).toBe(0);
        expect(readFileSync(join(dir, 'data-encryption-keys'), 'utf8')).toMatch(
          /^[\w-]+:[A-Za-z0-9+/]+=*\n$/,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

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

  // #24 item 6: a trusted range that holds ordinary clients lets them choose their own address.
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
    expect(c.rateLimits).toEqual({ perKeyRps: 50, publicPerIpRps: 10, unauthenticatedPerIpRps: 5 });
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
  });

  it('has HTTP server limits with defaults, set from the environment (#24 item 7)', () => {
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

  it('keeps rate-limit counters in memory unless REDIS_URL names a redis:// or rediss:// server (#26)', () => {
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

describe('two gateway shops', () => {
  it('single shop: without GATEWAY_PAYOUT_* the payment shop also pays out, as before', () => {
    const c = loadConfig(real);
    expect(c.gateway.shops).toEqual({
      payment: { shopId: 42, secretKey: 's3cr3t-value' },
      payout: { shopId: 42, secretKey: 's3cr3t-value' },
    });
  });

  it('takes an agent shop with its own secret', () => {
    const c = loadConfig({
      ...real,
      GATEWAY_PAYOUT_SHOP_ID: '43',
      GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t',
    });
    expect(c.gateway.shops.payment).toEqual({ shopId: 42, secretKey: 's3cr3t-value' });
    expect(c.gateway.shops.payout).toEqual({ shopId: 43, secretKey: 'agent-s3cr3t' });
  });

  it.each([
    [{ GATEWAY_PAYOUT_SHOP_ID: '43' }, 'GATEWAY_PAYOUT_SECRET_KEY'],
    [{ GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' }, 'GATEWAY_PAYOUT_SHOP_ID'],
    [
      { GATEWAY_PAYOUT_SHOP_ID: 'x', GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' },
      'GATEWAY_PAYOUT_SHOP_ID',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '42', GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' },
      'GATEWAY_PAYOUT_SECRET_KEY',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '43', GATEWAY_PAYOUT_SECRET_KEY: 'sandbox-payout-secret-key' },
      'GATEWAY_PAYOUT_SECRET_KEY',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '43', GATEWAY_PAYOUT_SECRET_KEY: 'sandbox-secret-key' },
      'GATEWAY_PAYOUT_SECRET_KEY',
    ],
    [
      { GATEWAY_PAYOUT_SHOP_ID: '1002', GATEWAY_PAYOUT_SECRET_KEY: 'agent-s3cr3t' },
      'GATEWAY_PAYOUT_SHOP_ID',
    ],
  ])('both or neither, one secret per shop id: %j → one line naming %s', (env, variable) => {
    const e = errorOf({ ...real, ...env });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(variable);
    expect(e.message.split('\n')).toHaveLength(1);
    expect(e.message).not.toContain('agent-s3cr3t');
    expect(e.message).not.toContain('s3cr3t-value');
  });

  it('accepts the payment shop named again as the agent shop with the same secret', () => {
    const c = loadConfig({
      ...real,
      GATEWAY_PAYOUT_SHOP_ID: '42',
      GATEWAY_PAYOUT_SECRET_KEY: 's3cr3t-value',
    });
    expect(c.gateway.shops.payout).toEqual(c.gateway.shops.payment);
  });

  it('sandbox mode: a separate agent shop by default, configurable, or one shop for both', () => {
    const c = loadConfig({});
    expect(c.gateway.shops.payment).toEqual({ shopId: 1001, secretKey: 'sandbox-secret-key' });
    expect(c.gateway.shops.payout).toEqual({
      shopId: 1002,
      secretKey: 'sandbox-payout-secret-key',
    });
    expect(c.sandbox).toMatchObject({
      payoutShopId: 1002,
      payoutSecretKey: 'sandbox-payout-secret-key',
    });

    const own = loadConfig({ SANDBOX_PAYOUT_SHOP_ID: '7', SANDBOX_PAYOUT_SECRET_KEY: 'seven' });
    expect(own.gateway.shops.payout).toEqual({ shopId: 7, secretKey: 'seven' });

    const one = loadConfig({ SANDBOX_PAYOUT_SHOP_ID: '1001' });
    expect(one.gateway.shops.payout).toEqual(one.gateway.shops.payment);
    expect(
      errorOf({ SANDBOX_PAYOUT_SHOP_ID: '1001', SANDBOX_PAYOUT_SECRET_KEY: 'other' }).variable,
    ).toBe('SANDBOX_PAYOUT_SECRET_KEY');
    expect(
      errorOf({ SANDBOX_SECRET_KEY: 'same', SANDBOX_PAYOUT_SECRET_KEY: 'same' }).variable,
    ).toBe('SANDBOX_PAYOUT_SECRET_KEY');
  });

  it('IDEMPOTENCY_CONFLICT_LIMIT: 3 by default, a whole number from 1, one line naming it otherwise', () => {
    expect(loadConfig(real).idempotencyConflictLimit).toBe(3);
    expect(loadConfig({ ...real, IDEMPOTENCY_CONFLICT_LIMIT: '5' }).idempotencyConflictLimit).toBe(
      5,
    );
    for (const bad of ['0', '-1', 'three', '2.5']) {
      const e = errorOf({ ...real, IDEMPOTENCY_CONFLICT_LIMIT: bad });
      expect(e.variable).toBe('IDEMPOTENCY_CONFLICT_LIMIT');
      expect(e.message.split('\n')).toHaveLength(1);
    }
  });
});

describe('REPORT_TIMEZONE', () => {
  it('defaults to UTC and keeps an IANA name in its canonical spelling', () => {
    expect(loadConfig(real).reportTimeZone).toBe('UTC');
    expect(loadConfig({ ...real, REPORT_TIMEZONE: '' }).reportTimeZone).toBe('UTC');
    expect(loadConfig({ ...real, REPORT_TIMEZONE: 'Europe/Moscow' }).reportTimeZone).toBe(
      'Europe/Moscow',
    );
    expect(loadConfig({ ...real, REPORT_TIMEZONE: 'europe/moscow' }).reportTimeZone).toBe(
      'Europe/Moscow',
    );
    expect(loadConfig({ ...real, REPORT_TIMEZONE: 'Etc/GMT-3' }).reportTimeZone).toBe('Etc/GMT-3');
  });

  // Offsets and POSIX strings are refused: PostgreSQL reads `UTC+3` as three hours WEST of UTC.
  it.each([
    'Mars/Phobos',
    'UTC+3',
    '+03:00',
    '03:00',
    'Europe/Moscow; DROP TABLE invoices',
    'Europe/../Moscow',
    'Europe/Moscow\nx',
    `Europe/${'x'.repeat(80)}`,
  ])('refuses REPORT_TIMEZONE=%j with one line naming it', (value) => {
    const e = errorOf({ ...real, REPORT_TIMEZONE: value });
    expect(e.variable).toBe('REPORT_TIMEZONE');
    expect(e.message.split('\n')).toHaveLength(1);
  });
});

describe('retention settings (#26)', () => {
  it('has the documented defaults and takes whole days', () => {
    expect(loadConfig(real).retention).toEqual({
      deliveriesDays: 30,
      notificationsDays: 180,
      eventsDays: 90,
    });
    expect(
      loadConfig({
        ...real,
        RETENTION_DELIVERIES_DAYS: '7',
        RETENTION_NOTIFICATIONS_DAYS: '365',
        RETENTION_EVENTS_DAYS: ' 14 ',
      }).retention,
    ).toEqual({ deliveriesDays: 7, notificationsDays: 365, eventsDays: 14 });
  });

  it.each([
    ['RETENTION_DELIVERIES_DAYS', '0'],
    ['RETENTION_DELIVERIES_DAYS', '-1'],
    ['RETENTION_NOTIFICATIONS_DAYS', '1.5'],
    ['RETENTION_NOTIFICATIONS_DAYS', '30d'],
    ['RETENTION_EVENTS_DAYS', '0x10'],
    ['RETENTION_EVENTS_DAYS', '1e3'],
    ['RETENTION_EVENTS_DAYS', '99999999'],
    ['RETENTION_DELIVERIES_DAYS', '３０'],
  ])('refuses %s=%s with one line naming it', (name, value) => {
    const e = errorOf({ ...real, [name]: value });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(name);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('refuses a feed retention no longer than the webhook retry window', () => {
    // 3 days of retries by default: a 3-day feed would prune events still being pushed.
    const e = errorOf({ ...real, RETENTION_EVENTS_DAYS: '3' });
    expect(e.variable).toBe('RETENTION_EVENTS_DAYS');
    expect(e.message).toContain('SHOP_WEBHOOK_RETRY_FOR_S');
    expect(
      loadConfig({ ...real, RETENTION_EVENTS_DAYS: '3', SHOP_WEBHOOK_RETRY_FOR_S: '86400' })
        .retention.eventsDays,
    ).toBe(3);
  });
});

describe('loadConfig: payout approval thresholds (#27)', () => {
  it('parses per-currency thresholds exactly; unset or empty is none', () => {
    const c = loadConfig({
      ...real,
      PAYOUT_APPROVAL_THRESHOLD: '643:50000.00, 840:1000.00',
      PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:200000.00000001',
    });
    expect(c.payoutApproval.single.get(643)?.toString()).toBe('50000.00');
    expect(c.payoutApproval.single.get(840)?.toString()).toBe('1000.00');
    expect(c.payoutApproval.dual.get(643)?.toString()).toBe('200000.00000001');
    expect(c.payoutApproval.dual.has(840)).toBe(false);
    expect(loadConfig(real).payoutApproval.single.size).toBe(0);
    expect(loadConfig({ ...real, PAYOUT_APPROVAL_THRESHOLD: ' ' }).payoutApproval.single.size).toBe(
      0,
    );
  });

  it.each([
    ['PAYOUT_APPROVAL_THRESHOLD', '643=50000'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:5e4'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:-1'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:0'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:1,643:2'],
    ['PAYOUT_APPROVAL_THRESHOLD', 'RUB:1000'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:1000,'],
    ['PAYOUT_APPROVAL_THRESHOLD', '643:1 000'],
    ['PAYOUT_APPROVAL_THRESHOLD', '0:1000'],
    ['PAYOUT_DUAL_APPROVAL_THRESHOLD', '643:NaN'],
    ['PAYOUT_DUAL_APPROVAL_THRESHOLD', '643:1000.123456789'],
  ])('refuses %s=%j with one line naming it', (name, value) => {
    const e = errorOf({ ...real, [name]: value });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.variable).toBe(name);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('refuses a dual threshold below the single one of the same currency', () => {
    const e = errorOf({
      ...real,
      PAYOUT_APPROVAL_THRESHOLD: '643:50000',
      PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:49999.99,840:10',
    });
    expect(e.variable).toBe('PAYOUT_DUAL_APPROVAL_THRESHOLD');
    expect(e.message).toContain('643');
    // Equal is allowed: at that amount two approvals.
    expect(
      loadConfig({
        ...real,
        PAYOUT_APPROVAL_THRESHOLD: '643:50000',
        PAYOUT_DUAL_APPROVAL_THRESHOLD: '643:50000.00',
      })
        .payoutApproval.dual.get(643)
        ?.toString(),
    ).toBe('50000.00');
  });
});

describe('payout controls (#27): PAYOUT_DAILY_CAP, PAYOUT_RECIPIENT_DAILY_CAP, BALANCE_CACHE_S', () => {
  it('defaults to no caps and a 30 s balance read', () => {
    const c = loadConfig(real).payoutControls;
    expect(c.dailyCap.size).toBe(0);
    expect(c.recipientDailyCap.size).toBe(0);
    expect(c.balanceCacheS).toBe(30);
  });

  it('parses caps per currency exactly (numeric or alphabetic code), 0 turns the balance check off', () => {
    const c = loadConfig({
      ...real,
      PAYOUT_DAILY_CAP: '643:50000.00, 840:1000.00',
      PAYOUT_RECIPIENT_DAILY_CAP: 'rub:0.10,JPY:5000',
      BALANCE_CACHE_S: '0',
    }).payoutControls;
    expect([...c.dailyCap].map(([k, v]) => [k, v.toString()])).toEqual([
      [643, '50000.00'],
      [840, '1000.00'],
    ]);
    expect([...c.recipientDailyCap].map(([k, v]) => [k, v.toString()])).toEqual([
      [643, '0.10'],
      [392, '5000'],
    ]);
    expect(c.balanceCacheS).toBe(0);
  });

  it.each([
    ['PAYOUT_DAILY_CAP', '643=100.00', /PAYOUT_DAILY_CAP entries must be currency:amount/],
    ['PAYOUT_DAILY_CAP', '999999:100.00', /PAYOUT_DAILY_CAP entries must be currency:amount/],
    ['PAYOUT_DAILY_CAP', 'ABC:100.00', /PAYOUT_DAILY_CAP entries must be currency:amount/],
    ['PAYOUT_DAILY_CAP', '643:1e5', /PAYOUT_DAILY_CAP amount of currency 643 must be a positive/],
    ['PAYOUT_DAILY_CAP', '643:-1', /must be a positive decimal/],
    ['PAYOUT_DAILY_CAP', '643:0', /must be a positive decimal/],
    ['PAYOUT_DAILY_CAP', '643:100.001', /fraction digits/],
    ['PAYOUT_RECIPIENT_DAILY_CAP', 'JPY:10.5', /PAYOUT_RECIPIENT_DAILY_CAP .*whole number/],
    ['PAYOUT_RECIPIENT_DAILY_CAP', '643:1,RUB:2', /names currency 643 twice/],
    ['BALANCE_CACHE_S', '-1', /BALANCE_CACHE_S must be a whole number/],
    ['BALANCE_CACHE_S', '1.5', /BALANCE_CACHE_S must be a whole number/],
  ])('%s=%s stops start-up with one line naming it', (name, value, message) => {
    const e = errorOf({ ...real, [name]: value });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('\n');
  });
});
