import { Amount } from '../common/money';
import { invoiceMismatch } from '../invoices/invoice.rules';
import { decideTransition, InvoiceStatus, statusFromNotification } from '../invoices/invoice.state';

/**
 * Pure rules for a verified payment notification: does it belong to the stored invoice, and where
 * would it move it. The applier only adds the row lock and the writes around these.
 */

export interface InvoiceFacts {
  shopId: number;
  amount: Amount;
  currency: number;
}

export type NotificationCheckResult =
  | { ok: true; to: InvoiceStatus }
  | { ok: false; kind: 'mismatch' | 'unknown_status'; reason: string };

/**
 * Checks shop, amount (exact value, whatever its scale on the wire) and currency against the
 * stored invoice, then maps the status word. Absent optional fields (amount, currency) are
 * tolerated; present ones must match.
 */
export function checkInvoiceNotification(
  invoice: InvoiceFacts,
  fields: Readonly<Record<string, string>>,
): NotificationCheckResult {
  const mismatch = invoiceMismatch(invoice, {
    shopId: fields.shop_id ?? '(missing)',
    amount: fields.shop_amount,
    currency: fields.shop_currency,
  });
  if (mismatch !== null) return { ok: false, kind: 'mismatch', reason: mismatch };
  const to = statusFromNotification(fields.status);
  if (to === null)
    return {
      ok: false,
      kind: 'unknown_status',
      reason: `status "${fields.status ?? ''}" is not a known invoice status`,
    };
  return { ok: true, to };
}

/** Where a sequence of notification status words leaves an invoice (the applier's rule, folded). */
export function foldNotificationStatuses(
  initial: InvoiceStatus,
  words: readonly string[],
): InvoiceStatus {
  let status = initial;
  for (const word of words) {
    const to = statusFromNotification(word);
    if (to !== null && decideTransition(status, to).allowed) status = to;
  }
  return status;
}
