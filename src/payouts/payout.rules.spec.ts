import { Amount } from '../common/money';
import { maskAccount } from './account-mask';
import {
  approvalsToSend,
  firstPollGraceS,
  controlWriteOff,
  foreignRecordReason,
  payoutWatchStep,
  writeOffNeedsQuote,
} from './payout.rules';
import { decideRecreate, isPolled } from './payout.state';

describe('decideRecreate: a create after "absent"', () => {
  const base = {
    now: 100_000,
    maxCreates: 3,
    gatewayTimeoutMs: 30_000,
    pollIntervalMs: 30_000,
    pollDeadline: 200_000,
  };
  it.each<[string, number, number | null, string]>([
    ['first repeat long after the create', 1, 0, 'create'],
    ['within two gateway time-outs of the last create: wait', 1, 100_000 - 59_999, 'wait'],
    ['exactly two time-outs later: create', 1, 100_000 - 60_000, 'create'],
    ['at the cap: an operator decides', 3, 0, 'cap'],
    ['past the cap', 4, 0, 'cap'],
    ['never sent (no time recorded)', 0, null, 'create'],
  ])('%s', (_n, createAttempts, lastCreateAt, expected) => {
    expect(decideRecreate({ ...base, createAttempts, lastCreateAt })).toBe(expected);
  });

  // A short time-out does not shorten the wait below a time-out plus one poll interval.
  it.each<[string, number, string]>([
    ['time-out 5 s, interval 30 s: 15 s after the create, wait', 15_000, 'wait'],
    ['time-out 5 s, interval 30 s: 34.999 s after, wait', 34_999, 'wait'],
    ['time-out 5 s, interval 30 s: 35 s after, create', 35_000, 'create'],
  ])('%s', (_n, sinceMs, expected) => {
    expect(
      decideRecreate({
        ...base,
        gatewayTimeoutMs: 5_000,
        createAttempts: 1,
        lastCreateAt: base.now - sinceMs,
      }),
    ).toBe(expected);
  });
});

describe('foreignRecordReason: is the gateway record ours?', () => {
  const ours = {
    shopPaymentId: 'po-1',
    amount: Amount.fromText('1000.00'),
    amountType: 'ps_amount' as const,
    shopCurrency: 643,
    payway: 'card_rub',
    accountMasked: maskAccount('4111111111111111'),
  };
  it.each<[string, Record<string, unknown>, RegExp | null]>([
    [
      'the same facts',
      { shop_payment_id: 'po-1', shop_currency: 643, payee_receive: '1000' },
      null,
    ],
    ['another id', { shop_payment_id: 'po-2' }, /shop_payment_id/],
    ['an empty id says nothing (left out)', { shop_payment_id: '' }, null],
    ['another currency', { shop_currency: 840 }, /shop_currency/],
    ['another amount', { payee_receive: '999.99' }, /amount 999.99/],
    ['an unreadable amount', { payee_receive: 'lots' }, /amount/],
    ['another payway', { payway: 'qiwi_rub' }, /payway/],
    ['another account', { account: '5500000000000004' }, /account/],
    ['the same account', { account: '4111111111111111' }, null],
  ])('%s', (_n, record, expected) => {
    const reason = foreignRecordReason(ours, record, maskAccount);
    if (expected === null) expect(reason).toBeNull();
    else expect(reason).toMatch(expected);
  });

  it('for shop_amount payouts compares the write-off, not what the payee receives', () => {
    const shopAmount = { ...ours, amountType: 'shop_amount' as const };
    expect(
      foreignRecordReason(
        shopAmount,
        { payee_receive: '960.00', shop_write_off: '1000.00' },
        maskAccount,
      ),
    ).toBeNull();
    expect(foreignRecordReason(shopAmount, { shop_write_off: '1040.00' }, maskAccount)).toMatch(
      /amount/,
    );
  });
});

describe('decideRecreate: the poll deadline', () => {
  const base = {
    now: 100_000,
    maxCreates: 3,
    gatewayTimeoutMs: 30_000,
    pollIntervalMs: 30_000,
    createAttempts: 1,
    lastCreateAt: 0,
  };
  it.each<[string, number, string]>([
    ['before the deadline: create', 100_001, 'create'],
    ['at the deadline: nothing is sent, an operator decides', 100_000, 'late'],
    ['past it', 50_000, 'late'],
  ])('%s', (_n, pollDeadline, expected) => {
    expect(decideRecreate({ ...base, pollDeadline })).toBe(expected);
  });

  it('the cap is named first when both hold', () => {
    expect(decideRecreate({ ...base, createAttempts: 3, pollDeadline: 0 })).toBe('cap');
  });
});

describe('decideRecreate: never "absent" while the last create may be in flight', () => {
  const base = {
    now: 100_000,
    maxCreates: 3,
    gatewayTimeoutMs: 30_000,
    pollIntervalMs: 30_000,
    createAttempts: 2,
  };
  it.each<[string, number, number, number, string]>([
    ['at the deadline, create sent 10 s ago: wait', 100_000, 90_000, 2, 'wait'],
    ['past the deadline, create sent 59.999 s ago: wait', 50_000, 100_000 - 59_999, 2, 'wait'],
    ['at the cap, create sent 1 s ago: wait', 200_000, 99_000, 3, 'wait'],
    ['at the deadline, the quiet period over: late', 100_000, 40_000, 2, 'late'],
    ['at the cap, the quiet period over: cap', 200_000, 40_000, 3, 'cap'],
  ])('%s', (_n, pollDeadline, lastCreateAt, createAttempts, expected) => {
    expect(decideRecreate({ ...base, pollDeadline, lastCreateAt, createAttempts })).toBe(expected);
  });
});

describe('payoutWatchStep: polled until final, flagged at the deadline, then every WATCH_INTERVAL_S', () => {
  const createdAt = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(createdAt.getTime() + s * 1000);
  const base = {
    createdAt,
    sentAt: null,
    pollDeadline: at(7200),
    pollIntervalS: 30,
    watch: { intervalS: 600, maxS: 7 * 86400 },
  };
  it.each<[string, number, number | null, string | null]>([
    ['before the deadline: every poll interval', 60, 90, null],
    ['at the deadline: flagged and still polled', 7200, 7800, 'deadline'],
    ['a day later: still polled every watch interval', 86400, 87000, 'deadline'],
    ['at the watch end: no longer polled', 7 * 86400, null, 'watch_ended'],
  ])('%s', (_n, nowS, nextS, flag) => {
    expect(payoutWatchStep({ ...base, now: at(nowS) })).toEqual({
      nextAt: nextS === null ? null : at(nextS),
      flag,
    });
  });

  it('the watch runs from the send, never from the wait for approval', () => {
    const sentAt = at(30 * 86400);
    const late = (s: number) => new Date(sentAt.getTime() + s * 1000);
    const step = payoutWatchStep({ ...base, sentAt, pollDeadline: late(7200), now: late(60) });
    expect(step).toEqual({ nextAt: late(90), flag: null });
    expect(
      payoutWatchStep({ ...base, sentAt, pollDeadline: late(7200), now: late(7 * 86400) }).flag,
    ).toBe('watch_ended');
  });

  it('needs_attention is still polled; a final status is not', () => {
    expect(isPolled('needs_attention')).toBe(true);
    expect(isPolled('succeeded')).toBe(false);
  });
});

describe('controlWriteOff: the one figure of the approval thresholds, the caps and the balance', () => {
  const a = (t: string): Amount => Amount.parse(t);
  it.each<[string, 'ps_amount' | 'shop_amount', string, string | null, string | null]>([
    ['shop_amount: the amount is the write-off', 'shop_amount', '49990.00', null, '49990.00'],
    ['shop_amount: a recorded figure does not replace it', 'shop_amount', '100.00', '100.01', '100.00'],
    ['ps_amount: the quoted write-off (fee 1% + 30)', 'ps_amount', '49990.00', '50519.90', '50519.90'],
    ['ps_amount, not quoted: unknown, never the amount', 'ps_amount', '49990.00', null, null],
  ])('%s', (_n, amountType, amount, writeOff, figure) => {
    const r = controlWriteOff({
      amount: a(amount),
      amountType,
      shopWriteOff: writeOff === null ? null : a(writeOff),
    });
    expect(r === null ? null : r.toString()).toBe(figure);
  });

  it('only a ps_amount needs withdraw/try to know its write-off', () => {
    expect(writeOffNeedsQuote('ps_amount')).toBe(true);
    expect(writeOffNeedsQuote('shop_amount')).toBe(false);
  });
});

describe('approvalsToSend and firstPollGraceS', () => {
  it('a payout awaiting approval always needs one approval at least', () => {
    expect([0, 1, 2].map((n) => approvalsToSend({ approvalsRequired: n }))).toEqual([1, 1, 2]);
  });

  it('a just-sent payout is left alone for a gateway time-out (whole seconds) and a poll interval', () => {
    expect(firstPollGraceS(30_000, 30)).toBe(60);
    expect(firstPollGraceS(30_001, 30)).toBe(61);
    expect(firstPollGraceS(500, 5)).toBe(6);
  });
});
