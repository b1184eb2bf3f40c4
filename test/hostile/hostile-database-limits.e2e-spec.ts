import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { auth, startTestApp, TestContext } from '../support/app';
import { newInvoice, sleep } from '../support/hostile';

/**
 * Attacks on the database: a long query, a lock wait, an abandoned transaction and a
 * drained pool are each cut off by their limit, and the service answers after.
 */

describe('database time limits', () => {
  let ctx: TestContext;
  let holder: Client;
  beforeAll(async () => {
    ctx = await startTestApp({
      env: {
        DB_POOL_SIZE: '4',
        DB_POOL_ACQUIRE_TIMEOUT_MS: '400',
        DB_STATEMENT_TIMEOUT_MS: '1500',
        DB_LOCK_TIMEOUT_MS: '500',
        DB_IDLE_IN_TX_TIMEOUT_MS: '1000',
        PUBLIC_BASE_URL: 'https://payments.example',
      },
    });
    holder = new Client({ connectionString: ctx.databaseUrl });
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    await ctx?.close();
  });

  it('a long query is cut off by statement_timeout', async () => {
    const ds = ctx.service.app.get(DataSource);
    const started = Date.now();
    await expect(ds.query('SELECT pg_sleep(10)')).rejects.toMatchObject({ code: '57014' });
    // Cut at DB_STATEMENT_TIMEOUT_MS (1.5 s), not after the 10 s sleep: over five times the limit.
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('a statement stuck behind a row lock is cut off by lock_timeout; the service still answers', async () => {
    const inv = await newInvoice(ctx, { twoStep: true });
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM invoices WHERE shop_order_id = $1 FOR UPDATE', [inv.shopOrderId]);
    const ds = ctx.service.app.get(DataSource);
    const started = Date.now();
    await expect(ds.query('SELECT 1 FROM invoices WHERE shop_order_id = $1 FOR UPDATE', [inv.shopOrderId])).rejects.toMatchObject({ code: '55P03' });
    // Cut at DB_LOCK_TIMEOUT_MS (500 ms), not when the lock is let go: ten times the limit.
    expect(Date.now() - started).toBeLessThan(5000);
    await holder.query('ROLLBACK');
    await ctx.http.get('/health').expect(200);
  });

  it('an abandoned transaction is ended by idle_in_transaction_session_timeout', async () => {
    const ds = ctx.service.app.get(DataSource);
    const runner = ds.createQueryRunner();
    await runner.connect();
    const pid = (await runner.query('SELECT pg_backend_pid() AS pid'))[0].pid as number;
    await runner.startTransaction();
    await runner.query('SELECT 1');
    await sleep(2500);
    const alive = await holder.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid]);
    expect(alive.rows[0].n).toBe(0);
    await runner.release().catch(() => undefined);
  });

  it('with every pooled connection taken, a request fails fast with 503 instead of queueing; then recovers', async () => {
    const ds = ctx.service.app.get(DataSource);
    const taken = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const r = ds.createQueryRunner();
        await r.connect();
        return r;
      }),
    );
    const started = Date.now();
    const res = await ctx.http.get('/api/v1/invoices').set(auth());
    const waited = Date.now() - started;
    await Promise.all(taken.map((r) => r.release()));
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    // Refused at DB_POOL_ACQUIRE_TIMEOUT_MS (400 ms), not queued: over ten times the limit.
    expect(waited).toBeLessThan(5000);
    await ctx.http.get('/api/v1/invoices').set(auth()).expect(200);
  });

  it('sends HSTS when PUBLIC_BASE_URL is https', async () => {
    const res = await ctx.http.get('/health').expect(200);
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
  });
});
