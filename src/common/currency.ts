import currencyCodes from 'currency-codes';

type CurrencyEntry = NonNullable<ReturnType<typeof currencyCodes.number>>;

/**
 * The list by numeric and by alphabetic code, made once: the package searches its whole list on
 * every lookup, and a create looks a currency up several times (issue #23).
 */
const byNumber = new Map<number, CurrencyEntry>();
const byCode = new Map<string, CurrencyEntry>();
for (const entry of currencyCodes.data) {
  const n = parseInt(entry.number, 10);
  if (Number.isInteger(n) && !byNumber.has(n)) byNumber.set(n, entry);
  if (!byCode.has(entry.code)) byCode.set(entry.code, entry);
}

/**
 * ISO 4217 minor units by numeric code, from the maintained `currency-codes` list (643 → 2,
 * 392 → 0, 48 → 3). Null for a code the list does not know (the payway check decides then).
 */
export function minorUnits(currency: number): number | null {
  if (!Number.isInteger(currency) || currency < 1 || currency > 999) return null;
  const entry = byNumber.get(currency);
  return entry ? entry.digits : null;
}

/** Fraction digits written in a decimal string ("100.10" → 2; "100" → 0). */
function fractionDigits(amount: string): number {
  const dot = amount.indexOf('.');
  return dot < 0 ? 0 : amount.length - dot - 1;
}

/** The problem with `amount` in `currency`, or null: more fraction digits than the currency has. */
export function minorUnitsProblem(amount: string, currency: number): string | null {
  const digits = minorUnits(currency);
  if (digits === null || fractionDigits(amount) <= digits) return null;
  return digits === 0
    ? `must be a whole number in currency ${currency}`
    : `has more than ${digits} fraction digits, the minor unit of currency ${currency}`;
}

/**
 * A currency code as the gateway writes it (a JSON number or its text: `643`, `"643"`), or null.
 * A code, never an amount: codes are small whole numbers.
 */
export function currencyCodeOf(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : value;
  return typeof text === 'string' && /^[0-9]{1,4}$/.test(text) ? parseInt(text, 10) : null;
}

/** What every currency error says: the codes taken, with an example. */
export const CURRENCY_MESSAGE =
  'must be an ISO 4217 currency code, numeric or alphabetic: 643 or "RUB" for the Russian ruble';

/**
 * A currency as a shop may write it (issue #25): the ISO 4217 numeric code as a JSON number
 * (`643`) or its three digits as text (`"643"`), or the alphabetic code in any case (`"RUB"`,
 * `"rub"`). The numeric code, or null for anything else (an alphabetic code ISO 4217 does not
 * list, a number outside 1–999, a fraction, other text).
 */
export function parseCurrencyInput(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1 && value <= 999 ? value : null;
  if (typeof value !== 'string') return null;
  if (/^[0-9]{3}$/.test(value)) {
    const n = parseInt(value, 10);
    return n >= 1 ? n : null;
  }
  if (!/^[A-Za-z]{3}$/.test(value)) return null;
  const entry = byCode.get(value.toUpperCase());
  return entry ? parseInt(entry.number, 10) : null;
}

/** The ISO 4217 alphabetic code of a numeric one (643 → "RUB"), or null when not listed. */
export function alphabeticCurrency(currency: number | null): string | null {
  if (currency === null || !Number.isInteger(currency) || currency < 1 || currency > 999) return null;
  return byNumber.get(currency)?.code ?? null;
}
