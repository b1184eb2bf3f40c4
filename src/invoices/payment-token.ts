import { EntityManager } from 'typeorm';
import type { KeyRing, SealContext } from '../common/key-ring';
import type { PaymentToken } from '../gateway/gateway.types';
import type { InvoiceEntity, PaymentTokenInfo } from './invoice.entity';

/** Separates the token's blind index from any other HMAC made with the ring. */
export const PAYMENT_TOKEN_INDEX = 'payment-token';

export function paymentTokenContext(invoiceRowId: string): SealContext {
  return { table: 'invoices', column: 'payment_token', rowId: invoiceRowId };
}

/**
 * The raw recurrent token an invoice received, or null. The one way to read it: the column
 * holds it sealed under the key ring, bound to the invoice's row.
 */
export function revealPaymentToken(keys: KeyRing, invoice: InvoiceEntity): string | null {
  if (invoice.paymentTokenSealed === null) return null;
  return keys.unseal(invoice.paymentTokenSealed, paymentTokenContext(invoice.id));
}

/**
 * Keeps the recurrent-payment token the gateway issued for an invoice (a notification's
 * `ps_data.payment_token`, or invoice/check's `payment_token`), inside the caller's transaction
 * and under its row lock: sealed, with a blind index for look-ups by token. Only the masked
 * account, expiry, status and card facts are ever shown; the token goes to admins only and is
 * never logged. Returns true when something changed.
 */
export async function storePaymentToken(
  manager: EntityManager,
  invoice: InvoiceEntity,
  token: string,
  info: PaymentTokenInfo,
  keys: KeyRing,
): Promise<boolean> {
  if (token === '') return false;
  const merged: PaymentTokenInfo = {
    ...(invoice.paymentTokenInfo ?? {}),
    ...withoutUndefined(info),
  };
  if (revealPaymentToken(keys, invoice) === token && sameInfo(invoice.paymentTokenInfo, merged))
    return false;
  const sealed = keys.seal(token, paymentTokenContext(invoice.id));
  const hash = keys.blindIndex(token, PAYMENT_TOKEN_INDEX);
  await manager.query(
    `UPDATE invoices SET payment_token = $1, payment_token_hash = $2, payment_token_info = $3, updated_at = now() WHERE id = $4`,
    [sealed, hash, JSON.stringify(merged), invoice.id],
  );
  invoice.paymentTokenSealed = sealed;
  invoice.paymentTokenHash = hash;
  invoice.paymentTokenInfo = merged;
  return true;
}

/** The shown part of invoice/check's `payment_token` object. */
export function tokenInfoFromCheck(t: PaymentToken): PaymentTokenInfo {
  return withoutUndefined({
    account: typeof t.account === 'string' ? t.account : undefined,
    expiresAt: typeof t.expires_at === 'string' ? t.expires_at : undefined,
    status: typeof t.status === 'string' ? t.status : undefined,
    cardInfo:
      typeof t.card_info === 'object' && t.card_info !== null ? { ...t.card_info } : undefined,
  });
}

/** `ps_data` (JSON text) → the token and the masked account, or null when it carries none. */
export function tokenFromPsData(
  psData: string | undefined | null,
): { token: string; info: PaymentTokenInfo } | null {
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
  return {
    token: data.payment_token,
    info: typeof data.account === 'string' ? { account: data.account } : {},
  };
}

function withoutUndefined(info: PaymentTokenInfo): PaymentTokenInfo {
  return Object.fromEntries(
    Object.entries(info).filter(([, v]) => v !== undefined),
  ) as PaymentTokenInfo;
}

function sameInfo(a: PaymentTokenInfo | null, b: PaymentTokenInfo): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b);
}
