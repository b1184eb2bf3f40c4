import currencyCodes from 'currency-codes';

type CurrencyEntry = NonNullable<ReturnType<typeof currencyCodes.number>>;

/**
 * The list by numeric and by alphabetic code, made once: the package searches its whole list on
 * every lookup, and a create looks a currency up several times.
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
    ? `must be a whole number in ${currencyName(currency)}`
    : `has more than ${digits} fraction digits, the minor unit of ${currencyName(currency)}`;
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
 * ISO 4217 codes that name no currency a payment can be made in: no currency (XXX, 999), the
 * testing code (XTS, 963), precious metals, bond-market units and accounting units (XDR, XSU, XUA).
 * Taken as a currency they reached the gateway (a 5xx came back) or blamed the amount (the list
 * gives them 0 minor units).
 */
const NOT_A_CURRENCY = new Set([
  'XXX', 'XTS', 'XAU', 'XAG', 'XPD', 'XPT', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XSU', 'XUA',
]);

/** The entry of a code a payment can be made in, or undefined. */
function paymentCurrency(entry: CurrencyEntry | undefined): CurrencyEntry | undefined {
  return entry !== undefined && !NOT_A_CURRENCY.has(entry.code) ? entry : undefined;
}

/**
 * A currency as a shop may write it: the ISO 4217 numeric code as a JSON number
 * (`643`) or its three digits as text (`"643"`), or the alphabetic code in any case (`"RUB"`,
 * `"rub"`). The numeric code, or null for anything else: a code ISO 4217 does not list (`123`,
 * `"RUR"`), one that names no currency (`999`, `"XTS"`, gold), a fraction, other text.
 */
export function parseCurrencyInput(value: unknown): number | null {
  let n: number;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 1 || value > 999) return null;
    n = value;
  } else if (typeof value === 'string' && /^[0-9]{3}$/.test(value)) {
    n = parseInt(value, 10);
  } else if (typeof value === 'string' && /^[A-Za-z]{3}$/.test(value)) {
    const entry = paymentCurrency(byCode.get(value.toUpperCase()));
    return entry ? parseInt(entry.number, 10) : null;
  } else {
    return null;
  }
  return paymentCurrency(byNumber.get(n)) ? n : null;
}

/**
 * A currency named both ways, as every message names one: `JPY (392)`; the number alone for a
 * code the list does not know.
 */
export function currencyName(currency: number): string {
  const code = alphabeticCurrency(currency);
  return code === null ? String(currency) : `${code} (${currency})`;
}

/**
 * What a refused currency is told: CURRENCY_MESSAGE, after the value when it looks like a code
 * (three digits or letters; nothing longer is echoed).
 */
export function currencyProblem(value: unknown): string {
  const shown =
    (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 9999) ||
    (typeof value === 'string' && /^[A-Za-z0-9]{1,4}$/.test(value));
  if (!shown) return CURRENCY_MESSAGE;
  const listed =
    typeof value === 'number' || /^[0-9]+$/.test(value as string)
      ? byNumber.get(Number(value))
      : byCode.get((value as string).toUpperCase());
  const what =
    listed !== undefined && NOT_A_CURRENCY.has(listed.code)
      ? `${listed.code} (${parseInt(listed.number, 10)}) names no currency a payment can be made in`
      : `${typeof value === 'string' ? JSON.stringify(value) : String(value)} is not an ISO 4217 currency`;
  return `${what}; ${CURRENCY_MESSAGE}`;
}

/** The ISO 4217 alphabetic code of a numeric one (643 → "RUB"), or null when not listed. */
export function alphabeticCurrency(currency: number | null): string | null {
  if (currency === null || !Number.isInteger(currency) || currency < 1 || currency > 999) return null;
  return byNumber.get(currency)?.code ?? null;
}
