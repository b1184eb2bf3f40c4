import type { DataSource, EntityManager } from 'typeorm';
import { transactionFor, type By } from '../common/actor';
import { crashPoint } from '../common/crash-point';

/**
 * One gateway-operation runner (docs/design.md): every call that can
 * move money (invoice create/hold, charge, unhold, refund create, payout create and re-create)
 * and every status question that writes what it learns has the same shape, and this is the one
 * place that owns it:
 *
 * 1. **claim**: committed by the domain before the runner starts (an INSERT with the claim, or an
 *    UPDATE that takes it): who calls, since when, until when the call is presumed alive;
 * 2. **call**: the gateway is asked with no transaction and no connection held; its outcome is
 *    a value (a time-out is an answer like any other: "unknown"), never an exception here;
 * 3. **record**: the usual answer in one statement conditional on the row's version when the
 *    domain has one (`recordUnchanged`), else a short row lock and the answer through the
 *    object's one rule function (`record`), the stored answer and the event in that transaction.
 *
 * The crash points `<name>.after_claim`, `<name>.after_answer` and `<name>.after_result` sit
 * between the phases, the same for every operation (the chaos suite kills the process there).
 * Each domain supplies only its call, its lock and its rule; what an answer means is never
 * decided here.
 */

/** A gateway call's outcome as a value, so it can be written after the call with nothing held. */
export type CallAnswer<T> = { ok: true; value: T } | { ok: false; err: unknown };

/** Phase 2 alone: the call with nothing held, its outcome (an error included) as a value. */
export async function ask<T>(call: () => Promise<T>): Promise<CallAnswer<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    return { ok: false, err };
  }
}

export interface GatewayOperation<Row, T, R> {
  /** `<object>.<operation>`, e.g. `invoice.create`: names the operation's crash points. */
  name: string;
  /** Who the operation acts for: phase 3's transaction records its key (undefined: the service). */
  by: By;
  /** Phase 2: the gateway call. */
  call: () => Promise<T>;
  /**
   * Phase 3 without the row lock, for the usual answer: one statement written only if the row
   * is still the version its claim left. Null: not the usual case, or the row changed since
   * (nothing was written); the locked path then records the answer.
   */
  recordUnchanged?: (answer: CallAnswer<T>) => Promise<R | null>;
  /** Phase 3: the row read and locked (FOR UPDATE) in the runner's transaction; null: gone. */
  lock: (m: EntityManager) => Promise<Row | null>;
  /** The answer when `lock` finds no row; an Error returned is thrown. */
  missing: () => NoInfer<R> | Error;
  /**
   * Phase 3 under the row lock: the answer through the object's rule, the stored answer and the
   * event in the same transaction. An Error returned (not thrown) is a refusal whose state must
   * commit before the caller hears of it: the runner throws it after the commit.
   */
  record: (m: EntityManager, row: Row, answer: CallAnswer<T>) => Promise<R>;
}

/** Phases 2 and 3 of a claimed operation (phase 1 has committed); the caller's answer. */
export async function runGatewayOperation<Row, T, R>(
  dataSource: DataSource,
  op: GatewayOperation<Row, T, R>,
): Promise<Exclude<R, Error>> {
  crashPoint(`${op.name}.after_claim`);
  const answer = await ask(op.call);
  return recordAnswer(dataSource, op, answer);
}

/**
 * Phase 3 of an answer already had (a status question asked by a batch, or an answer another
 * step obtained): the same record phase and crash points as runGatewayOperation.
 */
export async function recordAnswer<Row, T, R>(
  dataSource: DataSource,
  op: Omit<GatewayOperation<Row, T, R>, 'call'>,
  answer: CallAnswer<T>,
): Promise<Exclude<R, Error>> {
  crashPoint(`${op.name}.after_answer`);
  if (op.recordUnchanged) {
    const written = await op.recordUnchanged(answer);
    if (written !== null) {
      crashPoint(`${op.name}.after_result`);
      if (written instanceof Error) throw written;
      return written as Exclude<R, Error>;
    }
  }
  const result = await transactionFor(dataSource, op.by, async (m) => {
    const row = await op.lock(m);
    return row === null ? op.missing() : op.record(m, row, answer);
  });
  crashPoint(`${op.name}.after_result`);
  if (result instanceof Error) throw result;
  return result as Exclude<R, Error>;
}
