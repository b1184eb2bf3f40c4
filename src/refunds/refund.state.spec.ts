import { fitsPaidAmount } from './refund.rules';
import fc from 'fast-check';
import { Amount } from '../common/money';
import type { RefundStatus } from './refund.entity';
import {
  REFUND_STATUSES,
  backoffSeconds,
  countsTowardPaid,
  decideRefundTransition,
  isFinalRefund,
  mismatchOf,
  outcomeOfCreate,
  refundStatusFromGateway,
} from './refund.state';

const T = (from: RefundStatus, to: RefundStatus): boolean =>
  decideRefundTransition(from, to).allowed;

describe('refund state machine', () => {
  it.each<[RefundStatus, RefundStatus, boolean, string | undefined]>([
    ['WAITING', 'SUCCESS', true, undefined],
    ['WAITING', 'FAILED', true, undefined],
    ['WAITING', 'WAITING', false, 'same'],
    ['SUCCESS', 'FAILED', false, 'final'],
    ['SUCCESS', 'WAITING', false, 'final'],
    ['SUCCESS', 'SUCCESS', false, 'same'],
    ['FAILED', 'SUCCESS', false, 'final'],
    ['FAILED', 'WAITING', false, 'final'],
  ])('%s -> %s allowed: %s', (from, to, allowed, reason) => {
    const d = decideRefundTransition(from, to);
    expect(d.allowed).toBe(allowed);
    if (!d.allowed) expect(d.reason).toBe(reason);
  });

  it('property: a final status is never left', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...REFUND_STATUSES),
        fc.constantFrom(...REFUND_STATUSES),
        (from, to) => (isFinalRefund(from) ? !T(from, to) : true),
      ),
    );
  });

  it('property: any order of messages ends in the first final status reached', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...REFUND_STATUSES), { maxLength: 30 }), (steps) => {
        let s: RefundStatus = 'WAITING';
        const firstFinal = steps.find((x) => isFinalRefund(x));
        for (const to of steps) if (T(s, to)) s = to;
        return s === (firstFinal ?? 'WAITING');
      }),
    );
  });

  it.each<[Parameters<typeof outcomeOfCreate>[0], ReturnType<typeof outcomeOfCreate>]>([
    [
      { kind: 'accepted', status: 'WAITING' },
      { status: 'WAITING', submitState: 'accepted', rejected: false },
    ],
    [
      { kind: 'accepted', status: 'SUCCESS' },
      { status: 'SUCCESS', submitState: 'accepted', rejected: false },
    ],
    [
      { kind: 'accepted', status: 'FAILED' },
      { status: 'FAILED', submitState: 'accepted', rejected: false },
    ],
    [
      { kind: 'accepted', status: null },
      { status: 'WAITING', submitState: 'accepted', rejected: false },
    ],
    [
      { kind: 'fatal', recordStatus: null },
      { status: 'FAILED', submitState: 'rejected', rejected: true },
    ],
    [
      { kind: 'fatal', recordStatus: 'FAILED' },
      { status: 'FAILED', submitState: 'accepted', rejected: false },
    ],
    [{ kind: 'unknown' }, { status: 'WAITING', submitState: 'unknown', rejected: false }],
  ])('creation answer %j maps to %j', (answer, outcome) => {
    expect(outcomeOfCreate(answer)).toEqual(outcome);
  });

  it('reads gateway status words', () => {
    expect(refundStatusFromGateway('SUCCESS')).toBe('SUCCESS');
    expect(refundStatusFromGateway('failed')).toBe('FAILED');
    expect(refundStatusFromGateway('WAITING')).toBe('WAITING');
    expect(refundStatusFromGateway('DONE')).toBeNull();
    expect(refundStatusFromGateway(4)).toBeNull();
  });

  it('only FAILED refunds stop counting toward the paid amount', () => {
    expect(countsTowardPaid('WAITING')).toBe(true);
    expect(countsTowardPaid('SUCCESS')).toBe(true);
    expect(countsTowardPaid('FAILED')).toBe(false);
  });

  it('checks a gateway message against the stored refund exactly', () => {
    const stored = { shopId: 1001, amount: Amount.parse('100.10'), gatewayInvoiceId: '77' };
    expect(mismatchOf(stored, { shopId: '1001', amount: '100.100', invoiceId: '77' })).toBeNull();
    expect(mismatchOf(stored, { shopId: '1002', amount: '100.10' })).toMatch(/shop_id/);
    expect(mismatchOf(stored, { shopId: '1001', amount: '100.11' })).toMatch(/amount/);
    expect(mismatchOf(stored, { amount: 'abc' })).toMatch(/amount/);
    expect(mismatchOf(stored, { invoiceId: '78' })).toMatch(/invoice_id/);
  });

  it('keeps refunds that count within the paid amount, exactly', () => {
    const paid = Amount.parse('100.00');
    expect(fitsPaidAmount(paid, [Amount.parse('60.00')], Amount.parse('40.00'))).toBe(true);
    expect(fitsPaidAmount(paid, [Amount.parse('60.00')], Amount.parse('40.01'))).toBe(false);
    expect(
      fitsPaidAmount(
        Amount.parse('0.3'),
        [Amount.parse('0.1'), Amount.parse('0.1')],
        Amount.parse('0.1'),
      ),
    ).toBe(true);
  });

  it('property: accepted refunds chosen by fitsPaidAmount never sum above the paid amount', () => {
    const cents = fc
      .integer({ min: 1, max: 100000 })
      .map((c) => Amount.fromText(`${Math.trunc(c / 100)}.${String(c % 100).padStart(2, '0')}`));
    fc.assert(
      fc.property(cents, fc.array(cents, { maxLength: 20 }), (paid, requests) => {
        const accepted: Amount[] = [];
        for (const r of requests) if (fitsPaidAmount(paid, accepted, r)) accepted.push(r);
        return Amount.sum(accepted).lte(paid);
      }),
    );
  });

  it('backs off by doubling, capped', () => {
    expect(backoffSeconds(10, 0)).toBe(10);
    expect(backoffSeconds(10, 3)).toBe(80);
    expect(backoffSeconds(10, 100)).toBe(3600);
  });
});
