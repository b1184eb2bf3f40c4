/**
 * How long an object is watched (issue #22), pure: before its deadline at its own cadence (never
 * past the deadline: one look there); from the deadline on it is flagged and asked every
 * WATCH_INTERVAL_S; once WATCH_MAX_S after its creation has passed it is no longer asked and
 * an operator alone decides. A final status ends the watch before any of this.
 */
export interface WatchWindow {
  /** WATCH_INTERVAL_S */
  intervalS: number;
  /** WATCH_MAX_S, from the object's creation. */
  maxS: number;
}

export interface WatchStep {
  /** When to ask next; null: the watch has ended. */
  nextAt: Date | null;
  /** The flag the watch puts on the object now, if any. */
  flag: 'deadline' | 'watch_ended' | null;
}

/** When the watch of an object created at `createdAt` ends. */
export function watchEnd(createdAt: Date, watch: WatchWindow): Date {
  return new Date(createdAt.getTime() + watch.maxS * 1000);
}

export function nextWatchStep(p: {
  now: Date;
  createdAt: Date;
  deadline: Date | null;
  /** The object's own next time before its deadline (its poll interval or backoff). */
  cadenceAt: Date;
  watch: WatchWindow;
}): WatchStep {
  const now = p.now.getTime();
  const end = watchEnd(p.createdAt, p.watch).getTime();
  if (now >= end) return { nextAt: null, flag: 'watch_ended' };
  if (p.deadline === null || now < p.deadline.getTime()) {
    let at = Math.min(p.cadenceAt.getTime(), end);
    if (p.deadline !== null) at = Math.min(at, p.deadline.getTime());
    return { nextAt: new Date(at), flag: null };
  }
  return { nextAt: new Date(Math.min(now + p.watch.intervalS * 1000, end)), flag: 'deadline' };
}
