/**
 * Concurrent calls with one key share one run: a burst of `?refresh=true` on one object makes one
 * gateway call, and every caller gets its outcome. A call after the run settled starts a new run.
 */
export class Coalescer<T = void> {
  private readonly inflight = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key);
    if (running) return running;
    const started = fn().finally(() => this.inflight.delete(key));
    this.inflight.set(key, started);
    return started;
  }
}
