import fc from 'fast-check';
import {
  INVOICE_STATUSES,
  InvoiceStatus,
  decideTransition,
  holdActionDone,
  isFinal,
  statusFromGatewayNumber,
  statusFromNotification,
} from './invoice.state';

const T = (from: InvoiceStatus, to: InvoiceStatus): boolean => decideTransition(from, to).allowed;

describe('invoice state machine', () => {
  it.each<[InvoiceStatus, InvoiceStatus, boolean]>([
    ['pending', 'awaiting_payer', true],
    ['pending', 'unknown', true],
    ['pending', 'succeeded', true],
    ['unknown', 'succeeded', true],
    ['unknown', 'awaiting_payer', true],
    ['awaiting_payer', 'held', true],
    ['awaiting_payer', 'succeeded', true],
    ['awaiting_payer', 'rejected', true],
    ['held', 'succeeded', true],
    ['held', 'unheld', true],
    ['held', 'expired', true],
    ['held', 'rejected', true],
    ['awaiting_payer', 'expired', false],
    ['expired', 'succeeded', false],
    ['expired', 'unheld', false],
    ['created', 'awaiting_payer', true],
    ['awaiting_payer', 'created', false],
    ['held', 'awaiting_payer', false],
    ['awaiting_payer', 'unheld', false],
    ['awaiting_payer', 'unknown', false],
    ['succeeded', 'rejected', false],
    ['rejected', 'succeeded', false],
    ['unheld', 'succeeded', false],
    ['succeeded', 'succeeded', false],
  ])('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(T(from, to)).toBe(allowed);
  });

  it('property: a final status is never left', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...INVOICE_STATUSES),
        fc.constantFrom(...INVOICE_STATUSES),
        (from, to) => (isFinal(from) ? !T(from, to) : true),
      ),
    );
  });

  it('property: any sequence of attempted changes ends final once it reached a final status', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...INVOICE_STATUSES), { maxLength: 30 }), (steps) => {
        let s: InvoiceStatus = 'pending';
        let finalSeen: InvoiceStatus | null = null;
        for (const to of steps) {
          if (T(s, to)) s = to;
          if (finalSeen) expect(s).toBe(finalSeen);
          if (isFinal(s)) finalSeen = s;
        }
        return true;
      }),
    );
  });

  it('maps gateway numbers and notification words', () => {
    expect(statusFromGatewayNumber(4)).toBe('succeeded');
    expect(statusFromGatewayNumber(8)).toBe('held');
    expect(statusFromGatewayNumber(7)).toBeNull();
    expect(statusFromNotification('success')).toBe('succeeded');
    expect(statusFromNotification('rejected')).toBe('rejected');
    expect(statusFromNotification('hold')).toBe('held');
    expect(statusFromNotification('4')).toBe('succeeded');
    expect(statusFromNotification('something-new')).toBeNull();
  });
});

describe('holdActionDone: a repeat of a charge or unhold that happened answers 200', () => {
  it.each<[InvoiceStatus, boolean, 'charge' | 'unhold', boolean]>([
    ['succeeded', true, 'charge', true],
    ['succeeded', false, 'charge', false],
    ['held', true, 'charge', false],
    ['unheld', true, 'charge', false],
    ['unheld', true, 'unhold', true],
    ['succeeded', true, 'unhold', false],
    ['rejected', true, 'unhold', false],
    ['held', true, 'unhold', false],
  ])('%s (two-step %s), %s: %s', (status, twoStep, action, done) => {
    expect(holdActionDone({ status, twoStep }, action)).toBe(done);
  });
});
