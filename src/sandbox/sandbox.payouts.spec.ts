import type { SandboxHandle } from './sandbox.server';
import {
  asText,
  nowText,
  startTestSandbox,
  TestShop,
  uniqueId,
  waitFor,
} from './testing/sandbox-test-kit';
import { PAYOUT } from '../../test/support/payways';

const CARD_ACCOUNT = '4276380012345678';

describe('sandbox: payouts and balance', () => {
  let sandbox: SandboxHandle;
  let shop: TestShop;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    shop = new TestShop(sandbox);
  });
  afterAll(() => sandbox.close());
  beforeEach(() => shop.control('POST', '/reset'));

  async function rub(): Promise<{ available: string; hold: string; frozen: string }> {
    const r = await shop.call('shop_balance', { now: nowText() });
    const b =
      (r.data.balances as Record<string, unknown>[]).find((x) => asText(x.currency) === '643') ??
      {};
    return { available: asText(b.available), hold: asText(b.hold), frozen: asText(b.frozen) };
  }

  function payout(fields: Record<string, unknown> = {}) {
    return shop.call('withdraw/create', {
      shop_payment_id: uniqueId('p'),
      amount: '1000.00',
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT.card,
      account: CARD_ACCOUNT,
      ...fields,
    });
  }

  const status = async (id: unknown): Promise<number> =>
    Number(
      asText(
        (await shop.call('withdraw/status', { withdraw_id: Number(asText(id)), now: nowText() }))
          .data.status,
      ),
    );

  it('shop_balance: seeded balances per currency, written with two decimals', async () => {
    const r = await shop.call('shop_balance', { now: nowText() });
    expect(r.text).toContain('{"currency":643,"available":1000000.00,"hold":0.00,"frozen":0.00}');
    expect(r.data.shop_id).toEqual(expect.anything());
  });

  it.each([
    // percent 1, fix 30 on the card payout payway
    ['ps_amount', '1000.00', '1000.00', '1040.00'],
    ['ps_amount', '333.33', '333.33', '366.66'], // fee 3.3333 + 30 = 33.3333 → 33.33
    ['ps_amount', '150.50', '150.50', '182.01'], // fee 1.505 + 30 = 31.505 → 31.51 (half-up)
    ['shop_amount', '1000.00', '960.00', '1000.00'],
  ])('withdraw/try %s %s: payee %s, write-off %s', async (amountType, amount, payee, writeOff) => {
    const r = await shop.call('withdraw/try', {
      amount,
      amount_type: amountType,
      payway: PAYOUT.card,
      shop_currency: 643,
    });
    expect(r.result).toBe(true);
    expect(r.text).toContain(`"payee_receive":${payee}`);
    expect(r.text).toContain(`"shop_write_off":${writeOff}`);
    expect(r.data.account_info_config).toEqual({
      account: { regex: '^\\d{16,19}$', title: 'Card number' },
    });
  });

  it('withdraw/try refuses amounts outside the payway’s bounds', async () => {
    const r = await shop.call('withdraw/try', {
      amount: '99.99',
      amount_type: 'ps_amount',
      payway: PAYOUT.card,
      shop_currency: 643,
    });
    expect(r).toMatchObject({ result: false, error_code: 10 });
  });

  it('check_account: true for a matching account, false for a wrong or unknown one', async () => {
    const ok = await shop.call('check_account', {
      account: CARD_ACCOUNT,
      amount: '500.00',
      payway: PAYOUT.card,
    });
    expect(ok.data).toMatchObject({ result: true, account_info: expect.any(Object) });
    const wrong = await shop.call('check_account', {
      account: '12345',
      amount: '500.00',
      payway: PAYOUT.card,
    });
    expect(wrong.data).toEqual({ result: false });
    const unknown = await shop.call('check_account', {
      account: '4276380012340000',
      amount: '500.00',
      payway: PAYOUT.card,
    });
    expect(unknown.data).toEqual({ result: false });
  });

  it('create freezes amount + fee, answers sent (3) as the test server does, then 5 and the frozen funds are debited', async () => {
    await shop.control('POST', '/settings', { timeScale: 0.2 }); // 300 ms a step: the frozen state is seen
    const r = await payout();
    expect(r.result).toBe(true);
    expect(r.text).toContain('"shop_write_off":1040.00');
    expect(r.text).toContain('"balance":998960.00');
    expect(asText(r.data.status)).toBe('3');
    expect(await rub()).toEqual({ available: '998960.00', hold: '0.00', frozen: '1040.00' });
    await waitFor(async () => (await status(r.data.id)) === 5, 3000, 'payout success');
    expect(await rub()).toEqual({ available: '998960.00', hold: '0.00', frozen: '0.00' });
    const record = await shop.call('withdraw/status', {
      withdraw_id: Number(asText(r.data.id)),
      now: nowText(),
    });
    expect(record.data).toMatchObject({
      shop_payment_id: expect.any(String),
      rrn: expect.stringMatching(/^\d+$/),
    });
  });

  it('shop_amount: the amount itself is written off', async () => {
    const r = await payout({ amount_type: 'shop_amount', payway: PAYOUT.sandboxCard('pending') });
    expect(r.text).toContain('"payee_receive":960.00');
    expect((await rub()).frozen).toBe('1000.00');
  });

  it('reject: status 6 in the create answer and the funds returned', async () => {
    const r = await payout({ payway: PAYOUT.sandboxCard('reject') });
    expect(r.result).toBe(true);
    expect(asText(r.data.status)).toBe('6');
    expect(await rub()).toEqual({ available: '1000000.00', hold: '0.00', frozen: '0.00' });
  });

  it('decline: sent, then cancelled (8) and the funds returned', async () => {
    const r = await payout({ payway: PAYOUT.sandboxCard('decline') });
    await waitFor(async () => (await status(r.data.id)) === 8, 3000, 'payout cancelled');
    expect((await rub()).available).toBe('1000000.00');
  });

  it('never_final: stays sent (3) with the funds frozen', async () => {
    const r = await payout({ payway: PAYOUT.sandboxCard('never_final') });
    await waitFor(async () => (await status(r.data.id)) === 3, 3000, 'payout sent');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await status(r.data.id)).toBe(3);
    expect((await rub()).frozen).toBe('1040.00');
  });

  it('slow_final: sent, final only between 2 hours and 2 days of sandbox time later', async () => {
    // One sandbox hour is 2 ms here: final between 4 and 96 ms after the create.
    const before = sandbox.state.settings.timeScale;
    await shop.control('POST', '/settings', { timeScale: 2 / 3_600_000 });
    try {
      const ids = await Promise.all(
        Array.from({ length: 8 }, () => payout({ payway: PAYOUT.sandboxCard('slow_final') })),
      );
      const created = Date.now();
      for (const r of ids) expect(asText(r.data.status)).toBe('3');
      const finals = await Promise.all(
        ids.map(async (r) => {
          await waitFor(async () => [5, 8].includes(await status(r.data.id)), 3000, 'final');
          return status(r.data.id);
        }),
      );
      // Never before the 2 hours (4 ms real): every status was 3 right after the create.
      expect(Date.now() - created).toBeGreaterThanOrEqual(4);
      expect(finals.every((s) => s === 5 || s === 8)).toBe(true);
    } finally {
      await shop.control('POST', '/settings', { timeScale: before });
    }
  });

  it('fail: sent, then rejected (6) and the funds returned', async () => {
    const r = await payout({ payway: PAYOUT.walletFail, account: '+79001234567' });
    expect(asText(r.data.status)).toBe('3');
    await waitFor(async () => (await status(r.data.id)) === 6, 3000, 'payout rejected');
    expect((await rub()).available).toBe('1000000.00');
  });

  it('wallet_does_not_exist: check_account says no, withdraw/create is refused', async () => {
    const fields = { payway: PAYOUT.walletMissing, account: '+79001234567', amount: '500.00' };
    const check = await shop.call('check_account', fields);
    expect(check.data).toEqual({ result: false });
    const r = await payout(fields);
    expect(r).toMatchObject({ result: false, error_code: 10 });
    expect(r.message).toContain('wallet does not exist');
  });

  it('payment_forbidden: withdraw/create is refused, nothing frozen', async () => {
    const r = await payout({ payway: PAYOUT.cardForbidden });
    expect(r).toMatchObject({ result: false, error_code: 10 });
    expect((await rub()).frozen).toBe('0.00');
  });

  it('internal_server_error: an HTML 500 page, nothing created', async () => {
    const r = await payout({ payway: PAYOUT.walletServerError, account: '+79001234567' });
    expect(r.status).toBe(500);
    expect(sandbox.state.payouts.size).toBe(0);
  });

  it('another shop currency: converted at the fixed rate, the write-off in the shop’s currency', async () => {
    // 100.00 USD (shop_amount) at 92.5 = 9250.00 RUB; fee 1% + 30 = 122.50; the payee gets 9127.50.
    const r = await payout({ amount: '100.00', amount_type: 'shop_amount', shop_currency: 840 });
    expect(r.result).toBe(true);
    expect(r.text).toContain('"payee_receive":9127.50');
    expect(r.text).toContain('"shop_write_off":100.00');
    expect(r.data).toMatchObject({
      ps_currency: expect.anything(),
      shop_currency: expect.anything(),
    });
    expect(asText(r.data.shop_currency)).toBe('840');
    expect(asText(r.data.ps_currency)).toBe('643');
  });

  it('rejects a reused shop_payment_id with code 6', async () => {
    const id = uniqueId('p');
    expect(
      (await payout({ shop_payment_id: id, payway: PAYOUT.sandboxCard('pending') })).result,
    ).toBe(true);
    const again = await payout({ shop_payment_id: id, payway: PAYOUT.sandboxCard('pending') });
    expect(again).toMatchObject({
      result: false,
      error_code: 6,
      message: `shop_payment_id "${id}" is not unique`,
    });
    expect((await rub()).frozen).toBe('1040.00');
    expect(sandbox.state.payouts.size).toBe(1);
  });

  it('status calls for an unknown payout answer code 7 "Payout is absent"', async () => {
    const byId = await shop.call('withdraw/status', { withdraw_id: 42, now: nowText() });
    const byShopId = await shop.call('withdraw/shop_payment_status', {
      shop_payment_id: 'nope',
      now: nowText(),
    });
    for (const r of [byId, byShopId])
      expect(r).toMatchObject({ result: false, error_code: 7, message: 'Payout is absent' });
  });

  it('refuses an account that does not match, and more than the balance', async () => {
    expect(await payout({ account: '12' })).toMatchObject({ result: false, error_code: 10 });
    const big = await payout({ amount: '100000.00' });
    expect(big.result).toBe(true);
    for (let i = 0; i < 8; i += 1)
      expect((await payout({ amount: '100000.00' })).result).toBe(true);
    const short = await payout({ amount: '100000.00' });
    expect(short).toMatchObject({ result: false, error_code: 10 });
    expect(short.message).toContain('insufficient funds');
  });
});
