import type { SandboxHandle } from './sandbox.server';
import {
  asText,
  NotificationReceiver,
  notificationSignOk,
  nowText,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYMENT } from '../../test/support/payways';

describe('sandbox: refunds', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;
  let receiver: NotificationReceiver;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
    receiver = await new NotificationReceiver().start();
  });
  afterAll(async () => {
    await receiver.close();
    await sandbox.close();
  });

  /** An invoice paid at once (the success scenario, or refund_failed). */
  async function paid(
    fields: { payway?: string; amount?: string; currency?: number } = {},
  ): Promise<{ shopOrderId: string; invoiceId: number }> {
    const { payway = PAYMENT.cardSuccess, amount = '100.10', currency = 643 } = fields;
    const shopOrderId = uniqueId('r');
    const c = await shop.createInvoice({
      shop_order_id: shopOrderId,
      amount,
      currency,
      payway,
    });
    expect(await shop.status(shopOrderId)).toBe(4);
    return { shopOrderId, invoiceId: Number(asText(c.data.id)) };
  }

  const refund = (invoiceId: number, amount: string, fields: Record<string, unknown> = {}) =>
    shop.call('invoice/create-refund', {
      invoice_id: invoiceId,
      amount,
      shop_refund_id: uniqueId('ref'),
      callback_url: receiver.url,
      ...fields,
    });

  const refunds = async (invoiceId: number) =>
    (await shop.call('invoice/get-refunds', { invoice_id: invoiceId, now: nowText() })).list;

  it('WAITING, then SUCCESS with a signed refund notification; shop_refund follows', async () => {
    const { shopOrderId, invoiceId } = await paid();
    const r = await refund(invoiceId, '40.05');
    expect(r.result).toBe(true);
    expect(r.data).toMatchObject({
      status: 'WAITING',
      amount: '40.05',
      currency: 'RUB',
      settlement_currency: 'RUB',
      processed_at: null,
    });
    const shopRefundId = asText(r.data.shop_refund_id);

    const [n] = await waitFor(
      () => receiver.of('shop_refund_id', shopRefundId),
      3000,
      'the refund notification',
    );
    expect(n.type).toBe('refund');
    expect(notificationSignOk(n.fields)).toBe(true);
    expect(n.fields).toMatchObject({
      shop_order_id: shopOrderId,
      status: 'SUCCESS',
      amount: '40.05',
      currency: 'RUB',
      processed_at: expect.stringMatching(/\+03:00$/),
    });
    expect(asText(n.fields.invoice_id)).toBe(String(invoiceId));

    expect((await refunds(invoiceId)).map((x) => [x.status, x.amount])).toEqual([
      ['SUCCESS', '40.05'],
    ]);
    expect((await shop.check(shopOrderId)).text).toContain('"shop_refund":40.05');
  });

  it('never above what was paid, counting refunds still waiting', async () => {
    const { invoiceId } = await paid();
    expect((await refund(invoiceId, '100.11')).error_code).toBe(10);
    expect((await refund(invoiceId, '60.00')).result).toBe(true);
    const over = await refund(invoiceId, '40.11');
    expect(over).toMatchObject({ result: false, error_code: 10 });
    expect((await refund(invoiceId, '40.10')).result).toBe(true);
    expect((await refund(invoiceId, '0.01')).error_code).toBe(10);
  });

  it('only for a paid invoice', async () => {
    const shopOrderId = uniqueId('r');
    const c = await shop.createInvoice({ shop_order_id: shopOrderId });
    const r = await refund(Number(asText(c.data.id)), '10.00');
    expect(r).toMatchObject({ result: false, error_code: 10 });
  });

  it('rejects a reused shop_refund_id with code 6', async () => {
    const { invoiceId } = await paid();
    const id = uniqueId('ref');
    expect((await refund(invoiceId, '1.00', { shop_refund_id: id })).result).toBe(true);
    expect(await refund(invoiceId, '1.00', { shop_refund_id: id })).toMatchObject({
      result: false,
      error_code: 6,
    });
  });

  it('refund_failed scenario: WAITING, then FAILED, notified; nothing counted as refunded', async () => {
    const { shopOrderId, invoiceId } = await paid({ payway: PAYMENT.sandboxCard('refund_failed') });
    const r = await refund(invoiceId, '100.10');
    const [n] = await waitFor(
      () => receiver.of('shop_refund_id', asText(r.data.shop_refund_id)),
      3000,
      'the notification',
    );
    expect(n.fields.status).toBe('FAILED');
    expect((await shop.check(shopOrderId)).text).toContain('"shop_refund":0.00');
    expect((await refund(invoiceId, '100.10')).result).toBe(true);
  });

  it('get-refunds of an unknown invoice answers code 7', async () => {
    const r = await shop.call('invoice/get-refunds', { invoice_id: 1, now: nowText() });
    expect(r).toMatchObject({ result: false, error_code: 7 });
  });

  it('refunds in the currency of a USD invoice', async () => {
    const { invoiceId } = await paid({
      payway: PAYMENT.cardUsdSuccess,
      amount: '20.00',
      currency: 840,
    });
    const r = await refund(invoiceId, '5.00');
    expect(r.data).toMatchObject({ currency: 'USD' });
  });
});
