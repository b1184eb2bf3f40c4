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
export function revealPaymentToken(
  keys: KeyRing,
  invoice: Pick<InvoiceEntity, 'id' | 'paymentTokenSealed'>,
): string | null {
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
    `UPDATE invoices SET payment_token = $1, payment_token_hash = $2, payment_token_info = $3, updated_at = clock_now() WHERE id = $4`,
    [sealed, hash, JSON.stringify(merged), invoice.id],
  );
  invoice.paymentTokenSealed = sealed;
  invoice.paymentTokenHash = hash;
  invoice.paymentTokenInfo = merged;
  await registerToken(manager, {
    shopId: invoice.shopId,
    invoiceRowId: invoice.id,
    indexes: keys.blindIndexes(token, PAYMENT_TOKEN_INDEX),
    index: hash,
    info: merged,
  });
  return true;
}

/**
 * The token's entry in the registry (`payment_tokens`), made or refreshed (masked account,
 * expiry) in the caller's transaction. One entry per token and shop, found by its blind index
 * under any key of the ring and moved to the first key's: a token issued again by a later
 * invoice is the same entry, and a revoked entry stays revoked.
 */
export async function registerToken(
  manager: EntityManager,
  t: {
    shopId: number;
    invoiceRowId: string;
    /** Blind indexes of the token under every key of the ring. */
    indexes: string[];
    /** Its blind index under the first key. */
    index: string;
    info: PaymentTokenInfo;
  },
): Promise<void> {
  const account = typeof t.info.account === 'string' ? t.info.account.slice(0, 64) : null;
  await manager.query(
    `WITH moved AS (
       UPDATE payment_tokens t
          SET token_index = $3, account = COALESCE($5, t.account), expires_at = COALESCE($6, t.expires_at)
        WHERE t.shop_id = $1 AND t.token_index = ANY($2::bpchar[])
          AND NOT EXISTS (SELECT 1 FROM payment_tokens o WHERE o.shop_id = $1 AND o.token_index = $3 AND o.id <> t.id)
        RETURNING t.id)
     INSERT INTO payment_tokens (shop_id, token_index, invoice_id, account, expires_at)
     SELECT $1, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM moved)
     ON CONFLICT (shop_id, token_index) DO UPDATE
       SET account = COALESCE(EXCLUDED.account, payment_tokens.account),
           expires_at = COALESCE(EXCLUDED.expires_at, payment_tokens.expires_at)`,
    [t.shopId, t.indexes, t.index, t.invoiceRowId, account, timeOf(t.info.expiresAt)],
  );
}

/**
 * Whether the token (by its blind indexes) is revoked in this shop's registry, taking the
 * entries' row locks when `lock` (a create's insert then cannot race a revocation). A token the
 * registry does not know is not revoked.
 */
export async function isTokenRevoked(
  manager: EntityManager,
  shopId: number,
  indexes: string[],
  lock = false,
): Promise<{ revoked: boolean; known: boolean }> {
  const rows = (await manager.query(
    `SELECT status FROM payment_tokens WHERE shop_id = $1 AND token_index = ANY($2::bpchar[])${lock ? ' FOR UPDATE' : ''}`,
    [shopId, indexes],
  )) as Array<{ status: string }>;
  return { revoked: rows.some((r) => r.status === 'revoked'), known: rows.length > 0 };
}

/** Records that an invoice was created with the token. */
export async function markTokenUsed(
  manager: EntityManager,
  shopId: number,
  indexes: string[],
): Promise<void> {
  await manager.query(
    `UPDATE payment_tokens SET last_used_at = clock_now() WHERE shop_id = $1 AND token_index = ANY($2::bpchar[])`,
    [shopId, indexes],
  );
}

/** The gateway's expiry text (ISO 8601 with offset) as a time, or null when it is not one. */
function timeOf(text: string | undefined): Date | null {
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms);
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
