import { Client } from 'pg';
import { auth, startTestApp, TestContext } from '../support/app';
import { PAYOUT } from '../support/payways';

/**
 * A batch row cancelled before it was sent is the event `payout.cancelled` whose data is a
 * payout view like every other payout event's (PayoutEvent: the answer validator holds the feed
 * to the document): the row as asked for, `cancelled`, never sent, its account masked.
 */
const CARD = '4111111111111111';
let ctx: TestContext;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

it('payout.cancelled of a row never sent carries the payout view (valid PayoutEvent), the account masked', async () => {
  const tag = `cev-${Date.now()}`;
  const rows = [1, 2].map((n) => ({
    shopPaymentId: `${tag}-${n}`,
    amount: '100.5',
    amountType: 'ps_amount',
    shopCurrency: 'RUB',
    payway: PAYOUT.card,
    account: CARD,
    metadata: { employee: `e-${n}` },
  }));
  expect((await ctx.http.post('/api/v1/payouts/batches').set(auth()).send({ batchId: tag, rows })).status).toBe(202);
  // The runner is off in tests: both rows are still to send when the cancel comes.
  const cancel = await ctx.http.post(`/api/v1/payouts/batches/${tag}/cancel`).set(auth()).expect(200);
  expect(cancel.body.cancelledNow).toBe(2);
  // The feed's answer is validated against the document (PayoutEvent's data is a PayoutView).
  const feed = await ctx.http
    .get('/api/v1/events')
    .query({ type: 'payout.cancelled', objectId: `${tag}-2` })
    .set(auth())
    .expect(200);
  expect(feed.body.items).toHaveLength(1);
  const data = feed.body.items[0].data as Record<string, unknown>;
  expect(data).toMatchObject({
    shopPaymentId: `${tag}-2`,
    status: 'cancelled',
    withdrawId: null,
    gatewayStatus: null,
    amount: '100.50',
    amountType: 'ps_amount',
    shopCurrency: 643,
    shopCurrencyCode: 'RUB',
    payway: PAYOUT.card,
    account: '411111******1111',
    needsAttention: false,
    metadata: { employee: 'e-2' },
  });
  // The same fields as a payout's GET answers.
  const single = `${tag}-single`;
  await ctx.http
    .post('/api/v1/payouts')
    .set(auth())
    .send({ ...rows[0], shopPaymentId: single })
    .expect(202);
  const got = await ctx.http.get(`/api/v1/payouts/${single}`).set(auth()).expect(200);
  expect(Object.keys(data).sort()).toEqual(Object.keys(got.body as object).sort());
  const stored = await db.query(`SELECT data::text AS t FROM events WHERE type = 'payout.cancelled' AND entity_id LIKE $1`, [`${tag}-%`]);
  expect(stored.rows).toHaveLength(2);
  for (const r of stored.rows as Array<{ t: string }>) expect(r.t).not.toContain(CARD);
  // Nothing of the batch was sent.
  expect(
    ctx.sandbox.state.requests.filter(
      (r) => r.path === 'withdraw/create' && String((r.body as Record<string, unknown>).shop_payment_id).startsWith(`${tag}-`) && (r.body as Record<string, unknown>).shop_payment_id !== single,
    ),
  ).toHaveLength(0);
});
