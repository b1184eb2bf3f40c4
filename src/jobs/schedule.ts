import { SchedulerRegistry } from '@nestjs/schedule';
import type { Logger } from 'pino';

/**
 * Registers a recurring job with @nestjs/schedule: `run` every `everyMs`, never two runs of it at
 * once in this instance (a slow run makes the next ticks skip, not pile up), failures logged.
 * Cross-instance safety is the job's own business (claimDue's row leases).
 */
export function scheduleJob(
  scheduler: SchedulerRegistry,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
  log: Pick<Logger, 'error'>,
  opts: { runAtStart?: boolean } = {},
): void {
  let busy = false;
  const tick = (): void => {
    if (busy) return;
    busy = true;
    run()
      .catch((err: unknown) =>
        log.error(
          { job: name, err: err instanceof Error ? err.message : String(err) },
          'scheduled job failed',
        ),
      )
      .finally(() => {
        busy = false;
      });
  };
  scheduler.addInterval(name, setInterval(tick, everyMs));
  if (opts.runAtStart) tick();
}

/**
 * Wraps a job's run so that concurrent calls (the scheduler's tick, a test, an admin action)
 * share the run in progress instead of starting a second one in this instance.
 */
export function singleFlight<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () =>
    (running ??= run().finally(() => {
      running = null;
    }));
}
