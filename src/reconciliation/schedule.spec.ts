import { jest } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleJob } from './schedule';

describe('scheduleJob', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs at its cadence and never overlaps itself', async () => {
    const registry = new SchedulerRegistry();
    const log = { error: jest.fn() };
    let started = 0;
    let finish: () => void = () => undefined;
    scheduleJob(
      registry,
      'job',
      1000,
      () =>
        new Promise<void>((resolve) => {
          started += 1;
          finish = resolve;
        }),
      log,
    );
    expect(started).toBe(0);
    await jest.advanceTimersByTimeAsync(1000);
    expect(started).toBe(1);
    await jest.advanceTimersByTimeAsync(5000); // the first run is still going: ticks skip
    expect(started).toBe(1);
    finish();
    await jest.advanceTimersByTimeAsync(1000);
    expect(started).toBe(2);
    clearInterval(registry.getInterval('job') as NodeJS.Timeout);
  });

  it('logs a failed run and keeps ticking', async () => {
    const registry = new SchedulerRegistry();
    const log = { error: jest.fn() };
    let runs = 0;
    scheduleJob(
      registry,
      'failing',
      500,
      () => {
        runs += 1;
        return Promise.reject(new Error('boom'));
      },
      log,
      { runAtStart: true },
    );
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(3);
    expect(log.error).toHaveBeenCalledWith({ job: 'failing', err: 'boom' }, 'scheduled job failed');
    clearInterval(registry.getInterval('failing') as NodeJS.Timeout);
  });
});
