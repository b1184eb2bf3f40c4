/**
 * Every delayed action of the sandbox (payer-less completions, refund and payout progress,
 * notification retries, slow answers) runs through one scheduler, so `timeScale` shrinks them
 * all, a reset cancels the background tasks and `close()` cancels everything.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Slow answers under way: a reset lets them finish, close() drops them with their connections. */
  private readonly sleepers = new Set<NodeJS.Timeout>();
  private closed = false;

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

  /** Runs `task` after `ms` of real time. */
  afterReal(ms: number, task: () => void | Promise<void>): void {
    this.track(this.timers, ms, () => {
      Promise.resolve()
        .then(task)
        .catch((e: unknown) => this.onError(e))
        .finally(this.afterTask)
        .catch((e: unknown) => this.onError(e));
    });
  }

  /** Resolves after `ms` of real time; never once closed (its connection is closed then). */
  sleepReal(ms: number): Promise<void> {
    return new Promise((resolve) => this.track(this.sleepers, ms, resolve));
  }

  private track(set: Set<NodeJS.Timeout>, ms: number, run: () => void): void {
    if (this.closed) return;
    const timer = setTimeout(
      () => {
        set.delete(timer);
        run();
      },
      Math.max(0, Math.round(ms)),
    );
    set.add(timer);
  }

  /** Cancels the background tasks (on reset); later tasks are still accepted. */
  cancelAll(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Cancels everything and accepts nothing more (on close). */
  close(): void {
    this.closed = true;
    this.cancelAll();
    for (const timer of this.sleepers) clearTimeout(timer);
    this.sleepers.clear();
  }
}
