import fc from 'fast-check';
import { Amount } from '../common/money';
import { refundSumsOf } from '../invoices/invoice-refund-sums';
import { fitsPaidAmount } from './refund.rules';
import { judgeRefund, type RefundEvidence, type RefundRuleFacts } from './refund.state';
import type { RefundStatus, RefundSubmitState } from './refund.entity';

const now = new Date('2026-01-01T00:00:00Z');
const policy = { checks: 3, windowS: 600, now };
const facts = (
  status: RefundStatus,
  submitState: RefundSubmitState = 'accepted',
  over: Partial<RefundRuleFacts> = {},
): RefundRuleFacts => ({
  status,
  submitState,
  shopId: 1001,
  amount: Amount.fromText('10.00'),
  gatewayInvoiceId: '77',
  absentCount: 0,
  firstAbsentAt: null,
  ...over,
});
const rec = (
  status: RefundStatus | null,
  reported: Record<string, string> = {},
): RefundEvidence => ({
  kind: 'record',
  status,
  statusText: String(status),
  reported,
});

describe('judgeRefund: what a gateway message about a refund means', () => {
  it.each<[string, RefundRuleFacts, RefundEvidence, string]>([
    ['SUCCESS on a WAITING refund is applied', facts('WAITING'), rec('SUCCESS'), 'apply'],
    [
      'the same status proves it exists (submit state)',
      facts('WAITING', 'unknown'),
      rec('WAITING'),
      'apply',
    ],
    [
      'another amount raises attention',
      facts('WAITING'),
      rec('SUCCESS', { amount: '10.01' }),
      'attention:mismatch',
    ],
    [
      'another invoice raises attention',
      facts('WAITING'),
      rec('SUCCESS', { invoiceId: '78' }),
      'attention:mismatch',
    ],
    [
      'SUCCESS after FAILED is a contradiction',
      facts('FAILED'),
      rec('SUCCESS'),
      'attention:contradiction',
    ],
    [
      'FAILED after SUCCESS is a contradiction',
      facts('SUCCESS'),
      rec('FAILED'),
      'attention:contradiction',
    ],
    ['a late WAITING after SUCCESS is ignored', facts('SUCCESS'), rec('WAITING'), 'ignore'],
    ['an unknown word is never final', facts('WAITING'), rec(null), 'ignore'],
    [
      'absent after acceptance proves nothing',
      facts('WAITING', 'accepted'),
      { kind: 'absent' },
      'ignore',
    ],
    [
      'absent once after a lost submit is not final',
      facts('WAITING', 'unknown'),
      { kind: 'absent' },
      'absent',
    ],
  ])('%s', (_n, r, ev, expected) => {
    const v = judgeRefund(r, ev, policy);
    expect(v.kind === 'attention' ? `attention:${v.reason}` : v.kind).toBe(expected);
  });

  it('FAILED only after enough absent checks spread over the window', () => {
    const old = new Date(now.getTime() - 600_000);
    const recent = new Date(now.getTime() - 60_000);
    expect(
      judgeRefund(
        facts('WAITING', 'pending', { absentCount: 2, firstAbsentAt: recent }),
        { kind: 'absent' },
        policy,
      ).kind,
    ).toBe('absent');
    expect(
      judgeRefund(
        facts('WAITING', 'pending', { absentCount: 1, firstAbsentAt: old }),
        { kind: 'absent' },
        policy,
      ).kind,
    ).toBe('absent');
    expect(
      judgeRefund(
        facts('WAITING', 'pending', { absentCount: 2, firstAbsentAt: old }),
        { kind: 'absent' },
        policy,
      ),
    ).toEqual({ kind: 'never_created', count: 3 });
  });
});

describe('the refund sum, decided once', () => {
  const cents = fc
    .integer({ min: 0, max: 100000 })
    .map((c) => Amount.fromText(`${Math.trunc(c / 100)}.${String(c % 100).padStart(2, '0')}`));

  it('property: a refund fits the cap exactly when it is within the refundableAmount the invoice body shows (disputes counted)', () => {
    fc.assert(
      fc.property(cents, cents, cents, cents, cents, (paid, refunded, pending, disputed, amount) => {
        const shown = refundSumsOf({
          amount: paid,
          currency: 643,
          status: 'succeeded',
          refundedAmount: refunded,
          refundPendingAmount: pending,
          disputedAmount: disputed,
        });
        const fits = fitsPaidAmount(paid, [refunded, pending, disputed], amount);
        return (
          fits === (amount.isPositive() && amount.lte(Amount.fromText(shown.refundableAmount)))
        );
      }),
    );
  });

  it('the cap is the amount less every refund that counts, exactly', () => {
    const paid = Amount.parse('100.00');
    expect(fitsPaidAmount(paid, [Amount.parse('60.00')], Amount.parse('40.00'))).toBe(true);
    expect(fitsPaidAmount(paid, [Amount.parse('60.00')], Amount.parse('40.01'))).toBe(false);
    expect(fitsPaidAmount(paid, [Amount.parse('100.01')], Amount.parse('0.01'))).toBe(false);
    expect(fitsPaidAmount(paid, [], Amount.parse('0'))).toBe(false);
  });
});
