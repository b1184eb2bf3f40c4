import { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { ID_ONLY, updateWithEvent } from '../audit/event-write';
import { rememberForCommit } from '../audit/shop-event-snapshots';
import { registerSnapshotLoader, shopEventTypeOf, snapshotContextOf } from '../audit/shop-events';
import { JsonText } from '../common/json-text';
import { clientOf, entityFromRow, poolOf, run } from '../common/sql';
import { InvoiceEntity } from './invoice.entity';
import { BY_ID, INVOICE_VIEW_COLUMNS, LOCK_BY_SHOP_ORDER_ID } from './invoice-sql';
import { toInvoiceView } from './invoice.view';
import {
  decideTransition,
  gatewayNumberOf,
  InvoiceStatus,
  isFinal,
  TransitionDecision,
} from './invoice.state';
import { clock } from '../common/clock';
import { sameJson } from '../common/same-json';
import { slotFreedBy, tellLinkedFollower } from './invoice-followers';

const audit = new AuditService();

// An invoice event carries the invoice as a shop key's GET shows it: never the raw token.
registerSnapshotLoader('invoice', async (m, ref, ctx) => {
  const inv =
    ref.rowId !== undefined
      ? await readInvoice(m, BY_ID, [ref.rowId])
      : await m.findOne(InvoiceEntity, { where: { shopOrderId: ref.objectId } });
  if (inv === null) throw new Error(`invoice ${ref.rowId ?? ref.objectId} not found for its event`);
  return { ...toInvoiceView(inv, ctx.publicBaseUrl, { admin: false }) };
});

/** One invoice row by a plain statement, in the manager's transaction when it has one. */
async function readInvoice(
  m: EntityManager,
  st: typeof BY_ID,
  values: unknown[],
): Promise<InvoiceEntity | null> {
  const rows = await run(m.queryRunner ? await clientOf(m) : poolOf(m.connection), st, values);
  return rows.length === 0 ? null : invoiceFromRow(m, rows[0]);
}

/** A plain `invoices` row (SELECT *) as the entity. */
export function invoiceFromRow(m: EntityManager, row: Record<string, unknown>): InvoiceEntity {
  return entityFromRow(m.connection, InvoiceEntity, row);
}

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
  /** Write only if the row is still this version (see RowChangeWithEvent.version). */
  version?: string,
): Promise<TransitionDecision> {
  const decision = decideTransition(invoice.status, to);
  if (!decision.allowed) return decision;
  const from = invoice.status;
  const final = isFinal(to);
  const updatedAt = extra.updatedAt ?? clock.date();
  const changes: TransitionExtra &
    Partial<
      Pick<
        InvoiceEntity,
        'status' | 'processedAt' | 'nextCheckAt' | 'leaseUntil' | 'paymentLinkSlot'
      >
    > = {
    status: to,
    gatewayStatus: extra.gatewayStatus ?? gatewayNumberOf(to) ?? invoice.gatewayStatus,
    // A hold's expiry comes with invoice/check only: the check is made right away.
    ...(to === 'held' && invoice.holdExpiresAt === null ? { nextCheckAt: clock.date() } : {}),
    ...extra,
    ...(final ? { processedAt: clock.date(), nextCheckAt: null, leaseUntil: null } : {}),
    ...slotFreedBy(invoice, to, final),
    updatedAt,
  };
  Object.assign(invoice, changes);
  // The entity holds a stored answer as a read of the row gives it (its value), not the text a
  // create made once for its write (JsonText): a later reader of the entity gets the view.
  if (changes.responseBody instanceof JsonText) invoice.responseBody = changes.responseBody.value;
  const type = shopEventTypeOf({ entityType: 'invoice', fromStatus: from, toStatus: to });
  // The event carries the invoice as this change leaves it (the row locked, so it is the row
  // before plus the changes); should the write path change it again before commit,
  // ShopEventSnapshots brings the event up to the committed view.
  const data =
    type === null
      ? null
      : (committedView ??
        toInvoiceView(invoice, snapshotContextOf(manager).publicBaseUrl, { admin: false }));
  const { eventId, row } = await updateWithEvent(manager, {
    table: 'invoices',
    target: InvoiceEntity,
    rowId: invoice.id,
    version,
    changes,
    // The row is read back only for its view (below), which a committed view or no event
    // makes needless: then the id alone comes back (every column returned is parsed).
    returning: data !== null && committedView === undefined ? INVOICE_VIEW_COLUMNS : ID_ONLY,
    event: {
      entityType: 'invoice',
      entityId: invoice.shopOrderId,
      fromStatus: from,
      toStatus: to,
      cause,
      details,
      type,
      // A create's answer: the committed view is the stored answer itself, written once (its
      // text made already: the value is not serialised again, so it is passed as it is).
      ...(committedView !== undefined && storedViewIs(extra.responseBody, committedView)
        ? { data: committedView, dataIs: 'responseBody' }
        : { data: data === null ? null : { ...data } }),
    },
  });
  if (data !== null && committedView === undefined) {
    // The event's view was built from the row read under the lock plus the changes; when it is
    // the view of the row the statement actually left, the before-commit read may be skipped
    // (nothing else in this transaction names the table after this point).
    const written = toInvoiceView(
      invoiceFromRow(manager, row),
      snapshotContextOf(manager).publicBaseUrl,
      {
        admin: false,
      },
    );
    rememberForCommit(manager, {
      eventId,
      objectType: 'invoice',
      ref: { rowId: invoice.id, objectId: invoice.shopOrderId },
      data: { ...data },
      ...(sameJson(written, data) ? { table: 'invoices' as const } : {}),
    });
  }
  await tellLinkedFollower(manager, invoice, { from, to, cause });
  return decision;
}

/** The stored answer is the committed view itself (as it is, or with its JSON text). */
function storedViewIs(stored: unknown, view: Record<string, unknown>): boolean {
  return stored === view || (stored instanceof JsonText && stored.value === view);
}

/** Loads an invoice with a row lock for the rest of the transaction. */
export function lockInvoice(
  manager: EntityManager,
  where: { shopOrderId: string; shopId: number },
): Promise<InvoiceEntity | null> {
  if (!manager.queryRunner) throw new Error('lockInvoice: not inside a transaction');
  return readInvoice(manager, LOCK_BY_SHOP_ORDER_ID, [where.shopId, where.shopOrderId]);
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
    processedAt: clock.date(),
    nextCheckAt: null,
    leaseUntil: null,
    ...slotFreedBy(invoice, to, true),
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
  await tellLinkedFollower(manager, invoice, { from, to, cause: 'admin' });
}
