import { DatabaseError } from 'pg';
import { dbWriteBatches } from '../metrics/metrics';

/**
 * Single-row autocommit writes that arrive in the same turn of the event loop go to the
 * database as one statement ("batch what is batchable", applied to writes as
 * BatchedRead applies it to reads). Each statement costs the process far more CPU than its row,
 * and each autocommit costs PostgreSQL a commit (a WAL flush): one statement for the turn's rows
 * costs about what one row did.
 *
 * What a caller sees does not change:
 * - a row is written after it was asked for (at the end of the turn that asked, or as soon as
 *   `maxBatch` rows wait), in a statement of its own turn: it never waits for a later request;
 * - one row alone goes through the single-row statement, as before;
 * - a batch statement is one autocommit statement: all its rows commit or none. When PostgreSQL
 *   refuses it (a SQLSTATE: bad data, a constraint, a conflict), nothing was written, and each
 *   row is written again alone, so each caller gets its own row's outcome, as if it had been
 *   alone. When the outcome is not known (the connection failed), every caller of the batch gets
 *   that error, as a single row's caller would: nothing is written twice;
 * - two rows of one turn with the same key never share a statement: the second is written alone
 *   once the first's statement has answered (so it meets the first row as it would have).
 */
export class BatchedWrite<I, O> {
  private pending: Batch<I, O> | null = null;

  constructor(
    private readonly opts: {
      /** Names the writer in `db_write_batches_total`. */
      name: string;
      /** The single-row statement. */
      one: (item: I) => Promise<O>;
      /** One statement for several rows (keys distinct); the outcome of each, in `items`' order. */
      many: (items: I[]) => Promise<O[]>;
      /** Rows with the same key never share a statement. */
      key: (item: I) => string;
      maxBatch?: number;
      /**
       * After `many` failed with `err`, whether each row may be written again alone (default:
       * refusedWhole, PostgreSQL refused the statement so nothing was written). A writer whose
       * rows are idempotent (written twice, found the second time) may say yes to any failure.
       */
      aloneAfter?: (err: unknown) => boolean;
    },
  ) {
    const max = opts.maxBatch ?? 100;
    if (!Number.isInteger(max) || max < 1) throw new Error('maxBatch must be ≥ 1');
  }

  write(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      let batch = this.pending;
      if (batch === null) {
        const fresh: Batch<I, O> = { rows: new Map(), repeats: [], sent: false };
        this.pending = batch = fresh;
        setImmediate(() => this.send(fresh));
      }
      const key = this.opts.key(item);
      const waiter = { item, resolve, reject };
      if (batch.rows.has(key)) batch.repeats.push(waiter);
      else batch.rows.set(key, waiter);
      if (batch.rows.size >= (this.opts.maxBatch ?? 100)) this.send(batch);
    });
  }

  private send(batch: Batch<I, O>): void {
    if (batch.sent) return;
    batch.sent = true;
    if (this.pending === batch) this.pending = null;
    const waiters = [...batch.rows.values()];
    if (waiters.length === 1) this.count('one');
    const done = waiters.length === 1 ? this.alone(waiters[0]) : this.together(waiters);
    // A repeated key meets the first row's statement as a later request would.
    void done.then(() => {
      for (const w of batch.repeats) {
        this.count('one');
        void this.alone(w);
      }
    });
  }

  private alone(w: Waiter<I, O>): Promise<void> {
    // Through a promise, so a writer that throws before it returns fails its caller, not the turn.
    return Promise.resolve(w.item)
      .then((item) => this.opts.one(item))
      .then(w.resolve, w.reject);
  }

  private async together(waiters: Waiter<I, O>[]): Promise<void> {
    let outcomes: O[];
    try {
      outcomes = await this.opts.many(waiters.map((w) => w.item));
    } catch (err) {
      if (!(this.opts.aloneAfter ?? refusedWhole)(err)) {
        this.count('failed');
        for (const w of waiters) w.reject(err);
        return;
      }
      this.count('row_by_row');
      // Nothing was written: each row on its own, each caller its own outcome.
      await Promise.all(waiters.map((w) => this.alone(w)));
      return;
    }
    if (outcomes.length !== waiters.length) {
      const err = new Error(
        `batched write: ${outcomes.length} outcomes for ${waiters.length} rows`,
      );
      for (const w of waiters) w.reject(err);
      return;
    }
    this.count('batch');
    waiters.forEach((w, i) => w.resolve(outcomes[i]));
  }

  private count(outcome: 'one' | 'batch' | 'row_by_row' | 'failed'): void {
    dbWriteBatches.inc({ writer: this.opts.name, outcome });
  }
}

/**
 * PostgreSQL answered the statement with an error of its own (a SQLSTATE) that rolls the
 * statement back: nothing of it was written. Not a lost connection (class 08), an operator's
 * intervention (57, the server shutting down), lack of resources (53), a system error (58) or
 * an internal error (XX): there the commit's fate is not known from here.
 */
export function refusedWhole(err: unknown): boolean {
  if (!(err instanceof DatabaseError)) return false;
  const code = err.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false;
  return !['08', '57', '53', '58', 'XX'].includes(code.slice(0, 2));
}

interface Waiter<I, O> {
  item: I;
  resolve(outcome: O): void;
  reject(err: unknown): void;
}

interface Batch<I, O> {
  readonly rows: Map<string, Waiter<I, O>>;
  readonly repeats: Waiter<I, O>[];
  sent: boolean;
}
