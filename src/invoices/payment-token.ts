import { EntityManager } from 'typeorm';
import type { PaymentToken } from '../gateway/gateway.types';
import type { InvoiceEntity, PaymentTokenInfo } from './invoice.entity';

/**
 * Keeps the recurrent-payment token the gateway issued for an invoice (a notification's
 * `ps_data.payment_token`, or invoice/check's `payment_token`), inside the caller's transaction
 * and under its row lock. Only the masked account, expiry, status and card facts are ever shown;
 * the token goes to admins only and is never logged. Returns true when something changed.
 */
export async function storePaymentToken(
  manager: EntityManager,
  invoice: InvoiceEntity,
  token: string,
  info: PaymentTokenInfo = {},
): Promise<boolean> {
  if (token === '') return false;
  const merged: PaymentTokenInfo = {
    ...(invoice.paymentTokenInfo ?? {}),
    ...withoutUndefined(info),
  };
  if (invoice.paymentToken === token && sameInfo(invoice.paymentTokenInfo, merged)) return false;
  await manager.query(
    `UPDATE invoices SET payment_token = $1, payment_token_info = $2, updated_at = now() WHERE id = $3`,
    [token, JSON.stringify(merged), invoice.id],
  );
  invoice.paymentToken = token;
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
