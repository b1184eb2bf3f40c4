import { jest } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleJob, singleFlight } from './schedule';

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

describe('singleFlight', () => {
  it('shares the run in progress between concurrent calls, and starts a new one once it settles', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const once = singleFlight(() => {
      runs += 1;
      return new Promise<number>((resolve) => (release = () => resolve(runs)));
    });
    const a = once();
    const b = once();
    expect(b).toBe(a);
    release();
    expect(await Promise.all([a, b])).toEqual([1, 1]);
    const c = once();
    expect(c).not.toBe(a);
    release();
    expect(await c).toBe(2);
  });

  it('lets a failed run end the flight too', async () => {
    let runs = 0;
    const once = singleFlight(() => {
      runs += 1;
      return runs === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(runs);
    });
    await expect(once()).rejects.toThrow('boom');
    expect(await once()).toBe(2);
  });
});
