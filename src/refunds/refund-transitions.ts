import { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { registerSnapshotLoader } from '../audit/shop-events';
import { toRefundView } from './dto/refund.view';
import { RefundEntity, RefundStatus } from './refund.entity';
import { decideRefundTransition, isFinalRefund } from './refund.state';

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
 * is a change too. Keeps the invoice's refunded_amount equal to the sum of SUCCESS refunds and
 * records every change in the audit trail. Returns true when something was written.
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
    Partial<Pick<RefundEntity, 'leaseUntil'>> = {
    ...extra,
    status: to,
    ...(final && from !== to
      ? { processedAt: extra.processedAt ?? new Date(), nextCheckAt: null, leaseUntil: null }
      : {}),
  };
  await manager.update(RefundEntity, { id: refund.id }, changes);
  Object.assign(refund, changes);
  if (to === 'SUCCESS' || from === 'SUCCESS') await syncRefundedAmount(manager, refund.invoicePk);
  await audit.record(manager, {
    entityType: 'refund',
    entityId: refund.shopRefundId,
    rowId: refund.id,
    fromStatus: from,
    toStatus: to,
    cause,
    details: {
      shopOrderId: refund.shopOrderId,
      submitState: refund.submitState,
      errorCode: refund.errorCode,
      ...details,
    },
  });
  return true;
}

/**
 * refunded_amount is recomputed from the refunds rather than incremented, so it cannot drift;
 * the database check (refunded_amount <= amount) backs the application's guard.
 */
async function syncRefundedAmount(manager: EntityManager, invoicePk: string): Promise<void> {
  await manager.query(
    `UPDATE invoices SET refunded_amount =
       (SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE invoice_pk = $1 AND status = 'SUCCESS'),
       updated_at = now()
     WHERE id = $1`,
    [invoicePk],
  );
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
 * transitionRefund; a final status corrected to the other one keeps refunded_amount in step and
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
  const changes = { status: to, processedAt: new Date(), nextCheckAt: null, leaseUntil: null };
  await manager.update(RefundEntity, { id: refund.id }, changes);
  Object.assign(refund, changes);
  await syncRefundedAmount(manager, refund.invoicePk);
  await audit.record(manager, {
    entityType: 'refund',
    entityId: refund.shopRefundId,
    fromStatus: from,
    toStatus: to,
    cause: 'admin',
    details: { shopOrderId: refund.shopOrderId, ...details, correction: true },
  });
}
