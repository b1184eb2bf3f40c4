import currencyCodes from 'currency-codes';

/**
 * ISO 4217 minor units by numeric code, from the maintained `currency-codes` list (643 → 2,
 * 392 → 0, 48 → 3). Null for a code the list does not know (the payway check decides then).
 */
export function minorUnits(currency: number): number | null {
  if (!Number.isInteger(currency) || currency < 1 || currency > 999) return null;
  const entry = currencyCodes.number(String(currency).padStart(3, '0'));
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
