import { clock, makeClockMovable, moveClock } from '../common/clock';
import { Scheduler } from './scheduler';

/** The sandbox's tasks are due at a time of the clock; an advance runs those it passes, in order. */
describe('Scheduler under the sandbox clock', () => {
  let s: Scheduler;
  beforeAll(() => makeClockMovable(0));
  afterEach(() => s.close());

  it('runs the tasks an advance passes in due order, tasks they schedule included, and not the later ones', async () => {
    s = new Scheduler(
      () => 1,
      (e) => {
        throw e;
      },
    );
    const ran: string[] = [];
    s.afterReal(3_600_000, () => {
      ran.push('hour');
      s.afterReal(60_000, () => void ran.push('hour+minute'));
    });
    s.afterReal(60_000, () => void ran.push('minute'));
    s.afterReal(86_400_000 * 2, () => void ran.push('two days'));
    const start = clock.now();
    const moves: number[] = [];
    const n = await s.runDue(start + 86_400_000, (at) => {
      moves.push(at);
      moveClock(Math.max(clock.offsetSeconds(), (at - Date.now()) / 1000));
    });
    expect(n).toBe(3);
    expect(ran).toEqual(['minute', 'hour', 'hour+minute']);
    expect(moves).toEqual([...moves].sort((a, b) => a - b));
    expect(s.nextDueAt()).toBeGreaterThan(start + 86_400_000);
  });

  it('runs a task once, whichever comes first: its timer or an advance', async () => {
    s = new Scheduler(
      () => 1,
      (e) => {
        throw e;
      },
    );
    let runs = 0;
    s.afterReal(5, () => void runs++);
    await new Promise((r) => setTimeout(r, 30));
    expect(await s.runDue(clock.now() + 1000, () => undefined)).toBe(0);
    expect(runs).toBe(1);
  });
});
