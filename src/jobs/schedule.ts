import { SchedulerRegistry } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { jobTracing } from '../tracing/tracing';

/** Per application (its SchedulerRegistry): whether it is stopping, and the runs in progress. */
interface Jobs {
  stopping: boolean;
  readonly running: Set<Promise<unknown>>;
}
const jobsOf = new WeakMap<SchedulerRegistry, Jobs>();

function jobs(scheduler: SchedulerRegistry): Jobs {
  let j = jobsOf.get(scheduler);
  if (!j) jobsOf.set(scheduler, (j = { stopping: false, running: new Set() }));
  return j;
}

/**
 * Registers a recurring job with @nestjs/schedule: `run` every `everyMs`, never two runs of it at
 * once in this instance (a slow run makes the next ticks skip, not pile up), failures logged.
 * Cross-instance safety is the job's own business (claimDue's row leases). Once the application
 * is stopping (stopJobs), no new run starts.
 */
export function scheduleJob(
  scheduler: SchedulerRegistry,
  name: string,
  everyMs: number,
  run: () => Promise<unknown>,
  log: Pick<Logger, 'error'>,
  opts: { runAtStart?: boolean } = {},
): void {
  const state = jobs(scheduler);
  let busy = false;
  const tick = (): void => {
    if (busy || state.stopping) return;
    busy = true;
    // Tracing on (src/tracing): a span per round.
    const span = jobTracing(scheduler)?.startSpan(`job ${name}`, 'internal', undefined, { 'job.name': name });
    let failed: string | undefined;
    const running = run()
      .catch((err: unknown) => {
        failed = err instanceof Error ? err.message : String(err);
        log.error({ job: name, err: failed }, 'scheduled job failed');
      })
      .finally(() => {
        busy = false;
        state.running.delete(running);
        span?.end(failed);
      });
    state.running.add(running);
  };
  scheduler.addInterval(name, setInterval(tick, everyMs));
  if (opts.runAtStart) tick();
}

/** True once the application's shutdown began: a long run ends at its next step. */
export function jobsStopping(scheduler: SchedulerRegistry): boolean {
  return jobs(scheduler).stopping;
}

/**
 * The first step of a shutdown's jobs part: no new run starts, and this waits for the runs in
 * progress (a round of gateway calls and their writes) to end, so the gateway client and the
 * database pool are not closed under them.
 */
export async function stopJobs(scheduler: SchedulerRegistry): Promise<void> {
  const state = jobs(scheduler);
  state.stopping = true;
  while (state.running.size > 0) await Promise.allSettled([...state.running]);
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
