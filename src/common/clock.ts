/**
 * The service's one clock. Every time-driven decision made in TypeScript reads `clock.now()`;
 * every one made in SQL reads `clock_now()` (src/database/clock-sql.ts), the same time.
 *
 * Outside sandbox mode it is the system clock: the offset is 0 and nothing can change it (no
 * route, no setting; `moveClock` refuses until sandbox mode's start-up has made it movable).
 * On the hot paths its cost is a property read and an addition.
 *
 * In sandbox mode the sandbox clock (src/sandbox/clock.routes.ts) moves it forward: the
 * offset is the number of seconds added to the system time, for the service and the in-process
 * gateway sandbox alike, and it only grows.
 */
let offsetMs = 0;
let movable = false;

export const clock = {
  /** Milliseconds since the epoch, as the service sees them. */
  now(): number {
    return Date.now() + offsetMs;
  },
  /** The same, as a Date. */
  date(): Date {
    return new Date(Date.now() + offsetMs);
  },
  /** Seconds the clock is ahead of the system clock (0 outside sandbox mode). */
  offsetSeconds(): number {
    return offsetMs / 1000;
  },
  /** True once sandbox mode made the clock movable. */
  movable(): boolean {
    return movable;
  },
};

export class ClockNotMovable extends Error {
  readonly code = 'clock-not-movable';
}

/**
 * Sandbox mode only (src/bootstrap.ts): the clock may move, starting from the offset a
 * previous run left (kept in the database, so a restart never moves the clock back).
 */
export function makeClockMovable(startOffsetSeconds: number): void {
  movable = true;
  offsetMs = Math.max(0, startOffsetSeconds) * 1000;
}

/** Sets the offset (forward only); refused outside sandbox mode. */
export function moveClock(offsetSeconds: number): void {
  if (!movable) throw new ClockNotMovable('the clock only moves in sandbox mode');
  if (!Number.isFinite(offsetSeconds) || offsetSeconds * 1000 < offsetMs)
    throw new ClockNotMovable('the clock only moves forward');
  offsetMs = offsetSeconds * 1000;
}
