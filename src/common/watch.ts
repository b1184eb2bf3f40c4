/**
 * How long an object is watched, pure: before its deadline at its own cadence (never
 * past the deadline: one look there); from the deadline on it is flagged and asked every
 * WATCH_INTERVAL_S; once WATCH_MAX_S after its watch started has passed it is no longer asked
 * and an operator alone decides. A final status ends the watch before any of this. The watch
 * starts when the object can first move money: an invoice's or a refund's creation, a payout's
 * send (payout.rules.ts `watchStart`; a payout awaiting approval is not watched).
 */
export interface WatchWindow {
  /** WATCH_INTERVAL_S */
  intervalS: number;
  /** WATCH_MAX_S, from the start of the object's watch. */
  maxS: number;
}

export interface WatchStep {
  /** When to ask next; null: the watch has ended. */
  nextAt: Date | null;
  /** The flag the watch puts on the object now, if any. */
  flag: 'deadline' | 'watch_ended' | null;
}

/** When the watch of an object whose watch started at `start` ends. */
export function watchEnd(start: Date, watch: WatchWindow): Date {
  return new Date(start.getTime() + watch.maxS * 1000);
}

/**
 * The same rule as `watchEnd`, for a statement: SQL true while the watch of the row whose watch
 * started at `startColumn` still runs at `clock_now()` (now < watchEnd(start); exact, the interval is in
 * seconds only), WATCH_MAX_S passed as the parameter `maxSParam` (`$3`). Every scheduling
 * statement that asks "is this row still watched" uses it, with the column its watch starts at
 * (`created_at`; a payout's send time where its watch starts there), so a change to the rule
 * changes every path; test/database/watch-sql.e2e-spec.ts holds the two to the same answers on PostgreSQL.
 */
export function watchRunsSql(startColumn: string, maxSParam: string): string {
  if (!/^[a-z_][a-z0-9_.]*$/.test(startColumn) || !/^\$[0-9]+$/.test(maxSParam))
    throw new Error(`watchRunsSql: not a column and a parameter: ${startColumn}, ${maxSParam}`);
  // Written with the column alone on one side, so an index on it can serve the comparison.
  return `${startColumn} > clock_now() - make_interval(secs => ${maxSParam})`;
}

/** Whether the watch that started at `start` still runs at `now` (watchRunsSql's rule in TS). */
export function watchRuns(now: Date, start: Date, watch: WatchWindow): boolean {
  return now.getTime() < watchEnd(start, watch).getTime();
}

export function nextWatchStep(p: {
  now: Date;
  /** When its watch started (see WatchWindow). */
  start: Date;
  deadline: Date | null;
  /** The object's own next time before its deadline (its poll interval or backoff). */
  cadenceAt: Date;
  watch: WatchWindow;
}): WatchStep {
  const now = p.now.getTime();
  const end = watchEnd(p.start, p.watch).getTime();
  if (!watchRuns(p.now, p.start, p.watch)) return { nextAt: null, flag: 'watch_ended' };
  if (p.deadline === null || now < p.deadline.getTime()) {
    let at = Math.min(p.cadenceAt.getTime(), end);
    if (p.deadline !== null) at = Math.min(at, p.deadline.getTime());
    return { nextAt: new Date(at), flag: null };
  }
  return { nextAt: new Date(Math.min(now + p.watch.intervalS * 1000, end)), flag: 'deadline' };
}
