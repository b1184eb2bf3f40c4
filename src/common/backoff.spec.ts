import { backoffSeconds } from './backoff';

describe('backoffSeconds: the base doubled per step, capped', () => {
  it.each<[number, number, number | undefined, number]>([
    [10, 0, undefined, 10],
    [10, 1, undefined, 20],
    [10, 3, undefined, 80],
    [10, 100, undefined, 3600],
    [30, 7, 3600, 3600],
    [30, 6, 3600, 1920],
    [5, 1_000_000, 60, 60],
  ])('base %p, %p doublings, cap %p: %p s', (base, n, cap, want) => {
    expect(backoffSeconds(base, n, cap)).toBe(want);
  });

  it('is finite and capped for any count of attempts', () => {
    for (const n of [0, 1, 29, 30, 31, 1023, 1024, Number.MAX_SAFE_INTEGER])
      expect(Number.isFinite(backoffSeconds(1, n))).toBe(true);
  });
});
