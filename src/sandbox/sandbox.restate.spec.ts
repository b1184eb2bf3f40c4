import Decimal from 'decimal.js';
import type { SandboxHandle } from './sandbox.server';
import {
  asText,
  nowText,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYMENT, PAYOUT } from '../../test/support/payways';

/**
 * The gateway restating a final status (restate.routes.ts): the record changes from paid to a
 * failure and the balance moves back with it; anything else is refused and changes nothing.
 */
describe('sandbox: a final status restated', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
  });
  afterAll(() => sandbox.close());
  beforeEach(() => shop.control('POST', '/reset'));

  const available = async (): Promise<string> => {
    const r = await shop.call('shop_balance', { now: nowText() });
    const b = (r.data.balances as Record<string, unknown>[]).find(
      (x) => asText(x.currency) === '643',
    );
    return asText(b?.available);
  };
  const restate = (path: string, status: unknown): Promise<Response> =>
    fetch(`${sandbox.origin}/sandbox${path}/restate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ status }),
    });

  it('a paid invoice becomes rejected (6) and its amount leaves the balance; twice is a 409', async () => {
    const shopOrderId = uniqueId('rs');
    await shop.createInvoice({
      shop_order_id: shopOrderId,
      amount: '250.50',
      payway: PAYMENT.cardSuccess,
    });
    expect(await shop.status(shopOrderId)).toBe(4);
    const before = await available();
    expect((await restate(`/invoices/${shopOrderId}`, 6)).status).toBe(200);
    expect(await shop.status(shopOrderId)).toBe(6);
    expect(await available()).toBe(new Decimal(before).minus('250.50').toFixed(2));
    expect((await restate(`/invoices/${shopOrderId}`, 6)).status).toBe(409);
    expect((await restate(`/invoices/${shopOrderId}`, 4)).status).toBe(400);
    expect((await restate('/invoices/no-such-order', 6)).status).toBe(404);
  });

  it('a SUCCESS refund becomes FAILED and its amount returns to the balance', async () => {
    const shopOrderId = uniqueId('rs');
    const c = await shop.createInvoice({
      shop_order_id: shopOrderId,
      amount: '100.00',
      payway: PAYMENT.cardSuccess,
    });
    const shopRefundId = uniqueId('rsr');
    await shop.call('invoice/create-refund', {
      invoice_id: Number(asText(c.data.id)),
      amount: '40.00',
      shop_refund_id: shopRefundId,
    });
    await waitFor(async () =>
      sandbox.state.refunds.get(shopRefundId)?.status === 'SUCCESS' ? true : undefined,
    );
    const before = await available();
    expect((await restate(`/refunds/${shopRefundId}`, 'FAILED')).status).toBe(200);
    expect(sandbox.state.refunds.get(shopRefundId)?.status).toBe('FAILED');
    expect(await available()).toBe(new Decimal(before).plus('40.00').toFixed(2));
    expect((await restate(`/refunds/${shopRefundId}`, 'FAILED')).status).toBe(409);
  });

  it('a paid payout becomes rejected (6) and its write-off returns to available', async () => {
    const shopPaymentId = uniqueId('rsp');
    const r = await shop.call('withdraw/create', {
      shop_payment_id: shopPaymentId,
      amount: '1000.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT.card,
      account: '4276380012345678',
    });
    const writeOff = asText(r.data.shop_write_off);
    await waitFor(async () =>
      sandbox.state.payouts.get(Number(asText(r.data.id)))?.status === 5 ? true : undefined,
    );
    const before = await available();
    expect((await restate(`/payouts/${shopPaymentId}`, 6)).status).toBe(200);
    const after = await shop.call('withdraw/status', {
      withdraw_id: Number(asText(r.data.id)),
      now: nowText(),
    });
    expect(asText(after.data.status)).toBe('6');
    expect(await available()).toBe(new Decimal(before).plus(writeOff).toFixed(2));
    expect((await restate(`/payouts/${shopPaymentId}`, 8)).status).toBe(409);
  });
});
