import { Amount } from '../common/money';
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
  if (fields.shop_id !== String(invoice.shopId)) {
    return {
      ok: false,
      kind: 'mismatch',
      reason: `shop_id ${fields.shop_id ?? '(missing)'} is not this shop`,
    };
  }
  if (fields.shop_amount !== undefined && fields.shop_amount !== '') {
    let amount: Amount;
    try {
      amount = Amount.fromText(fields.shop_amount);
    } catch {
      return { ok: false, kind: 'mismatch', reason: 'shop_amount is not a decimal amount' };
    }
    if (!amount.eq(invoice.amount)) {
      return {
        ok: false,
        kind: 'mismatch',
        reason: `shop_amount ${amount.toString()} differs from the invoice amount ${invoice.amount.toString()}`,
      };
    }
  }
  if (
    fields.shop_currency !== undefined &&
    fields.shop_currency !== '' &&
    fields.shop_currency !== String(invoice.currency)
  ) {
    return {
      ok: false,
      kind: 'mismatch',
      reason: `shop_currency ${fields.shop_currency} differs from the invoice currency ${invoice.currency}`,
    };
  }
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
