import { EntityManager } from 'typeorm';
import { InvoiceEntity, PaymentTokenInfo } from '../invoices/invoice.entity';

/**
 * Keeps the recurrent-payment token the gateway issued for an invoice (from a notification's
 * `ps_data.payment_token` or invoice/check's `payment_token`). Inside the caller's transaction,
 * under its row lock. Returns true when something changed. The token itself is never logged.
 */
export async function savePaymentToken(
  manager: EntityManager,
  invoice: InvoiceEntity,
  token: string,
  info: PaymentTokenInfo = {},
): Promise<boolean> {
  if (token === '' || invoice.paymentToken === token) return false;
  const paymentTokenInfo: PaymentTokenInfo = { ...(invoice.paymentTokenInfo ?? {}), ...info };
  await manager.query(`UPDATE invoices SET payment_token = $1, payment_token_info = $2, updated_at = now() WHERE id = $3`, [
    token,
    JSON.stringify(paymentTokenInfo),
    invoice.id,
  ]);
  invoice.paymentToken = token;
  invoice.paymentTokenInfo = paymentTokenInfo;
  return true;
}

/** `ps_data` is JSON text from the payment system; anything unreadable simply carries no token. */
export function tokenFromPsData(psData: string | undefined): { token: string; info: PaymentTokenInfo } | null {
  if (!psData) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(psData);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const data = parsed as Record<string, unknown>;
  if (typeof data.payment_token !== 'string' || data.payment_token === '') return null;
  const info: PaymentTokenInfo = {};
  if (typeof data.account === 'string') info.account = data.account;
  return { token: data.payment_token, info };
}
