import { admin, auth, startTestApp, type TestContext } from '../support/app';
import { RedisRelay, runPrefix, startTestRedis, type TestRedis } from '../support/redis';

/**
 * Limits shared across instances. Two instances of the service on one database and one
 * real Redis count a key once; with the in-memory store (or Redis unreachable) each instance
 * counts on its own and keeps serving. Limits: 2 a second, i.e. 4 per two-second window.
 */

const LIMITS = { RATE_LIMIT_PER_KEY_RPS: '2', RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '1', TRUST_PROXY: '1' };

async function metric(ctx: TestContext, line: string): Promise<number | undefined> {
  const text = (await ctx.http.get('/metrics')).text;
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.split(' ')[1]);
}

/** `n` requests with a key (the shop's unless given), alternating between the instances; the statuses in order. */
async function alternate(instances: TestContext[], n: number, key: Record<string, string> = auth()): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await instances[i % instances.length].http.get('/api/v1/invoices').set(key);
    if (res.status === 429) {
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(2);
      expect(res.body).toMatchObject({ status: 429, type: expect.stringMatching(/rate-limited$/) });
    }
    statuses.push(res.status);
  }
  return statuses;
}

const count = (statuses: number[], status: number): number => statuses.filter((s) => s === status).length;

async function readiness(ctx: TestContext): Promise<{ status: number; limits: unknown; body: Record<string, unknown> }> {
  const res = await ctx.http.get('/health/ready');
  const body = res.body as { details?: { rateLimits?: { limits?: unknown } } };
  return { status: res.status, limits: body.details?.rateLimits?.limits, body: res.body as Record<string, unknown> };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Two instances of the service on one database (and one sandbox), with the same settings. */
async function twoInstances(env: Record<string, string>): Promise<[TestContext, TestContext]> {
  const a = await startTestApp({ env });
  const b = await startTestApp({ env, databaseUrl: a.databaseUrl, sandbox: a.sandbox });
  return [a, b];
}

async function closeAll(...instances: Array<TestContext | undefined>): Promise<void> {
  for (const ctx of instances.reverse()) await ctx?.close();
}

describe('rate limits shared across instances through Redis', () => {
  let redis: TestRedis;
  let a: TestContext;
  let b: TestContext;
  const prefix = runPrefix('shared');
  beforeAll(async () => {
    redis = await startTestRedis();
    [a, b] = await twoInstances({ ...LIMITS, REDIS_URL: redis.url, RATE_LIMIT_REDIS_PREFIX: prefix });
  });
  afterAll(async () => {
    await closeAll(a, b);
    await redis?.drop(prefix);
    await redis?.close();
  });

  it('limits a key once across two instances: 8 requests alternating, 4 pass (not 8), the rest 429 with Retry-After; counted', async () => {
    const before = (await metric(a, 'rate_limited_total{limit="key"}')) ?? 0;
    const statuses = await alternate([a, b], 8);
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(count(statuses, 429)).toBe(4);
    // Both instances refuse, not only the one whose memory saw most requests.
    expect(statuses.slice(4)).toEqual([429, 429, 429, 429]);
    expect(await metric(a, 'rate_limited_total{limit="key"}')).toBeGreaterThanOrEqual(before + 4);
    const keys = await redis.keys(prefix);
    expect(keys).toHaveLength(1);
    expect(keys[0].startsWith(`${prefix}:key:`)).toBe(true);
    expect(keys[0].slice(`${prefix}:key:`.length)).toMatch(/^[0-9a-f]{12}$/);
  });

  it('limits a keyless address once across instances, whatever the spelling of the key or path', async () => {
    const spellings = [{}, { Authorization: 'Bearer wrong-key-0123456789abcdef' }, { Authorization: 'bearer' }];
    const paths = ['/api/v1/invoices', '/API/v1/invoices', '/api/v1//payouts'];
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await [a, b][i % 2].http.get(paths[i % 3]).set('X-Forwarded-For', '7.7.7.7').set(spellings[i % 3]);
      statuses.push(res.status);
    }
    expect(count(statuses, 429)).toBe(4);
    expect(statuses.slice(2)).toEqual([429, 429, 429, 429]);
  });

  it('says so in /health/ready and sets rate_limit_store_up to 1', async () => {
    for (const ctx of [a, b]) {
      const ready = await readiness(ctx);
      expect([ready.status, ready.limits, ready.body.status]).toEqual([200, 'shared (redis)', 'ok']);
    }
    expect(await metric(a, 'rate_limit_store_up')).toBe(1);
  });

  it('counts under RATE_LIMIT_REDIS_PREFIX: an instance with another prefix on the same Redis counts apart', async () => {
    const other = runPrefix('other');
    const c = await startTestApp({ env: { ...LIMITS, REDIS_URL: redis.url, RATE_LIMIT_REDIS_PREFIX: other }, databaseUrl: a.databaseUrl, sandbox: a.sandbox });
    try {
      // a and b use this key's window up; c counts under its own prefix, untouched.
      expect(count(await alternate([a, b], 8), 429)).toBeGreaterThanOrEqual(4);
      expect(await alternate([c], 4)).toEqual([200, 200, 200, 200]);
      expect((await redis.keys(other)).length).toBe(1);
    } finally {
      await c.close();
      await redis.drop(other);
    }
  });
});

describe('rate limits in memory (no REDIS_URL)', () => {
  let a: TestContext;
  let b: TestContext;
  beforeAll(async () => {
    [a, b] = await twoInstances(LIMITS);
  });
  afterAll(() => closeAll(a, b));

  it('each instance counts on its own: 8 requests alternating all pass, then each instance refuses', async () => {
    expect(await alternate([a, b], 8)).toEqual(Array(8).fill(200));
    expect(await alternate([a, b], 2)).toEqual([429, 429]);
  });

  it('says per-instance (memory) in /health/ready; rate_limit_store_up is 1', async () => {
    const ready = await readiness(a);
    expect([ready.status, ready.limits]).toEqual([200, 'per-instance (memory)']);
    expect(await metric(a, 'rate_limit_store_up')).toBe(1);
  });
});

describe('Redis unreachable, then back', () => {
  let redis: TestRedis;
  let relay: RedisRelay;
  let a: TestContext;
  let b: TestContext;
  const prefix = runPrefix('outage');
  beforeAll(async () => {
    redis = await startTestRedis();
    relay = new RedisRelay(redis.url);
    // A port that refuses connections: Redis is down before the service starts.
    await relay.up();
    await relay.down();
    [a, b] = await twoInstances({ ...LIMITS, REDIS_URL: relay.url, RATE_LIMIT_REDIS_PREFIX: prefix });
  });
  afterAll(async () => {
    await closeAll(a, b);
    await relay?.down();
    await redis?.drop(prefix);
    await redis?.close();
  });

  it('starts and serves with per-instance limits; /health/ready is 200 and says so; rate_limit_store_up is 0', async () => {
    expect(await alternate([a, b], 8)).toEqual(Array(8).fill(200));
    expect(await alternate([a, b], 2)).toEqual([429, 429]);
    for (const ctx of [a, b]) {
      const ready = await readiness(ctx);
      expect([ready.status, ready.body.status, ready.limits]).toEqual([200, 'ok', 'per-instance (redis unreachable)']);
    }
    expect(await metric(a, 'rate_limit_store_up')).toBe(0);
    expect(await redis.keys(prefix)).toEqual([]);
  });

  it('uses Redis again once it answers: limits shared, readiness and gauge back', async () => {
    await relay.up();
    await until('readiness to say shared', async () => (await readiness(a)).limits === 'shared (redis)' && (await readiness(b)).limits === 'shared (redis)');
    expect(await metric(a, 'rate_limit_store_up')).toBe(1);
    // Redis holds no count of this key yet (the outage's counts stayed in memory): one fresh shared window.
    const statuses = await alternate([a, b], 8);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    expect((await redis.keys(prefix)).length).toBe(1);
  });

  it('keeps serving when Redis hangs (connection open, no answer) and when it drops, and says so', async () => {
    relay.stall();
    // The admin key: a window of its own, untouched so far.
    expect(await alternate([a, b], 4, admin())).toEqual([200, 200, 200, 200]);
    await until('readiness to say unreachable', async () => (await readiness(a)).limits === 'per-instance (redis unreachable)');
    expect((await readiness(a)).status).toBe(200);
    expect(await metric(a, 'rate_limit_store_up')).toBe(0);
    await relay.down();
    expect(await alternate([a, b], 2, admin())).toEqual([200, 200]);
    expect((await readiness(b)).limits).toBe('per-instance (redis unreachable)');
  });
});
