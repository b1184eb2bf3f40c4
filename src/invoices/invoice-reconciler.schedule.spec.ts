import { MAX_BACKOFF_S, nextInvoiceCheck } from './invoice-reconciler.schedule';

describe('nextInvoiceCheck', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(now.getTime() + s * 1000);

  it.each([
    [0, 240],
    [1, 480],
    [3, 1920],
    [5, MAX_BACKOFF_S],
    [40, MAX_BACKOFF_S],
  ])('after %i attempts waits %i s (grace 120 s, capped at an hour)', (attempts, waitS) => {
    expect(nextInvoiceCheck({ now, attempts, deadline: null, graceS: 120 })).toEqual({
      nextCheckAt: at(waitS),
      needsAttention: false,
    });
  });

  it('never schedules past the deadline, and flags the invoice once it has passed', () => {
    expect(nextInvoiceCheck({ now, attempts: 4, deadline: at(100), graceS: 120 })).toEqual({
      nextCheckAt: at(100),
      needsAttention: false,
    });
    expect(nextInvoiceCheck({ now, attempts: 4, deadline: at(0), graceS: 120 })).toEqual({
      nextCheckAt: null,
      needsAttention: true,
    });
  });
});
