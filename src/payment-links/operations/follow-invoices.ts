import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../../audit/audit-event.entity';
import type { InvoiceEntity } from '../../invoices/invoice.entity';
import type { InvoiceStatus } from '../../invoices/invoice.state';
import { statusAfterInvoice } from '../payment-link.rules';
import { linkFromRow, moveLink, type PaymentLinkDeps } from './payment-link-deps';

/**
 * A link follows its invoices, on every path an invoice's status changes (the create's answer,
 * a notification, the reconciler, a recheck, an operator's accept: all go through
 * transitionInvoice, which calls this in its transaction). A single-use link becomes `paid` when
 * its invoice succeeds (event `payment_link.paid`). The invoice row is locked by the caller; the
 * link row is locked after it (every other path locks the link alone).
 */
export async function followInvoice(
  deps: Pick<PaymentLinkDeps, 'audit'>,
  m: EntityManager,
  invoice: InvoiceEntity,
  change: { from: InvoiceStatus; to: InvoiceStatus; cause: AuditCause },
): Promise<void> {
  if (change.to !== 'succeeded' || invoice.paymentLinkId === null) return;
  const rows = (await m.query(`SELECT * FROM payment_links WHERE id = $1 FOR UPDATE`, [
    invoice.paymentLinkId,
  ])) as Record<string, unknown>[];
  if (rows.length === 0) return;
  const link = linkFromRow(m, rows[0]);
  const to = statusAfterInvoice(link, change.to);
  if (to === null) return;
  await moveLink(deps, m, link, to, change.cause, { shopOrderId: invoice.shopOrderId });
}
