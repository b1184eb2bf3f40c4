import { backoffSeconds } from '../common/backoff';
import { nextWatchStep, type WatchStep, type WatchWindow } from '../common/watch';

/** Longest wait between two checks of one invoice. */
export const MAX_BACKOFF_S = 3600;

/**
 * When to check an open invoice again (pure): before its deadline grace × 2^(attempts+1),
 * capped at an hour and at the deadline (one look there); from the deadline on it is flagged
 * and still checked every WATCH_INTERVAL_S until WATCH_MAX_S after its creation.
 */
export function nextInvoiceCheck(p: {
  now: Date;
  attempts: number;
  deadline: Date | null;
  graceS: number;
  createdAt: Date;
  watch: WatchWindow;
}): WatchStep {
  const waitS = backoffSeconds(p.graceS, p.attempts + 1, MAX_BACKOFF_S);
  return nextWatchStep({
    now: p.now,
    start: p.createdAt,
    deadline: p.deadline,
    cadenceAt: new Date(p.now.getTime() + waitS * 1000),
    watch: p.watch,
  });
}
