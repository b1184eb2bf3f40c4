/**
 * Every delayed action of the sandbox (payer-less completions, refund and payout progress,
 * notification retries, slow answers) runs through one scheduler, so `timeScale` shrinks them
 * all and `close()` / reset cancels them all.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    /** Multiplier applied to sandbox delays (0.001 in tests). */
    private readonly timeScale: () => number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs `task` after `ms` of sandbox time (`ms × timeScale` of real time). */
  after(ms: number, task: () => void | Promise<void>): void {
    this.afterReal(ms * this.timeScale(), task);
  }

  /** Runs `task` after `ms` of real time. */
  afterReal(ms: number, task: () => void | Promise<void>): void {
    if (this.closed) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        Promise.resolve()
          .then(task)
          .catch((e: unknown) => this.onError(e));
      },
      Math.max(0, Math.round(ms)),
    );
    this.timers.add(timer);
  }

  /** Resolves after `ms` of real time; never when cancelled first (its connection is closed then). */
  sleepReal(ms: number): Promise<void> {
    return new Promise((resolve) => this.afterReal(ms, resolve));
  }

  /** Cancels everything scheduled (on reset); later tasks are still accepted. */
  cancelAll(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Cancels everything and accepts nothing more (on close). */
  close(): void {
    this.closed = true;
    this.cancelAll();
  }
}
