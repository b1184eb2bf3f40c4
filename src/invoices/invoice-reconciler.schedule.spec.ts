import { MAX_BACKOFF_S, nextInvoiceCheck } from './invoice-reconciler.schedule';

describe('nextInvoiceCheck', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(now.getTime() + s * 1000);
  const createdAt = at(-3600);
  const watch = { intervalS: 600, maxS: 7 * 86400 };

  it.each([
    [0, 240],
    [1, 480],
    [3, 1920],
    [5, MAX_BACKOFF_S],
    [40, MAX_BACKOFF_S],
  ])('after %i attempts waits %i s (grace 120 s, capped at an hour)', (attempts, waitS) => {
    expect(
      nextInvoiceCheck({ now, attempts, deadline: null, graceS: 120, createdAt, watch }),
    ).toEqual({ nextAt: at(waitS), flag: null });
  });

  it('never schedules past the deadline', () => {
    expect(
      nextInvoiceCheck({ now, attempts: 4, deadline: at(100), graceS: 120, createdAt, watch }),
    ).toEqual({ nextAt: at(100), flag: null });
  });

  it('past the deadline: flagged and still checked every WATCH_INTERVAL_S', () => {
    expect(
      nextInvoiceCheck({ now, attempts: 4, deadline: at(0), graceS: 120, createdAt, watch }),
    ).toEqual({ nextAt: at(600), flag: 'deadline' });
  });

  it('past WATCH_MAX_S after its creation: no more checks, the watch has ended', () => {
    expect(
      nextInvoiceCheck({
        now,
        attempts: 4,
        deadline: at(-7200),
        graceS: 120,
        createdAt: at(-7 * 86400),
        watch,
      }),
    ).toEqual({ nextAt: null, flag: 'watch_ended' });
  });
});
