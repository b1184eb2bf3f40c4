/**
 * Reads by key that arrive in the same turn of the event loop go to the database as one
 * statement ("batch what is batchable"). Under load a service answers many reads
 * per turn, and each statement costs the process far more CPU than the rows it returns; one
 * `… = ANY($n)` statement for the turn's keys costs about what one read did.
 *
 * What a caller sees does not change: the statement is sent after the read was asked for (at
 * the end of the turn that asked it, or as soon as `maxBatch` keys wait), so it sees every write
 * committed before the read began; a key asked twice in one turn is read once and both callers
 * get the row; a key with no row resolves to `undefined`; a failed statement fails every read
 * of its batch with that error.
 */
export class BatchedRead<K, R> {
  private pending: Batch<K, R> | null = null;

  constructor(
    private readonly load: (keys: K[]) => Promise<ReadonlyMap<K, R>>,
    private readonly maxBatch = 100,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new Error('maxBatch must be ≥ 1');
  }

  get(key: K): Promise<R | undefined> {
    return new Promise<R | undefined>((resolve, reject) => {
      let batch = this.pending;
      if (batch === null) {
        const fresh: Batch<K, R> = { waiting: new Map(), sent: false };
        this.pending = batch = fresh;
        setImmediate(() => this.send(fresh));
      }
      const waiters = batch.waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else batch.waiting.set(key, [{ resolve, reject }]);
      if (batch.waiting.size >= this.maxBatch) this.send(batch);
    });
  }

  private send(batch: Batch<K, R>): void {
    if (batch.sent) return;
    batch.sent = true;
    if (this.pending === batch) this.pending = null;
    const keys = [...batch.waiting.keys()];
    // Through a promise, so a loader that throws before it returns fails its batch, not the turn.
    Promise.resolve(keys)
      .then((k) => this.load(k))
      .then(
        (rows) => {
          for (const [key, waiters] of batch.waiting) {
            const row = rows.get(key);
            for (const w of waiters) w.resolve(row);
          }
        },
        (err: unknown) => {
          for (const waiters of batch.waiting.values()) for (const w of waiters) w.reject(err);
        },
      );
  }
}

interface Batch<K, R> {
  readonly waiting: Map<
    K,
    Array<{ resolve(row: R | undefined): void; reject(err: unknown): void }>
  >;
  sent: boolean;
}
