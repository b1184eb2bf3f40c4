import { isLosslessNumber, parse, stringify } from 'lossless-json';

/**
 * Gateway responses carry amounts as JSON numbers. `JSON.parse` would turn `100.10` into the
 * float 100.1 (and tiny values into `1e-7`), so bodies are parsed here, keeping every number's
 * own digits.
 */

/** Field names whose numbers are money (or rates) and are therefore kept as exact text. */
export const MONEY_FIELDS: ReadonlySet<string> = new Set([
  'shop_amount',
  'client_price',
  'shop_refund',
  'payer_price',
  'min_amount',
  'max_amount',
  'percent',
  'fix',
  'percent_part',
  'fix_part',
  'payee_receive',
  'shop_write_off',
  'balance',
  'available',
  'hold',
  'frozen',
  'amount',
  'settlement_amount',
  'settlement_rate',
]);

const SAFE_INTEGER = /^-?\d+$/;

/** JSON number text to a value: money and non-integers stay text, safe integers become numbers. */
function numberValue(key: string | undefined, text: string): string | number {
  if (key !== undefined && MONEY_FIELDS.has(key)) return text;
  if (!SAFE_INTEGER.test(text)) return text;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

function convert(value: unknown, key: string | undefined): unknown {
  if (isLosslessNumber(value)) return numberValue(key, value.value);
  // Elements of an array take the array's field name: `amounts: [1.5]` is still money.
  if (Array.isArray(value)) return value.map((v: unknown) => convert(v, key));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = convert(v, k);
    return out;
  }
  return value;
}

/**
 * Parses a gateway response body. Money fields and any non-integer number become the exact
 * JSON text (`100.10` -> "100.10"); other integers become numbers, unless beyond
 * Number.MAX_SAFE_INTEGER, where they stay text. Throws SyntaxError on invalid JSON.
 */
export function parseExactJson(text: string): unknown {
  return convert(parse(text), undefined);
}

/** Parses JSON keeping every number as a LosslessNumber (its digits exactly as transmitted). */
export function parseLossless(text: string): unknown {
  return parse(text);
}

/** Compact JSON text in which LosslessNumbers print their own digits. */
export function stringifyLossless(value: unknown): string {
  return stringify(value) ?? '';
}

export { isLosslessNumber };
