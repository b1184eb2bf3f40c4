import { Client } from 'pg';
import { auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * No database connection is held across a gateway call (atomic phases): with a pool of two
 * connections and a gateway answering every create in 2 s, twenty concurrent creates finish
 * together in about one gateway answer, not ten in a row, and /health/ready keeps answering
 * while they wait. A repeat of a create still waiting for its answer waits and replays it.
 */
let ctx: TestContext;
let db: Client;
let seq = 0;
const orderId = (): string => `conn-${Date.now()}-${++seq}`;
const GATEWAY_DELAY_MS = 2000;

async function slowGateway(path: string, times: number, delayMs = GATEWAY_DELAY_MS): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ path, fault: 'timeout_done', times, delayMs }),
  });
  expect(res.status).toBe(200);
}

function invoiceBody(shopOrderId: string): Record<string, unknown> {
  return { shopOrderId, amount: '100.10', currency: 643, payway: PAYMENT.card, description: 'x' };
}

beforeAll(async () => {
  ctx = await startTestApp({
    env: { DB_POOL_SIZE: '2', GATEWAY_TIMEOUT_MS: '15000', CREATE_WAIT_MS: '3000' },
  });
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

it('pool of 2, gateway answering in 2 s: 20 concurrent creates finish together (well under the 20 s a held connection per call would take), /health/ready answers meanwhile', async () => {
  // Warm the payway cache so every create goes straight to its insert.
  await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
  await slowGateway('invoice/create', 20);
  const ids = Array.from({ length: 20 }, orderId);
  const started = Date.now();
  const creates = ids.map((id) =>
    ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send(invoiceBody(id))
      .then((r) => ({ status: r.status, body: r.body as Record<string, unknown>, at: Date.now() })),
  );
  // While every create waits for the gateway, readiness (a database query) still answers.
  await new Promise((r) => setTimeout(r, GATEWAY_DELAY_MS / 2));
  const readyStarted = Date.now();
  const ready = await ctx.http.get('/health/ready');
  const readyMs = Date.now() - readyStarted;
  const results = await Promise.all(creates);
  const elapsed = Date.now() - started;

  expect(ready.status).toBe(200);
  // It did not queue behind the creates (that would take the gateway's 2 s): one query takes
  // milliseconds, tens on a loaded machine, and the bound is far more than five times that.
  expect(readyMs).toBeLessThan(GATEWAY_DELAY_MS);
  for (const r of results) {
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('awaiting_payer');
  }
  // Held connections would serialise them: 20 / 2 × 2 s = 20 s. Together they take one gateway
  // delay (2 s); the bound keeps five times that as margin for a busy machine.
  expect(elapsed).toBeLessThan(5 * GATEWAY_DELAY_MS);
  const rows = await db.query(
    `SELECT count(*)::int AS n FROM invoices WHERE shop_order_id = ANY($1) AND call_lease_until IS NULL`,
    [ids],
  );
  expect(rows.rows[0].n).toBe(20);
}, 60000);

it('a repeat sent while the first copy waits for the gateway waits and replays it: one gateway call', async () => {
  await slowGateway('invoice/create', 1, 1000);
  const id = orderId();
  // supertest sends on then(): start the first copy now.
  const first = ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send(invoiceBody(id))
    .then((r) => r);
  await new Promise((r) => setTimeout(r, 500));
  const repeat = ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send(invoiceBody(id))
    .then((r) => r);
  const [a, b] = await Promise.all([first, repeat]);
  expect(a.status).toBe(201);
  expect(b.status).toBe(201);
  expect(b.body).toEqual(a.body);
  const calls = ctx.sandbox.state.requests.filter(
    (r) => r.path === 'invoice/create' && (r.body as Record<string, unknown>).shop_order_id === id,
  );
  expect(calls).toHaveLength(1);
}, 60000);

it('a repeat still waiting after CREATE_WAIT_MS gets 409 request-in-progress with Retry-After, then the answer', async () => {
  await slowGateway('invoice/create', 1, 5000);
  const id = orderId();
  // supertest sends on then(): start the first copy now.
  const first = ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send(invoiceBody(id))
    .then((r) => r);
  await new Promise((r) => setTimeout(r, 300));
  const repeat = await ctx.http.post('/api/v1/invoices').set(auth()).send(invoiceBody(id));
  expect(repeat.status).toBe(409);
  expect(repeat.headers['content-type']).toContain('application/problem+json');
  expect(repeat.headers['retry-after']).toMatch(/^\d+$/);
  expect(repeat.body.type).toMatch(/request-in-progress$/);
  const answered = await first;
  expect(answered.status).toBe(201);
  const later = await ctx.http.post('/api/v1/invoices').set(auth()).send(invoiceBody(id));
  expect(later.status).toBe(201);
  expect(later.body).toEqual(answered.body);
  const calls = ctx.sandbox.state.requests.filter(
    (r) => r.path === 'invoice/create' && (r.body as Record<string, unknown>).shop_order_id === id,
  );
  expect(calls).toHaveLength(1);
}, 60000);
