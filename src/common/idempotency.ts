import type { DataSource, EntityManager } from 'typeorm';
import { transactionFor, type By } from './actor';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { idempotencyConflicts } from '../metrics/metrics';
import { raiseAttention, type AttentionObject } from './attention';
import { DIFFERS, IdempotencyConflict, IdempotencyLocked, type FieldError } from './errors';
import { logger } from './logger';

const TABLE: Record<ConflictObject, string> = {
  invoice: 'invoices',
  refund: 'refunds',
  payout: 'payouts',
  payout_batch: 'payout_batches',
};

/** Objects whose create id counts conflicting repeats (a payout batch has no attention flag). */
export type ConflictObject = AttentionObject | 'payout_batch';

/**
 * JSON with object keys sorted at every level, so key order never changes a comparison. Stored
 * fingerprints are hashes of this text: it must not change by a byte (the spec holds it against
 * the first version's output). Built with one key array per object and no intermediate entry
 * arrays: a create computes it on every request.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      // As Array.prototype.join: an element JSON has no text for (undefined) adds nothing.
      out += canonicalJson(value[i] as unknown) ?? '';
    }
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    // Default sort: by UTF-16 code units, as the comparison of the first version.
    const keys = Object.keys(object).sort();
    let out = '{';
    let first = true;
    for (const k of keys) {
      const v = object[k];
      if (v === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}

/**
 * The fields whose canonical values differ between the first request's facts and a repeat's,
 * by name, sorted. Absent, undefined and null are the same (an optional field left out).
 * Callers pass amounts already canonical (Amount.canonicalText), so "100.0" equals "100.00".
 */
export function differingFields(
  first: Record<string, unknown>,
  repeat: Record<string, unknown>,
): string[] {
  const norm = (v: unknown): string => canonicalJson(v ?? null);
  const names = new Set([...Object.keys(first), ...Object.keys(repeat)]);
  return [...names].filter((k) => norm(first[k]) !== norm(repeat[k])).sort();
}

/**
 * The group entry for secret fields in every conflict answer of an object that has them,
 * whether they differ or not: an answer that said so would let a caller test guesses of a card
 * number against the first request. Only a repeat that matches in every field
 * (secrets included) is replayed, and the conflict limit bounds how often that can be tried.
 */
export function secretFieldsEntry(fields: readonly string[]): FieldError {
  return {
    field: fields.join(', '),
    message: 'secret: never compared in an answer (they may differ or not)',
  };
}

/**
 * The conflict entries for secret fields: one secretFieldsEntry naming only the secret fields
 * among `fields` that this repeat itself sent (a value neither absent nor null in any of
 * `requests`: one create, or a batch's rows), none when it sent none. A field it did not send
 * is not named: the answer would only tell what the first request held. `prefix` names a
 * batch's row fields (`rows[].`). Every create's conflict answer uses it.
 */
export function secretFieldsSent(
  requests: readonly object[],
  fields: readonly string[],
  prefix = '',
): FieldError[] {
  const sent = fields.filter((f) =>
    requests.some((r) => {
      const v = (r as Record<string, unknown>)[f];
      return v !== undefined && v !== null;
    }),
  );
  return sent.length === 0 ? [] : [secretFieldsEntry(sent.map((f) => prefix + f))];
}

export interface ConflictTarget {
  object: ConflictObject;
  /** Primary key of the row. */
  id: string;
  /** The idempotency key's name (`shopOrderId`) and the shop's id (the audit entity id). */
  key: string;
  shopId: string;
  status: string;
  /** Conflicts counted on the row when it was read. */
  conflicts: number;
}

const audit = new AuditService();
const log = logger.child({ component: 'idempotency' });

/**
 * Before comparing a repeat: an id already past the limit is refused whatever the body.
 */
export function refuseIfLocked(t: ConflictTarget, limit: number): void {
  if (t.conflicts < limit) return;
  idempotencyConflicts.inc({ object: t.object, result: 'locked' });
  throw new IdempotencyLocked(t.key, t.shopId, limit, t.object);
}

/**
 * A repeat with another body: counted on the row atomically (UPDATE … RETURNING, never past the
 * limit, so concurrent repeats cannot slip by unnoticed), audited with the acting key's id, and
 * the object is flagged for an operator by the conflict that reaches the limit. Throws the
 * conflict naming `errors`, or `idempotency-locked` when the limit was reached meanwhile.
 */
export async function recordConflict(
  ds: DataSource,
  by: By,
  t: ConflictTarget,
  limit: number,
  errors: FieldError[],
  cause: AuditCause,
): Promise<never> {
  const count = await transactionFor(ds, by, async (m) => {
    const rows = (await m.query(
      `UPDATE ${TABLE[t.object]} SET idempotency_conflicts = idempotency_conflicts + 1
        WHERE id = $1 AND idempotency_conflicts < $2
        RETURNING idempotency_conflicts`,
      [t.id, limit],
    )) as [Array<{ idempotency_conflicts: number }>, number];
    const row = rows[0][0];
    if (row === undefined) return null;
    const fields = errors.map((e) => (e.message === DIFFERS ? e.field : 'secret'));
    await audit.record(m, {
      entityType: t.object,
      entityId: t.shopId,
      rowId: t.id,
      fromStatus: t.status,
      toStatus: t.status,
      cause,
      details: { idempotency: 'conflict', conflicts: row.idempotency_conflicts, limit, fields },
    });
    if (row.idempotency_conflicts >= limit && t.object !== 'payout_batch')
      await raiseAttention(
        m,
        { object: t.object, id: t.id, shopId: t.shopId, status: t.status },
        'idempotency-conflicts',
        `${t.key} ${t.shopId} was repeated with another body ${limit} times: every repeat is refused now`,
        cause,
        { conflicts: row.idempotency_conflicts },
      );
    return row.idempotency_conflicts;
  });
  if (count === null) {
    idempotencyConflicts.inc({ object: t.object, result: 'locked' });
    throw new IdempotencyLocked(t.key, t.shopId, limit, t.object);
  }
  idempotencyConflicts.inc({ object: t.object, result: 'conflict' });
  log.warn({ object: t.object, id: t.shopId, conflicts: count, limit }, 'idempotency conflict');
  throw new IdempotencyConflict(t.key, t.shopId, errors);
}

/** `{field, message}` for each differing non-secret field. */
export function differs(fields: readonly string[]): FieldError[] {
  return fields.map((field) => ({ field, message: DIFFERS }));
}

/** True for the attention reason that conflicting repeats raise (`idempotency-conflicts: …`). */
export function isLockReason(reason: string | null | undefined): boolean {
  return typeof reason === 'string' && reason.startsWith('idempotency-conflicts:');
}

/**
 * An operator lifts an id's lock: the count of conflicting repeats starts again from
 * zero, audited with the operator's note. In the caller's transaction, on a row it has locked.
 */
export async function liftLock(
  m: EntityManager,
  t: Pick<ConflictTarget, 'object' | 'id' | 'shopId' | 'status' | 'conflicts'>,
  note: string,
): Promise<void> {
  await m.query(`UPDATE ${TABLE[t.object]} SET idempotency_conflicts = 0, updated_at = now() WHERE id = $1`, [
    t.id,
  ]);
  await audit.record(m, {
    entityType: t.object,
    entityId: t.shopId,
    rowId: t.id,
    fromStatus: t.status,
    toStatus: t.status,
    cause: 'admin',
    details: { idempotency: 'unlocked', conflicts: t.conflicts, note },
  });
  log.info({ object: t.object, id: t.shopId, conflicts: t.conflicts }, 'idempotency lock lifted');
}
