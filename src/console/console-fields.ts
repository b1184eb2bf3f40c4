import { currencyCode, money, utc } from './console-format';

export interface DetailField {
  text: string;
  /** Right-aligned (amounts). */
  num: boolean;
}

const AMOUNTS: Record<string, (o: Record<string, unknown>) => unknown> = {
  amount: (o) => o.currency ?? o.shopCurrency,
  refundedAmount: (o) => o.currency,
  refundPendingAmount: (o) => o.currency,
  refundableAmount: (o) => o.currency,
  payerPrice: (o) => o.psCurrency ?? o.currency,
  payeeReceive: (o) => o.psCurrency,
  shopWriteOff: (o) => o.shopCurrency,
};
const TIMES = new Set([
  'createdAt',
  'updatedAt',
  'processedAt',
  'nextPollAt',
  'pollDeadline',
  'expiresAt',
]);

const CURRENCIES = new Set(['currency', 'psCurrency', 'shopCurrency']);

/** Labels that words alone would get wrong. */
const LABELS: Record<string, string> = {
  invoiceId: 'Gateway invoice id',
  paymentId: 'Gateway payment id',
  withdrawId: 'Gateway withdraw id',
  psCurrency: 'Payment system currency',
  payUrl: 'Pay URL',
  payerPrice: 'Payer price',
  twoStep: 'Two-step (hold, then charge)',
  holdExpiresAt: 'Hold expires at',
  needsAttention: 'Needs attention',
};

/** A view field's name in words: "refundableAmount" → "Refundable amount". */
export function fieldLabel(name: string): string {
  if (LABELS[name]) return LABELS[name];
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * One field of an object's API view as the console shows it: amounts with their currency code,
 * times in UTC, currencies by code and number, the gateway's status number with its name
 * (`gatewayStatusName`, the object's own rule), a redirect as its method and address.
 */
export function fmtField(
  name: string,
  value: unknown,
  object: Record<string, unknown>,
  gatewayStatusName?: (n: number) => string | null,
): DetailField {
  if (value === null || value === undefined) return { text: '—', num: false };
  if (CURRENCIES.has(name) && (typeof value === 'number' || typeof value === 'string')) {
    const code = currencyCode(value);
    return { text: code && code !== String(value) ? `${code} (${value})` : String(value), num: false };
  }
  if (name === 'gatewayStatus' && typeof value === 'number') {
    const named = gatewayStatusName?.(value) ?? null;
    return { text: named ? `${value} (${named.replace(/_/g, ' ')})` : `${value} (not a status we know)`, num: false };
  }
  if (name === 'redirect' && typeof value === 'object') {
    const r = value as { method?: unknown; url?: unknown; params?: unknown };
    const n = r.params && typeof r.params === 'object' ? Object.keys(r.params).length : 0;
    return { text: `${String(r.method)} ${String(r.url)}${n ? ` with ${n} form field${n === 1 ? '' : 's'}` : ''}`, num: false };
  }
  if (typeof value === 'boolean') return { text: value ? 'yes' : 'no', num: false };
  if (name in AMOUNTS && typeof value === 'string') {
    const currency = AMOUNTS[name](object);
    return { text: money(value, currency as number | string | null | undefined), num: true };
  }
  if (TIMES.has(name) && typeof value === 'string') return { text: utc(value), num: false };
  if (typeof value === 'object') return { text: JSON.stringify(value), num: false };
  return { text: String(value), num: false };
}
