import { nextWatchStep } from './watch';

describe('nextWatchStep: watched until final, flagged at the deadline, never dropped before the watch ends', () => {
  const createdAt = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(createdAt.getTime() + s * 1000);
  const watch = { intervalS: 600, maxS: 7 * 86400 };
  const deadline = at(7200);

  it.each<[string, number, number, number | null, 'deadline' | 'watch_ended' | null]>([
    ['before the deadline: its own cadence', 100, 130, 130, null],
    ['never past the deadline: one look there', 7190, 7220, 7200, null],
    ['at the deadline: flagged, asked again a watch interval later', 7200, 7230, 7800, 'deadline'],
    ['long past the deadline: still asked every interval', 86400, 86430, 87000, 'deadline'],
    ['the last look is at the watch end', 7 * 86400 - 100, 0, 7 * 86400, 'deadline'],
    ['at the watch end: no more questions, an operator decides', 7 * 86400, 0, null, 'watch_ended'],
    ['past it', 8 * 86400, 0, null, 'watch_ended'],
  ])('%s', (_n, nowS, cadenceS, nextS, flag) => {
    expect(
      nextWatchStep({ now: at(nowS), start: createdAt, deadline, cadenceAt: at(cadenceS), watch }),
    ).toEqual({ nextAt: nextS === null ? null : at(nextS), flag });
  });

  it('without a deadline the cadence holds until the watch end', () => {
    expect(
      nextWatchStep({ now: at(10), start: createdAt, deadline: null, cadenceAt: at(40), watch }),
    ).toEqual({ nextAt: at(40), flag: null });
  });
});
