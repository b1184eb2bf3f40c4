import { EntityManager, type QueryDeepPartialEntity } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { registerSnapshotLoader } from '../audit/shop-events';
import { InvoiceEntity } from './invoice.entity';
import { toInvoiceView } from './invoice.view';
import {
  decideTransition,
  gatewayNumberOf,
  InvoiceStatus,
  isFinal,
  TransitionDecision,
} from './invoice.state';

const audit = new AuditService();

// An invoice event carries the invoice as a shop key's GET shows it: never the raw token.
registerSnapshotLoader('invoice', async (m, ref, ctx) => {
  const inv = await m.findOneOrFail(InvoiceEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { shopOrderId: ref.objectId },
  });
  return { ...toInvoiceView(inv, ctx.publicBaseUrl, { admin: false }) };
});

/**
 * Written in the same UPDATE as the status: facts of the answer, and for a create's phase 3 the
 * released call claim and the stored response (so the answer costs one statement, not three).
 */
export type TransitionExtra = Partial<
  Pick<
    InvoiceEntity,
    | 'gatewayStatus'
    | 'paymentId'
    | 'errorCode'
    | 'gatewayMessage'
    | 'invoiceId'
    | 'redirect'
    | 'callOwner'
    | 'callLeaseUntil'
    | 'responseCode'
    | 'responseBody'
    | 'updatedAt'
    | 'payerPrice'
    | 'clientPrice'
    | 'psCurrency'
  >
>;

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
  extra: TransitionExtra = {},
  /** The shop's view of the invoice as committed (see AuditRecord.committedView). */
  committedView?: Record<string, unknown>,
): Promise<TransitionDecision> {
  const decision = decideTransition(invoice.status, to);
  if (!decision.allowed) return decision;
  const from = invoice.status;
  const final = isFinal(to);
  const changes: TransitionExtra &
    Partial<Pick<InvoiceEntity, 'status' | 'processedAt' | 'nextCheckAt' | 'leaseUntil'>> = {
    status: to,
    gatewayStatus: extra.gatewayStatus ?? gatewayNumberOf(to) ?? invoice.gatewayStatus,
    ...extra,
    ...(final ? { processedAt: new Date(), nextCheckAt: null, leaseUntil: null } : {}),
  };
  // responseBody is jsonb of any shape: TypeORM's deep-partial type cannot see through unknown.
  await manager.update(
    InvoiceEntity,
    { id: invoice.id },
    changes as QueryDeepPartialEntity<InvoiceEntity>,
  );
  Object.assign(invoice, changes);
  await audit.record(manager, {
    entityType: 'invoice',
    entityId: invoice.shopOrderId,
    rowId: invoice.id,
    fromStatus: from,
    toStatus: to,
    cause,
    details,
    committedView,
  });
  return decision;
}

/** Loads an invoice with a row lock for the rest of the transaction. */
export function lockInvoice(
  manager: EntityManager,
  where: { shopOrderId: string; shopId: number },
): Promise<InvoiceEntity | null> {
  return manager.findOne(InvoiceEntity, { where, lock: { mode: 'pessimistic_write' } });
}

/**
 * An operator's verified final status (attention `accept`), the one way past the state machine:
 * allowed moves go through transitionInvoice; a final status is corrected only to another final
 * one, with the note in the audit entry. The caller holds the row lock.
 */
export async function acceptInvoiceStatus(
  manager: EntityManager,
  invoice: InvoiceEntity,
  to: InvoiceStatus,
  details: Record<string, unknown>,
): Promise<void> {
  if (invoice.status === to) return;
  const decision = decideTransition(invoice.status, to);
  if (decision.allowed) {
    await transitionInvoice(manager, invoice, to, 'admin', details);
    return;
  }
  const from = invoice.status;
  const changes = {
    status: to,
    gatewayStatus: gatewayNumberOf(to) ?? invoice.gatewayStatus,
    processedAt: new Date(),
    nextCheckAt: null,
    leaseUntil: null,
  };
  await manager.update(InvoiceEntity, { id: invoice.id }, changes);
  Object.assign(invoice, changes);
  await audit.record(manager, {
    entityType: 'invoice',
    entityId: invoice.shopOrderId,
    rowId: invoice.id,
    fromStatus: from,
    toStatus: to,
    cause: 'admin',
    details: { ...details, correction: true },
  });
}
