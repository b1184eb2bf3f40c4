import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { openRowsOfOtherShops } from '../../src/database/other-shop-rows';
import { PayoutPoller } from '../../src/payouts/payout-poller';
import { asText, TestShop } from '../../src/sandbox/testing/sandbox-test-kit';
import {
  auth,
  PAYOUT_SECRET,
  PAYOUT_SHOP_ID,
  SECRET,
  SHOP_ID,
  startTestApp,
  type ShopSetup,
  TestContext,
} from '../support/app';
import { PAYMENT, PAYOUT } from '../support/payways';
import { eventually } from '../support/webhook-receiver';

/**
 * Two gateway shops end to end: payments, refunds and payment ways through the payment shop,
 * payouts, payout ways and the balance through the agent shop, each request signed with its own
 * shop's secret, as the sandbox's request log proves (it records whose secret made each
 * signature). The single-shop setting runs the same flows through one shop.
 */

const PAYMENT_WAY = PAYMENT.card;
const PAYOUT_WAY = PAYOUT.card;
const CARD = '4111111111111111';

/** Gateway calls that belong to the agent shop; every other call is the payment shop's. */
const AGENT_PATHS = new Set([
  'shop_output_config/shop',
  'shop_balance',
  'withdraw/try',
  'check_account',
  'withdraw/create',
  'withdraw/status',
  'withdraw/shop_payment_status',
]);


/** The payer presses Pay on the sandbox's page. */
async function payerPays(ctx: TestContext, invoiceId: unknown): Promise<void> {
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/invoices/${String(invoiceId)}/pay`, {
    method: 'POST',
  });
  expect(res.status).toBe(200);
}

/** Pay (one- and two-step), refund, pay out, quote, check an account, list ways, read the balance. */
async function everyFlow(ctx: TestContext): Promise<{
  shopOrderId: string;
  shopRefundId: string;
  shopPaymentId: string;
  balance: { shopId: number; balances: Array<Record<string, unknown>> };
}> {
  for (const direction of ['payment', 'payout']) {
    const ways = await ctx.http
      .get(`/api/v1/payways?direction=${direction}&refresh=true`)
      .set(auth());
    expect(ways.status).toBe(200);
  }
  const shopOrderId = `two-${randomUUID()}`;
  const quote = await ctx.http
    .post('/api/v1/invoices/quote')
    .set(auth())
    .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT_WAY });
  expect(quote.status).toBe(200);
  const created = await ctx.http
    .post('/api/v1/invoices')
    .set(auth())
    .send({ shopOrderId, amount: '100.00', currency: 643, payway: PAYMENT_WAY });
  expect(created.status).toBe(201);
  await payerPays(ctx, created.body.invoiceId);
  await eventually(async () => {
    const got = await ctx.http.get(`/api/v1/invoices/${shopOrderId}?refresh=true`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });

  const held = `two-held-${randomUUID()}`;
  const hold = await ctx.http.post('/api/v1/invoices').set(auth()).send({
    shopOrderId: held,
    amount: '50.00',
    currency: 643,
    payway: PAYMENT_WAY,
    twoStep: true,
  });
  expect(hold.status).toBe(201);
  await payerPays(ctx, hold.body.invoiceId);
  await eventually(async () => {
    const got = await ctx.http.get(`/api/v1/invoices/${held}?refresh=true`).set(auth());
    expect(got.body.status).toBe('held');
  });
  expect((await ctx.http.post(`/api/v1/invoices/${held}/charge`).set(auth())).status).toBe(200);

  const shopRefundId = `two-r-${randomUUID()}`;
  const refund = await ctx.http
    .post(`/api/v1/invoices/${shopOrderId}/refunds`)
    .set(auth())
    .send({ shopRefundId, amount: '40.00' });
  expect(refund.status).toBe(201);
  await eventually(async () => {
    const list = await ctx.http
      .get(`/api/v1/invoices/${shopOrderId}/refunds?refresh=true`)
      .set(auth());
    expect(list.body.items[0]).toMatchObject({ shopRefundId, status: 'SUCCESS' });
  });

  const payoutTerms = {
    amount: '1000.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT_WAY,
  };
  expect((await ctx.http.post('/api/v1/payouts/quote').set(auth()).send(payoutTerms)).status).toBe(
    200,
  );
  const check = await ctx.http
    .post('/api/v1/payouts/check-account')
    .set(auth())
    .send({ payway: PAYOUT_WAY, amount: '1000.00', account: CARD });
  expect(check.body.exists).toBe(true);
  const shopPaymentId = `two-p-${randomUUID()}`;
  const payout = await ctx.http
    .post('/api/v1/payouts')
    .set(auth())
    .send({ shopPaymentId, account: CARD, ...payoutTerms });
  expect(payout.status).toBe(202);
  await eventually(async () => {
    await ctx.service.app.get(PayoutPoller).runOnce();
    const got = await ctx.http.get(`/api/v1/payouts/${shopPaymentId}`).set(auth());
    expect(got.body.status).toBe('succeeded');
  });

  const balance = await ctx.http.get('/api/v1/balance').set(auth());
  expect(balance.status).toBe(200);
  return { shopOrderId, shopRefundId, shopPaymentId, balance: balance.body };
}

describe.each<[ShopSetup, number, string]>([
  ['two', PAYOUT_SHOP_ID, PAYOUT_SECRET],
  ['single', SHOP_ID, SECRET],
])('%s gateway shop(s)', (shops, agentId, agentSecret) => {
  let ctx: TestContext;
  let db: Client;

  beforeAll(async () => {
    ctx = await startTestApp({ shops, env: { PAYOUT_POLL_INTERVAL_S: '0.2' } });
    db = new Client({ connectionString: ctx.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await ctx?.close();
  });

  it('every gateway request carries the shop of its call and a signature made with that shop’s secret', async () => {
    ctx.sandbox.state.requests = [];
    const { shopOrderId, shopRefundId, shopPaymentId, balance } = await everyFlow(ctx);

    const log = ctx.sandbox.state.requests;
    const paths = new Set(log.map((r) => r.path));
    for (const p of [
      'shop_input_config/shop',
      'shop_output_config/shop',
      'invoice/try',
      'invoice/create',
      'invoice/hold',
      'invoice/charge',
      'invoice/check',
      'invoice/create-refund',
      'invoice/get-refunds',
      'withdraw/try',
      'check_account',
      'withdraw/create',
      'shop_balance',
    ]) {
      expect(paths).toContain(p);
    }
    for (const r of log) {
      const expected = AGENT_PATHS.has(r.path) ? agentId : SHOP_ID;
      const body = r.body as Record<string, unknown>;
      expect({
        path: r.path,
        shop_id: Number(asText(body.shop_id)),
        signed_by: r.signed_by,
        result: r.result,
      }).toEqual({
        path: r.path,
        shop_id: expected,
        signed_by: expected,
        result: true,
      });
    }

    // Stored under the shop each object belongs to.
    const shopOf = async (sql: string, id: string): Promise<number> =>
      ((await db.query(sql, [id])).rows[0] as { shop_id: number }).shop_id;
    expect(await shopOf('SELECT shop_id FROM invoices WHERE shop_order_id = $1', shopOrderId)).toBe(
      SHOP_ID,
    );
    expect(
      await shopOf('SELECT shop_id FROM refunds WHERE shop_refund_id = $1', shopRefundId),
    ).toBe(SHOP_ID);
    expect(
      await shopOf('SELECT shop_id FROM payouts WHERE shop_payment_id = $1', shopPaymentId),
    ).toBe(agentId);
    const cache = await db.query(
      'SELECT shop_id, direction FROM payway_configs ORDER BY direction',
    );
    expect(cache.rows).toEqual([
      { shop_id: SHOP_ID, direction: 'payment' },
      { shop_id: agentId, direction: 'payout' },
    ]);

    // The sandbox's notifications, signed by the payment shop, verify and apply.
    await eventually(async () => {
      const n = await db.query(
        `SELECT type, shop_id FROM notifications
          WHERE verified AND status IN ('applied', 'stale') AND (shop_order_id = $1 OR shop_refund_id = $2)`,
        [shopOrderId, shopRefundId],
      );
      expect(new Set(n.rows.map((r: { type: string }) => r.type))).toEqual(
        new Set(['invoice', 'refund']),
      );
      for (const r of n.rows as Array<{ shop_id: number }>) expect(r.shop_id).toBe(SHOP_ID);
    });
    const refused = await db.query('SELECT 1 FROM notifications WHERE NOT verified');
    expect(refused.rows).toEqual([]);

    // The balance is the agent shop's, the one the payout was paid from.
    expect(balance.shopId).toBe(agentId);
    const rub = balance.balances.find((b) => b.currency === 643)!;
    expect(rub.available).toBe(ctx.sandbox.state.balance(agentId, 643).available.toFixed(2));
    if (shops === 'two') {
      // The payment shop got the money paid in; the agent shop's balance paid out.
      expect(ctx.sandbox.state.balance(SHOP_ID, 643).available.toFixed(2)).toBe('110.00');
    }
  }, 60000);

  it('the sandbox accepts each shop only with its own secret, and only for the calls it serves', async () => {
    const now = new Date().toISOString().slice(0, 19) + '+00:00';
    const balanceOf = (shopId: number, secret: string) =>
      new TestShop(ctx.sandbox, shopId, secret).call('shop_balance', { now });
    const checkOf = (shopId: number, secret: string) =>
      new TestShop(ctx.sandbox, shopId, secret).call('invoice/check', { now, shop_order_id: 'x' });

    expect((await balanceOf(agentId, agentSecret)).result).toBe(true);
    expect((await checkOf(SHOP_ID, SECRET)).error_code).toBe(7); // authenticated, no such invoice
    expect((await balanceOf(999, agentSecret)).error_code).toBe(11);
    if (shops === 'two') {
      // The other shop's secret is as wrong as any.
      expect(await balanceOf(PAYOUT_SHOP_ID, SECRET)).toMatchObject({
        status: 400,
        error_code: 10,
      });
      expect(await checkOf(SHOP_ID, PAYOUT_SECRET)).toMatchObject({ status: 400, error_code: 10 });
      // Right secret, wrong shop for the call: payouts and balance only through the agent shop.
      expect(await balanceOf(SHOP_ID, SECRET)).toMatchObject({ result: false, error_code: 10 });
      expect(await checkOf(PAYOUT_SHOP_ID, PAYOUT_SECRET)).toMatchObject({
        result: false,
        error_code: 10,
      });
    }
  });
});

describe('changing a shop setting never mixes two shops’ objects', () => {
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

  it('an open payout of the previous payout shop is neither read, polled nor created again under the agent shop', async () => {
    const shopPaymentId = `old-shop-${randomUUID()}`;
    // Left by the single-shop setting: the payment shop paid it out, its outcome still open.
    await db.query(
      `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, amount, amount_type, shop_currency,
         payway, account_masked, account_sealed, create_attempts, next_poll_at, poll_deadline)
       VALUES ($1, $2, repeat('0', 64), 'unknown', '100', 'ps_amount', 643, 'card_rub', '411111******1111',
         'not-used', 1, now() - interval '1 second', now() + interval '1 hour')`,
      [SHOP_ID, shopPaymentId],
    );
    ctx.sandbox.state.requests = [];
    await ctx.service.app.get(PayoutPoller).runOnce();
    const asked = ctx.sandbox.state.requests.filter(
      (r) => asText((r.body as Record<string, unknown>).shop_payment_id) === shopPaymentId,
    );
    expect(asked).toEqual([]);
    expect((await ctx.http.get(`/api/v1/payouts/${shopPaymentId}`).set(auth())).status).toBe(404);
    const row = await db.query(
      'SELECT status, lease_until FROM payouts WHERE shop_payment_id = $1',
      [shopPaymentId],
    );
    expect(row.rows).toEqual([{ status: 'unknown', lease_until: null }]);
    // Reported (at start-up) so an operator settles it with the old shop's credentials.
    expect(
      await openRowsOfOtherShops(ctx.service.app.get(DataSource), ctx.service.config.gateway),
    ).toEqual([{ table: 'payouts', shopId: SHOP_ID, open: 1 }]);
  });
});
