import { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { InvoiceEntity } from './invoice.entity';
import { decideTransition, gatewayNumberOf, InvoiceStatus, isFinal, TransitionDecision } from './invoice.state';

const audit = new AuditService();

/**
 * Moves an invoice to `to` if the state machine allows it, inside the caller's transaction; the
 * caller holds the row lock (SELECT ... FOR UPDATE). Writes the status, clears reconciliation
 * for final statuses, and records the change with its cause in the audit trail. Returns the
 * decision; nothing is written when it is not allowed.
 */
export async function transitionInvoice(
  manager: EntityManager,
  invoice: InvoiceEntity,
  to: InvoiceStatus,
  cause: AuditCause,
  details: Record<string, unknown> = {},
  extra: Partial<Pick<InvoiceEntity, 'gatewayStatus' | 'paymentId' | 'errorCode' | 'gatewayMessage'>> = {},
): Promise<TransitionDecision> {
  const decision = decideTransition(invoice.status, to);
  if (!decision.allowed) return decision;
  const from = invoice.status;
  const final = isFinal(to);
  const changes: Partial<
    Pick<
      InvoiceEntity,
      'status' | 'gatewayStatus' | 'paymentId' | 'errorCode' | 'gatewayMessage' | 'processedAt' | 'nextCheckAt' | 'leaseUntil'
    >
  > = {
    status: to,
    gatewayStatus: extra.gatewayStatus ?? gatewayNumberOf(to) ?? invoice.gatewayStatus,
    ...extra,
    ...(final ? { processedAt: new Date(), nextCheckAt: null, leaseUntil: null } : {}),
  };
  await manager.update(InvoiceEntity, { id: invoice.id }, changes);
  Object.assign(invoice, changes);
  await audit.record(manager, { entityType: 'invoice', entityId: invoice.shopOrderId, fromStatus: from, toStatus: to, cause, details });
  return decision;
}

/** Loads an invoice with a row lock for the rest of the transaction. */
export function lockInvoice(manager: EntityManager, where: { shopOrderId: string; shopId: number }): Promise<InvoiceEntity | null> {
  return manager.findOne(InvoiceEntity, { where, lock: { mode: 'pessimistic_write' } });
}
