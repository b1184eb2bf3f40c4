import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * A create's answer is written in one statement only when the row is still the version
 * phase 1 inserted (`xmin`); a row touched while the gateway call was in flight takes the locked
 * path, which answers with the row as it is now. Either way: one shop event, carrying the view a
 * GET returns.
 */
type Json = Record<string, unknown>;

let ctx: TestContext;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
}, 120000);

afterAll(async () => {
  ctx.sandbox.state.settings.latencyMs = 0;
  await db?.end();
  await ctx?.close();
});

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function shopEvents(shopOrderId: string): Promise<Json[]> {
  const r = await db.query(
    `SELECT type, sequence, data FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND type IS NOT NULL ORDER BY id`,
    [shopOrderId],
  );
  return r.rows as Json[];
}

async function createWhile(touch: ((shopOrderId: string) => Promise<void>) | null) {
  const shopOrderId = `ver-${randomUUID()}`;
  ctx.sandbox.state.settings.latencyMs = 400;
  try {
    const answer = ctx.http
      .post('/api/v1/invoices')
      .set(auth())
      .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.card, description: 'Tea' })
      .then((r) => r);
    const inserted = await until(
      async () => (await db.query(`SELECT status FROM invoices WHERE shop_order_id = $1`, [shopOrderId])).rows,
      (rows) => rows.length === 1,
    );
    expect(inserted).toEqual([{ status: 'pending' }]);
    if (touch) await touch(shopOrderId);
    const res = await answer;
    return { shopOrderId, res };
  } finally {
    ctx.sandbox.state.settings.latencyMs = 0;
  }
}

it('untouched: the answer, the row and its one event agree', async () => {
  const { shopOrderId, res } = await createWhile(null);
  expect(res.status).toBe(201);
  const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200);
  expect(res.body).toEqual(got.body);
  expect(await shopEvents(shopOrderId)).toEqual([
    { type: `invoice.${String(res.body.status)}`, sequence: 1, data: got.body },
  ]);
});

it('touched while the call was in flight: the answer is the row as it is now, not as phase 1 wrote it', async () => {
  const { shopOrderId, res } = await createWhile(async (id) => {
    await db.query(`UPDATE invoices SET metadata = '{"touched":"meanwhile"}' WHERE shop_order_id = $1`, [id]);
  });
  expect(res.status).toBe(201);
  expect(res.body.metadata).toEqual({ touched: 'meanwhile' });
  const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}`).set(auth()).expect(200);
  expect(got.body.metadata).toEqual({ touched: 'meanwhile' });
  expect(got.body.status).toBe(res.body.status);
  const events = await shopEvents(shopOrderId);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: `invoice.${String(res.body.status)}`, sequence: 1 });
  expect((events[0].data as Json).metadata).toEqual({ touched: 'meanwhile' });
  // A repeat replays the stored answer.
  const again = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT.card, description: 'Tea' })
    .expect(201);
  expect(again.body).toEqual(res.body);
});
