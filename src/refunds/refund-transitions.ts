import { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { updateWithEvent } from '../audit/event-write';
import { rememberForCommit } from '../audit/shop-event-snapshots';
import { registerSnapshotLoader, shopEventTypeOf } from '../audit/shop-events';
import { entityFromRow } from '../common/sql';
import { REFUND_PENDING, REFUND_REFUNDED } from '../domain/statuses';
import { toRefundView } from './dto/refund.view';
import { RefundEntity, RefundStatus } from './refund.entity';
import { decideRefundTransition, isFinalRefund } from './refund.state';
import { clock } from '../common/clock';
import { sameJson } from '../common/same-json';

const audit = new AuditService();

registerSnapshotLoader('refund', async (m, ref) => {
  const refund = await m.findOneOrFail(RefundEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { shopRefundId: ref.objectId },
  });
  return { ...toRefundView(refund) };
});

export type RefundExtra = Partial<
  Pick<
    RefundEntity,
    | 'submitState'
    | 'errorCode'
    | 'gatewayMessage'
    | 'settlementAmount'
    | 'settlementCurrency'
    | 'responseCode'
    | 'nextCheckAt'
    | 'processedAt'
  >
>;

/**
 * Moves a refund to `to` if the state machine allows it, inside the caller's transaction; the
 * caller holds the invoice lock, then the refund lock (always in that order, so notification,
 * creation and reconciliation never deadlock). `extra` (submit state, error code, ...) is also
 * written when the status stays the same: learning that a WAITING refund exists on the gateway
 * is a change too. Keeps the invoice's refund sums (syncRefundSums) and records every change in
 * the audit trail. Returns true when something was written.
 */
export async function transitionRefund(
  manager: EntityManager,
  refund: RefundEntity,
  to: RefundStatus,
  cause: AuditCause,
  details: Record<string, unknown> = {},
  extra: RefundExtra = {},
): Promise<boolean> {
  const decision = decideRefundTransition(refund.status, to);
  // Only these make a same-status update worth writing (and auditing); settlement data alone does not.
  const extraChanges = (['submitState', 'errorCode', 'responseCode'] as const).some(
    (k) => extra[k] !== undefined && extra[k] !== refund[k],
  );
  if (!decision.allowed && !(decision.reason === 'same' && extraChanges)) return false;
  const from = refund.status;
  const final = isFinalRefund(to);
  const changes: RefundExtra &
    Pick<RefundEntity, 'status'> &
    Partial<Pick<RefundEntity, 'leaseUntil' | 'updatedAt'>> = {
    ...extra,
    status: to,
    ...(final && from !== to
      ? { processedAt: extra.processedAt ?? clock.date(), nextCheckAt: null, leaseUntil: null }
      : {}),
    updatedAt: clock.date(),
  };
  Object.assign(refund, changes);
  // The row and its event in one statement; the event carries the refund as this
  // change leaves it, brought up to the committed view before commit should it change again.
  const type = shopEventTypeOf({ entityType: 'refund', fromStatus: from, toStatus: to });
  const data = type === null ? null : { ...toRefundView(refund) };
  const { eventId, row } = await updateWithEvent(manager, {
    table: 'refunds',
    target: RefundEntity,
    rowId: refund.id,
    changes,
    event: {
      entityType: 'refund',
      entityId: refund.shopRefundId,
      fromStatus: from,
      toStatus: to,
      cause,
      details: {
        shopOrderId: refund.shopOrderId,
        submitState: refund.submitState,
        errorCode: refund.errorCode,
        ...details,
      },
      type,
      data,
    },
  });
  if (data !== null) {
    // As for invoices: the before-commit read may be skipped only when the event's view is the
    // view of the row the statement actually left.
    const written = { ...toRefundView(entityFromRow(manager.connection, RefundEntity, row)) };
    rememberForCommit(manager, {
      eventId,
      objectType: 'refund',
      ref: { rowId: refund.id, objectId: refund.shopRefundId },
      data,
      ...(sameJson(written, data) ? { table: 'refunds' as const } : {}),
    });
  }
  // Every status move takes money out of WAITING into SUCCESS or FAILED.
  if (from !== to) await syncRefundSums(manager, refund, from, cause);
  return true;
}

/**
 * The invoice's refund sums (refunded_amount: SUCCESS, refund_pending_amount: WAITING) are
 * recomputed from the refunds in one UPDATE rather than incremented, so they cannot drift; the
 * row is written only when a sum differs, and then the shop gets `invoice.refund_updated` in the
 * same transaction, its data the invoice view read after the write. Called after every refund
 * change that moves money between WAITING, SUCCESS and FAILED, creation included. The caller
 * holds the invoice lock (it serialises the event sequence). Returns true when a sum changed.
 *
 * The database checks refunded_amount <= amount (the gateway never refunds more than was paid),
 * but not refunded + pending <= amount: an operator who corrects a FAILED refund to SUCCESS
 * (acceptRefundStatus) after its room was given to a newer refund counts more than the amount
 * until the newer one settles, and that correction must still be recorded.
 */
export async function syncRefundSums(
  manager: EntityManager,
  refund: Pick<RefundEntity, 'invoicePk' | 'shopRefundId' | 'status'>,
  from: RefundStatus | null,
  cause: AuditCause,
): Promise<boolean> {
  const [rows] = (await manager.query(
    `UPDATE invoices i SET refunded_amount = s.refunded, refund_pending_amount = s.pending, updated_at = clock_now()
       FROM (SELECT COALESCE(SUM(amount) FILTER (WHERE status = $2), 0) AS refunded,
                    COALESCE(SUM(amount) FILTER (WHERE status = $3), 0) AS pending
               FROM refunds WHERE invoice_pk = $1) s
      WHERE i.id = $1 AND (i.refunded_amount <> s.refunded OR i.refund_pending_amount <> s.pending)
      RETURNING i.shop_order_id, i.status, i.refunded_amount::text AS refunded, i.refund_pending_amount::text AS pending`,
    [refund.invoicePk, REFUND_REFUNDED, REFUND_PENDING],
  )) as [
    Array<{ shop_order_id: string; status: string; refunded: string; pending: string }>,
    number,
  ];
  const row = rows[0];
  if (row === undefined) return false;
  await audit.record(manager, {
    entityType: 'invoice',
    entityId: row.shop_order_id,
    rowId: refund.invoicePk,
    fromStatus: row.status,
    toStatus: row.status,
    cause,
    notice: 'refund_updated',
    details: {
      refundedAmount: row.refunded,
      refundPendingAmount: row.pending,
      shopRefundId: refund.shopRefundId,
      refundFrom: from,
      refundTo: refund.status,
    },
  });
  return true;
}

/** Locks the refund's invoice, then the refund (the one lock order used everywhere). */
export async function lockRefundById(
  manager: EntityManager,
  id: string,
): Promise<RefundEntity | null> {
  const pre = await manager.findOne(RefundEntity, { where: { id } });
  if (!pre) return null;
  await manager.query(`SELECT id FROM invoices WHERE id = $1 FOR UPDATE`, [pre.invoicePk]);
  return manager.findOne(RefundEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
}

/**
 * An operator's verified final status (attention `accept`): allowed moves through
 * transitionRefund; a final status corrected to the other one keeps the refund sums in step and
 * is audited with the note. The caller holds the invoice and refund locks.
 */
export async function acceptRefundStatus(
  manager: EntityManager,
  refund: RefundEntity,
  to: RefundStatus,
  details: Record<string, unknown>,
): Promise<void> {
  if (refund.status === to) return;
  if (decideRefundTransition(refund.status, to).allowed) {
    await transitionRefund(manager, refund, to, 'admin', details, { submitState: 'accepted' });
    return;
  }
  const from = refund.status;
  const changes = { status: to, processedAt: clock.date(), nextCheckAt: null, leaseUntil: null };
  await manager.update(RefundEntity, { id: refund.id }, changes);
  Object.assign(refund, changes);
  await audit.record(manager, {
    entityType: 'refund',
    entityId: refund.shopRefundId,
    fromStatus: from,
    toStatus: to,
    cause: 'admin',
    details: { shopOrderId: refund.shopOrderId, ...details, correction: true },
  });
  await syncRefundSums(manager, refund, from, 'admin');
}
