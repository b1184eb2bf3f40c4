import type { Logger } from 'pino';

/**
 * What a stop signal does (src/main.ts). The first SIGTERM or SIGINT closes the service: no new
 * requests, the ones in flight finish, the scheduler's rounds end, then the database. Should that
 * not end within `deadlineMs` (a step that hangs: a database that died under the service, a peer
 * that never answers), the process exits with code 1 and says why, rather than waiting for ever.
 * A second signal while closing exits at once with code 1 (a second Ctrl-C). Either way nothing
 * is lost: the work a forced exit cuts short is what a crash leaves, and reconciliation settles
 * it (an outcome not known is `unknown`, never sent twice).
 *
 * One stop often arrives twice: a terminal's Ctrl-C goes to the whole process group, and npm
 * (`npm start`) forwards the SIGINT it got to the service as well; systemd's default
 * `KillMode=control-group` does the same with SIGTERM. A signal within `repeatWindowMs` of the
 * first is taken as that same stop, not as a second Ctrl-C.
 */
export function gracefulStop(opts: {
  close: () => Promise<void>;
  deadlineMs: number;
  exit: (code: number) => void;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Signals this soon after the first are the same stop delivered twice. */
  repeatWindowMs?: number;
}): (signal: string) => void {
  const repeatWindowMs = opts.repeatWindowMs ?? STOP_REPEAT_WINDOW_MS;
  let firstAt: number | null = null;
  return (signal) => {
    if (firstAt !== null) {
      if (performance.now() - firstAt < repeatWindowMs) {
        opts.log.info({ signal }, 'stop signal delivered again: already shutting down');
        return;
      }
      opts.log.warn({ signal }, 'second stop signal: exiting now, shutdown not finished');
      opts.exit(1);
      return;
    }
    firstAt = performance.now();
    opts.log.info({ signal, deadlineMs: opts.deadlineMs }, 'shutting down');
    const deadline = setTimeout(() => {
      opts.log.error({ deadlineMs: opts.deadlineMs }, 'shutdown did not finish in time: exiting');
      opts.exit(1);
    }, opts.deadlineMs);
    opts.close().then(
      () => {
        clearTimeout(deadline);
        opts.exit(0);
      },
      (e: unknown) => {
        clearTimeout(deadline);
        opts.log.error({ err: e instanceof Error ? e.message : String(e) }, 'shutdown failed');
        opts.exit(1);
      },
    );
  };
}

/** How soon after the first a stop signal counts as the same stop (see gracefulStop). */
const STOP_REPEAT_WINDOW_MS = 1000;

/**
 * How long a shutdown may take: the longest a request in flight can legitimately last (one
 * gateway call, GATEWAY_TIMEOUT_MS) and ten seconds for the rest (its statements, the
 * scheduler's round, closing the pool and an embedded database).
 */
export function shutdownDeadlineMs(gatewayTimeoutMs: number): number {
  return gatewayTimeoutMs + 10_000;
}
