import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../audit/audit-event.entity';
import type { InvoiceEntity } from './invoice.entity';
import type { InvoiceStatus } from './invoice.state';

/**
 * What an invoice's status change means to the object that made the invoice (a payment link):
 * told inside the transaction of the change, after it is written, with the invoice row still
 * locked, by the one write path of invoice statuses (transitionInvoice, acceptInvoiceStatus).
 * The folder that owns such objects registers here (invoices never import it back).
 */
export type LinkedInvoiceFollower = (
  manager: EntityManager,
  invoice: InvoiceEntity,
  change: { from: InvoiceStatus; to: InvoiceStatus; cause: AuditCause },
) => Promise<void>;

let follower: LinkedInvoiceFollower | null = null;

/** The payment links' follower; registering again replaces it (one per process). */
export function followLinkedInvoices(f: LinkedInvoiceFollower): void {
  follower = f;
}

/** Tells the follower of a change of an invoice a payment link made; nothing for any other. */
export async function tellLinkedFollower(
  manager: EntityManager,
  invoice: InvoiceEntity,
  change: { from: InvoiceStatus; to: InvoiceStatus; cause: AuditCause },
): Promise<void> {
  if (invoice.paymentLinkId === null || invoice.paymentLinkId === undefined || follower === null)
    return;
  await follower(manager, invoice, change);
}

/**
 * The slot a single-use link's invoice holds is freed when the invoice ends unpaid (a final
 * status other than `succeeded`): another payer may then try. Written in the status's own UPDATE.
 */
export function slotFreedBy(
  invoice: Pick<InvoiceEntity, 'paymentLinkSlot'>,
  to: InvoiceStatus,
  final: boolean,
): { paymentLinkSlot: null } | Record<string, never> {
  return final && to !== 'succeeded' && invoice.paymentLinkSlot ? { paymentLinkSlot: null } : {};
}
