import { clock } from '../common/clock';

const MAX_TIMER_MS = 2 ** 31 - 1;

interface Task {
  /** When it is due, on the service's clock (ms). */
  dueAt: number;
  seq: number;
  timer: NodeJS.Timeout;
  run: () => Promise<void>;
}

/**
 * Every delayed action of the sandbox (payer-less completions, refund and payout progress,
 * notification retries, hold lapses, slow answers) runs through one scheduler, so `timeScale`
 * shrinks them all, a reset cancels the background tasks and `close()` cancels everything.
 * Background tasks are due at a time of the clock (src/common/clock.ts): a timer runs each when
 * that time comes by itself, and the sandbox clock's advance runs those it skipped past, in the
 * order they were due (`runDue`).
 */
export class Scheduler {
  private readonly tasks = new Set<Task>();
  /** Slow answers under way: a reset lets them finish, close() drops them with their connections. */
  private readonly sleepers = new Set<NodeJS.Timeout>();
  private closed = false;
  private seq = 0;

  constructor(
    /** Multiplier applied to sandbox delays (0.001 in tests). */
    private readonly timeScale: () => number,
    private readonly onError: (error: unknown) => void,
    /** Runs after every task (the state may have changed: a kept sandbox saves it). */
    private readonly afterTask: () => void = () => undefined,
  ) {}

  /** Runs `task` after `ms` of sandbox time (`ms × timeScale` of real time). */
  after(ms: number, task: () => void | Promise<void>): void {
    this.afterReal(ms * this.timeScale(), task);
  }

  /** Runs `task` after `ms` of the clock's time (real time, unless the sandbox clock moves). */
  afterReal(ms: number, task: () => void | Promise<void>): void {
    if (this.closed) return;
    const delay = Math.max(0, Math.round(ms));
    const entry: Task = {
      dueAt: clock.now() + delay,
      seq: this.seq++,
      timer: this.arm(() => entry, delay),
      run: () =>
        Promise.resolve()
          .then(task)
          .catch((e: unknown) => this.onError(e))
          .finally(this.afterTask)
          .catch((e: unknown) => this.onError(e)),
    };
    this.tasks.add(entry);
  }

  /** A timer for the task, re-armed while it is not due (a delay past setTimeout's 24.8 days). */
  private arm(entry: () => Task, delay: number): NodeJS.Timeout {
    return setTimeout(
      () => {
        const t = entry();
        const left = t.dueAt - clock.now();
        if (left > 0 && this.tasks.has(t)) t.timer = this.arm(entry, left);
        else void this.fire(t);
      },
      Math.min(delay, MAX_TIMER_MS),
    );
  }

  /** Runs one task once, whichever comes first: its timer or an advance of the clock. */
  private fire(entry: Task): Promise<void> {
    if (!this.tasks.delete(entry)) return Promise.resolve();
    clearTimeout(entry.timer);
    return entry.run();
  }

  /** The earliest due time of the tasks waiting (ms on the clock), or null. */
  nextDueAt(): number | null {
    let next: number | null = null;
    for (const t of this.tasks) if (next === null || t.dueAt < next) next = t.dueAt;
    return next;
  }

  /**
   * Runs, in due order, every task due by `until` (ms on the clock), tasks they schedule
   * included; `moveTo` is called before each with its due time (the clock stepping forward).
   * Returns how many ran. Bounded: a task that keeps rescheduling itself stops at `limit`.
   */
  async runDue(until: number, moveTo: (at: number) => void, limit = 10_000): Promise<number> {
    let ran = 0;
    while (ran < limit && !this.closed) {
      let first: Task | undefined;
      for (const t of this.tasks)
        if (t.dueAt <= until && (first === undefined || t.dueAt < first.dueAt || (t.dueAt === first.dueAt && t.seq < first.seq)))
          first = t;
      if (first === undefined) break;
      moveTo(first.dueAt);
      await this.fire(first);
      ran++;
    }
    return ran;
  }

  /** Resolves after `ms` of real time; never once closed (its connection is closed then). */
  sleepReal(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return;
      const timer = setTimeout(
        () => {
          this.sleepers.delete(timer);
          resolve();
        },
        Math.max(0, Math.round(ms)),
      );
      this.sleepers.add(timer);
    });
  }

  /** Cancels the background tasks (on reset); later tasks are still accepted. */
  cancelAll(): void {
    for (const t of this.tasks) clearTimeout(t.timer);
    this.tasks.clear();
  }

  /** Cancels everything and accepts nothing more (on close). */
  close(): void {
    this.closed = true;
    this.cancelAll();
    for (const timer of this.sleepers) clearTimeout(timer);
    this.sleepers.clear();
  }
}
