import { Client } from 'pg';
import { clock, moveClock } from '../../src/common/clock';
import { startTestApp, TestContext } from '../support/app';

/**
 * Outside sandbox mode the clock is the system clock: no route moves it (the
 * service's own port and the gateway's both answer 404), no setting does, and a database a
 * sandbox run left moved is set back to the system clock at start-up.
 */
let ctx: TestContext;

beforeAll(async () => {
  ctx = await startTestApp({
    // Names a moved clock might be looked for under: none is a setting.
    env: { SANDBOX_CLOCK_OFFSET_S: '86400', CLOCK_OFFSET_S: '86400', FAKE_NOW: '2030-01-01T00:00:00Z' },
  });
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

it('has no clock routes, on the service nor on the gateway', async () => {
  for (const path of ['/sandbox/clock', '/api/v1/sandbox/clock']) {
    expect((await ctx.http.get(path)).status).toBe(404);
    expect((await ctx.http.post(`${path}/advance`).send({ seconds: 60 })).status).toBe(404);
  }
  expect((await fetch(`${ctx.sandbox.origin}/sandbox/clock`)).status).toBe(404);
  const advance = await fetch(`${ctx.sandbox.origin}/sandbox/clock/advance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seconds: 60 }),
  });
  expect(advance.status).toBe(404);
});

it('reads the system clock in TypeScript and in SQL, and nothing moves it', async () => {
  expect(clock.movable()).toBe(false);
  expect(clock.offsetSeconds()).toBe(0);
  expect(Math.abs(clock.now() - Date.now())).toBeLessThan(5);
  expect(() => moveClock(60)).toThrow('the clock only moves in sandbox mode');
  const db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    const row = (await db.query(`SELECT clock_now() = now() AS same`)).rows[0] as { same: boolean };
    expect(row.same).toBe(true);
    expect((await ctx.http.get('/health')).body).toEqual({ status: 'ok' });
  } finally {
    await db.end();
  }
});

it('sets a database left moved by a sandbox run back to the system clock at start-up', async () => {
  const db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    await db.query(`INSERT INTO service_clock (id, offset_seconds) VALUES (true, 3600)
                    ON CONFLICT (id) DO UPDATE SET offset_seconds = 3600`);
    await db.query(`CREATE OR REPLACE FUNCTION clock_now() RETURNS timestamptz LANGUAGE sql STABLE AS $$SELECT now() + interval '1 hour'$$`);
    const again = await startTestApp({ databaseUrl: ctx.databaseUrl, sandbox: ctx.sandbox });
    try {
      const row = (await db.query(`SELECT clock_now() = now() AS same, (SELECT offset_seconds FROM service_clock) AS offset`)).rows[0] as {
        same: boolean;
        offset: number;
      };
      expect(row).toEqual({ same: true, offset: 0 });
    } finally {
      await again.close();
    }
  } finally {
    await db.end();
  }
}, 60_000);
