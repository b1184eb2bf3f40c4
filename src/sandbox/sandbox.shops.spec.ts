import { PAYOUT } from '../../test/support/payways';
import type { SandboxHandle } from './sandbox.server';
import {
  asText,
  NotificationReceiver,
  notificationSignOk,
  nowText,
  SECRET,
  SHOP_ID,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';

/** A payment shop and an agent shop, as on the gateway's test server (shops 356 and 357). */
const AGENT_ID = 2002;
const AGENT_SECRET = 'agent-secret-key';

describe('sandbox: a payment shop and an agent shop', () => {
  let sandbox: SandboxHandle;
  let payments: TestShop;
  let agent: TestShop;
  let receiver: NotificationReceiver;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ payoutShopId: AGENT_ID, payoutSecretKey: AGENT_SECRET });
    payments = new TestShop(sandbox);
    agent = new TestShop(sandbox, AGENT_ID, AGENT_SECRET);
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    await payments.control('POST', '/reset');
    receiver = await new NotificationReceiver().start();
  });
  afterEach(() => receiver.close());

  const rub = async (): Promise<string> => {
    const r = await agent.call('shop_balance', { now: nowText() });
    expect(asText(r.data.shop_id)).toBe(String(AGENT_ID));
    const line = (r.data.balances as Record<string, unknown>[]).find(
      (b) => asText(b.currency) === '643',
    );
    return asText(line?.available);
  };

  it('the agent shop holds the balance and pays out of it; the payment shop is credited by payments', async () => {
    expect(await rub()).toBe('1000000.00');
    const p = await agent.call('withdraw/create', {
      shop_payment_id: uniqueId('p'),
      amount: '1000.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT.card,
      account: '4276380012345678',
    });
    expect(p.result).toBe(true);
    expect(await rub()).toBe('998960.00');

    const c = await payments.createInvoice({ shop_order_id: uniqueId('i'), amount: '100.10' });
    await payments.control('POST', `/invoices/${asText(c.data.id)}/pay`);
    expect(sandbox.state.balance(SHOP_ID, 643).available.toFixed(2)).toBe('100.10');
    expect(await rub()).toBe('998960.00');
  });

  it('notifications are signed with the secret of the shop they name', async () => {
    const id = uniqueId('n');
    const c = await payments.createInvoice({ shop_order_id: id, callback_url: receiver.url });
    await payments.control('POST', `/invoices/${asText(c.data.id)}/pay`);
    const [n] = await waitFor(() => receiver.of('shop_order_id', id), 3000, 'the notification');
    expect(asText(n.fields.shop_id)).toBe(String(SHOP_ID));
    expect(notificationSignOk(n.fields, SECRET)).toBe(true);
    expect(notificationSignOk(n.fields, AGENT_SECRET)).toBe(false);
  });

  it('refuses the other shop’s secret (10), an unknown shop (11) and calls the shop does not serve (10)', async () => {
    const now = nowText();
    const cases: Array<[TestShop, 'shop_balance' | 'invoice/check', number, number]> = [
      [new TestShop(sandbox, AGENT_ID, SECRET), 'shop_balance', 400, 10],
      [new TestShop(sandbox, SHOP_ID, AGENT_SECRET), 'invoice/check', 400, 10],
      [new TestShop(sandbox, 4242, SECRET), 'invoice/check', 400, 11],
      [payments, 'shop_balance', 200, 10],
      [agent, 'invoice/check', 200, 10],
    ];
    for (const [shop, call, status, code] of cases) {
      const r = await shop.call(call, { now, shop_order_id: 'x' });
      expect({ call, shop: shop.shopId, status: r.status, code: r.error_code }).toEqual({
        call,
        shop: shop.shopId,
        status,
        code,
      });
    }
    // The log tells whose secret signed each request, whatever the body claims.
    const signers = sandbox.state.requests.map((r) => r.signed_by);
    expect(signers).toEqual([SHOP_ID, AGENT_ID, SHOP_ID, SHOP_ID, AGENT_ID]);
  });
});
