import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { attentionRaised } from '../metrics/metrics';
import { logger } from './logger';

/**
 * Attention: what the service cannot settle by itself (no final status by a deadline, the
 * gateway contradicting a final state, a gateway record that does not match ours, a create
 * repeated too often). One function raises the flag, one resolves it; each writes its audit
 * entry in the caller's transaction (which becomes the shop event `<object>.attention_raised` /
 * `<object>.attention_resolved`). Neither changes any money state.
 */
export type AttentionObject = 'invoice' | 'refund' | 'payout';

/** Stable reason codes (the metric's label); the free text goes to the audit entry and the row. */
export type AttentionReason =
  | 'deadline' // no final status by the check/poll deadline
  | 'contradiction' // the gateway reports the opposite of a final state
  | 'mismatch' // a gateway record or message that does not match ours
  | 'absent' // the gateway never heard of it, on every check over the window
  | 'create_cap' // a payout create repeated PAYOUT_MAX_CREATES times
  | 'poll_failing' // every poll throws (e.g. a sealed account that cannot be read)
  | 'unknown_status' // a status the service cannot map
  | 'unsafe_redirect' // a payer redirect address from the gateway that is not http(s)
  | 'missing_invoice_id' // a held or succeeded invoice whose gateway invoice id is not known
  | 'unsettled_recreate' // a repeated create was refused while an earlier attempt's outcome is unknown
  | 'charge_on_unhold' // the gateway's answer to an unhold says the funds were charged
  | 'watch_ended' // WATCH_MAX_S passed without a final status: an operator alone decides now
  | 'reconciliation' // the gateway's record contradicts ours at a reconciliation of the books
  | 'idempotency-conflicts'; // IDEMPOTENCY_CONFLICT_LIMIT conflicting repeats of its create's id

const TABLE: Record<AttentionObject, string> = {
  invoice: 'invoices',
  refund: 'refunds',
  payout: 'payouts',
};

const audit = new AuditService();
const log = logger.child({ component: 'attention' });

export interface AttentionTarget {
  object: AttentionObject;
  /** Primary key of the row. */
  id: string;
  /** The shop's id of the object (audit entity id). */
  shopId: string;
  status: string;
}

/**
 * Flags the row and records why, in the caller's transaction. Raising the same reason again
 * changes nothing (no second audit entry or count). Returns true when it was raised now.
 */
export async function raiseAttention(
  m: EntityManager,
  t: AttentionTarget,
  reason: AttentionReason,
  detail: string,
  cause: AuditCause,
  facts: Record<string, unknown> = {},
): Promise<boolean> {
  const text = `${reason}: ${detail}`;
  const rows = (await m.query(
    `UPDATE ${TABLE[t.object]} SET needs_attention = true, attention_reason = $2,
            attention_at = COALESCE(attention_at, clock_now()), updated_at = clock_now()
      WHERE id = $1 AND NOT (needs_attention AND attention_reason IS NOT DISTINCT FROM $2)
      RETURNING id`,
    [t.id, text],
  )) as [unknown[], number];
  if (rows[0].length === 0) return false;
  await audit.record(m, {
    entityType: t.object,
    entityId: t.shopId,
    fromStatus: t.status,
    toStatus: t.status,
    cause,
    rowId: t.id,
    attention: 'attention_raised',
    details: { ...facts, attention: 'raised', reason, detail },
  });
  attentionRaised.inc({ object: t.object, reason });
  log.error(
    { object: t.object, id: t.shopId, status: t.status, reason, detail },
    'needs attention',
  );
  return true;
}

/**
 * Clears the flag, audited with what cleared it: an operator's recheck or accept (`admin`), or a
 * final gateway status that settled the object (`gateway`).
 */
export async function resolveAttention(
  m: EntityManager,
  t: AttentionTarget,
  resolution: Record<string, unknown>,
  cause: AuditCause = 'admin',
): Promise<void> {
  await m.query(
    `UPDATE ${TABLE[t.object]} SET needs_attention = false, attention_reason = NULL,
            attention_at = NULL, updated_at = clock_now()
      WHERE id = $1`,
    [t.id],
  );
  await audit.record(m, {
    entityType: t.object,
    entityId: t.shopId,
    fromStatus: t.status,
    toStatus: t.status,
    cause,
    rowId: t.id,
    attention: 'attention_resolved',
    details: { attention: 'resolved', ...resolution },
  });
}

/**
 * Reasons that only say "no final status yet": a final gateway status applied through the
 * object's rule answers them, so the rule clears them itself. Reasons about a
 * disagreement (`mismatch`, `contradiction`, `unsafe_redirect`, `charge_on_unhold`,
 * `idempotency-conflicts`: someone repeated the create with other bodies) and
 * `missing_invoice_id` (a final status does not teach the id) stay for an operator.
 */
const CLEARED_BY_FINAL: ReadonlySet<string> = new Set<AttentionReason>([
  'deadline',
  'absent',
  'create_cap',
  'poll_failing',
  'unknown_status',
  'watch_ended',
  'unsettled_recreate',
]);

/** The reason code of a stored `attention_reason` text (`<code>: <detail>`), or null. */
export function attentionCode(text: string | null): string | null {
  if (text === null) return null;
  const i = text.indexOf(':');
  return i < 0 ? text : text.slice(0, i);
}

/** Whether a final gateway status clears a flag with this stored reason text (pure). */
export function clearsOnFinal(attentionReason: string | null): boolean {
  const code = attentionCode(attentionReason);
  return code !== null && CLEARED_BY_FINAL.has(code);
}

/**
 * Whether the watch may put its own flag (`deadline`, `poll_failing`, `watch_ended`) on a row
 * (pure): always on an unflagged row; `deadline` never replaces another flag (that one says
 * more); the others replace only a "not final yet" flag, never a disagreement.
 */
export function watchMayFlag(
  row: { needsAttention: boolean; attentionReason: string | null },
  reason: 'deadline' | 'poll_failing' | 'watch_ended',
): boolean {
  if (!row.needsAttention) return true;
  if (reason === 'deadline') return false;
  return clearsOnFinal(row.attentionReason) && attentionCode(row.attentionReason) !== reason;
}

/**
 * Called by each object's rule right after it applied a final gateway status: clears a "not
 * final yet" flag, audited with cause `gateway` (the shop gets `<object>.attention_resolved`),
 * in the rule's transaction. Returns true when it cleared one.
 */
export async function clearFlagOnFinal(
  m: EntityManager,
  t: AttentionTarget,
  row: { needsAttention: boolean; attentionReason: string | null; attentionAt?: Date | null },
  facts: Record<string, unknown> = {},
): Promise<boolean> {
  if (!row.needsAttention || !clearsOnFinal(row.attentionReason)) return false;
  await resolveAttention(
    m,
    t,
    { action: 'settled', reason: attentionCode(row.attentionReason), status: t.status, ...facts },
    'gateway',
  );
  row.needsAttention = false;
  row.attentionReason = null;
  row.attentionAt = null;
  return true;
}

/** The detail of `watch_ended` (the console and the attention list show it). */
export const WATCH_ENDED_DETAIL = 'watch ended: an operator decides';
