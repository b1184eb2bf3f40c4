import { Client } from 'pg';
import { auth, startTestApp, TestContext } from '../support/app';
import { newInvoice } from '../support/hostile';
import { PAYMENT, PAYOUT } from '../support/payways';

/**
 * Attacks on amounts: each currency's minor units (ISO 4217).
 */

describe('per-currency minor units (ISO 4217)', () => {
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

  const rows = async (): Promise<number> =>
    Number((await db.query(`SELECT (SELECT count(*) FROM invoices) + (SELECT count(*) FROM refunds) + (SELECT count(*) FROM payouts) AS n`)).rows[0].n);

  it.each([
    ['/api/v1/invoices', { shopOrderId: 'cur-1', amount: '100.101', currency: 643, payway: PAYMENT.card }],
    ['/api/v1/invoices', { shopOrderId: 'cur-2', amount: '100.5', currency: 392, payway: PAYMENT.card }],
    ['/api/v1/invoices/quote', { shopOrderId: 'cur-3', amount: '1.000', currency: 840, payway: PAYMENT.card }],
    ['/api/v1/payouts', { shopPaymentId: 'cur-4', amount: '10.001', amountType: 'shop_amount', shopCurrency: 643, payway: PAYOUT.card, account: '4111111111111111' }],
    ['/api/v1/payouts/quote', { amount: '10.001', amountType: 'shop_amount', shopCurrency: 643, payway: PAYOUT.card }],
    ['/api/v1/payouts', { shopPaymentId: 'cur-5', amount: '10.001', amountType: 'ps_amount', shopCurrency: 643, payway: PAYOUT.card, account: '4111111111111111' }],
  ])('%s %j → 400 naming amount, nothing written', async (url, body) => {
    const before = await rows();
    const res = await ctx.http.post(url).set(auth()).send(body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'amount' })]);
    expect(await rows()).toBe(before);
  });

  it('a refund finer than its invoice currency → 400 naming amount, nothing written', async () => {
    const inv = await newInvoice(ctx);
    await db.query(`UPDATE invoices SET status = 'succeeded' WHERE shop_order_id = $1`, [inv.shopOrderId]);
    const before = await rows();
    for (const body of [{ shopRefundId: 'r-cur-1', amount: '1.001' }, { shopRefundId: 'r-cur-2', amount: '1.001', currency: 643 }]) {
      const res = await ctx.http.post(`/api/v1/invoices/${String(inv.shopOrderId)}/refunds`).set(auth()).send(body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'amount' })]);
    }
    expect(await rows()).toBe(before);
  });
});
