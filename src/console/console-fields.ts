import { money, utc } from './console-format';

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

/** One field of an object's API view as the console shows it: amounts with their currency code, times in UTC. */
export function fmtField(
  name: string,
  value: unknown,
  object: Record<string, unknown>,
): DetailField {
  if (value === null || value === undefined) return { text: '—', num: false };
  if (name in AMOUNTS && typeof value === 'string') {
    const currency = AMOUNTS[name](object);
    return { text: money(value, currency as number | string | null | undefined), num: true };
  }
  if (TIMES.has(name) && typeof value === 'string') return { text: utc(value), num: false };
  if (typeof value === 'object') return { text: JSON.stringify(value), num: false };
  return { text: String(value), num: false };
}
