import { objectActions } from './console-objects.controller';
import { dayIn } from './console-reports.controller';

describe('objectActions: what an object page offers', () => {
  const cases: Array<[string, 'invoice' | 'refund' | 'payout', Record<string, unknown>, string[]]> = [
    ['succeeded invoice', 'invoice', { status: 'succeeded', needsAttention: false }, ['recheck', 'refund', 'dispute']],
    ['held invoice', 'invoice', { status: 'held', needsAttention: false }, ['recheck', 'hold']],
    ['flagged held invoice', 'invoice', { status: 'held', needsAttention: true }, ['recheck', 'hold', 'accept']],
    ['rejected invoice', 'invoice', { status: 'rejected', needsAttention: false }, ['recheck']],
    ['refund', 'refund', { status: 'SUCCESS', needsAttention: false }, ['recheck']],
    ['awaiting payout', 'payout', { status: 'awaiting_approval', needsAttention: false }, ['recheck', 'decide']],
    ['flagged payout', 'payout', { status: 'needs_attention', needsAttention: true }, ['recheck', 'accept']],
  ];
  it.each(cases)('%s', (_name, type, object, offered) => {
    const a = objectActions(type, object);
    const on = ['recheck', 'refund', 'dispute', 'hold', 'decide', 'accept'].filter((k) => a[k] === true);
    expect(on).toEqual(offered);
    expect(a.shopRefundId === null).toBe(type !== 'invoice');
  });

  it('a fresh refund id and dispute key each time the page is shown', () => {
    const a = objectActions('invoice', { status: 'succeeded' });
    const b = objectActions('invoice', { status: 'succeeded' });
    expect(a.shopRefundId).not.toBe(b.shopRefundId);
    expect(a.disputeKey).not.toBe(b.disputeKey);
  });
});

describe('dayIn: the calendar day in a time zone', () => {
  it.each([
    ['2026-03-01T10:00:00Z', 'UTC', '2026-03-01'],
    ['2026-03-01T22:30:00Z', 'Europe/Moscow', '2026-03-02'],
    ['2026-03-01T09:00:00Z', 'America/Los_Angeles', '2026-03-01'],
    ['2026-03-01T07:00:00Z', 'America/Los_Angeles', '2026-02-28'],
  ])('%s in %s is %s', (at, zone, day) => {
    expect(dayIn(new Date(at), zone)).toBe(day);
  });
});
