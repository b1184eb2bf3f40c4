import { eventTitle, statusWords } from './timeline-words';

describe('timeline lines in words', () => {
  const refund = { type: 'refund', id: 'refund-1001-1', amount: '500', currency: 643 };

  it.each([
    [refund, 'WAITING', 'SUCCESS', 'notification', 'Refund refund-1001-1 of 500.00 RUB succeeded (gateway notification)'],
    [refund, null, 'WAITING', 'api', 'Refund refund-1001-1 of 500.00 RUB created, waiting (shop API)'],
    [{ type: 'invoice', id: 'order-1', amount: '1080.2', currency: 840 }, 'awaiting_payer', 'held', 'gateway', 'Invoice order-1 of 1080.20 USD held (gateway answer)'],
    [{ type: 'invoice', id: 'order-1', amount: '10', currency: 643 }, 'succeeded', 'succeeded', 'admin', 'Invoice order-1 of 10.00 RUB updated (still succeeded) (operator)'],
    [{ type: 'payout', id: 'p-1', amount: null, currency: null }, 'pending', 'needs_attention', 'reconciliation', 'Payout p-1 needing attention (reconciliation)'],
  ])('%j %s → %s (%s)', (object, from, to, cause, line) => {
    expect(eventTitle(object, from, to, cause)).toBe(line);
  });

  it('never shows a raw status name', () => {
    for (const s of ['awaiting_payer', 'ps_create_failed', 'SUCCESS', 'needs_attention'])
      expect(statusWords(s)).not.toMatch(/_|^[A-Z]+$/);
  });
});
