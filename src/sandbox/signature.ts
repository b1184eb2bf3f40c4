import { createHash, timingSafeEqual } from 'node:crypto';
import { JsonIn, JsonOut, textOf } from './json-text';

/**
 * The gateway's signature (gateway-interface.md, Authentication), written here on its own so the
 * sandbox checks the shop's client independently of src/gateway.
 */

/** SHA-256 hex of the values joined with `:` and the secret appended. */
export function signValues(values: string[], secretKey: string): string {
  return createHash('sha256')
    .update(values.join(':') + secretKey, 'utf8')
    .digest('hex');
}

/** Signature of a request: the call's signed fields, sorted by name, values as transmitted. */
export function requestSignature(
  body: Record<string, JsonIn>,
  signedFields: readonly string[],
  secretKey: string,
): string {
  const values = [...signedFields].sort().map((field) => textOf(body[field]));
  return signValues(values, secretKey);
}

export function signatureMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Signature of a notification: every key but `sign` whose value is neither null nor empty text
 * (zero stays), sorted by key, values as transmitted text.
 */
export function notificationSignature(fields: Record<string, JsonOut>, secretKey: string): string {
  const values = Object.keys(fields)
    .filter((key) => key !== 'sign' && textOf(fields[key]) !== '')
    .sort()
    .map((key) => textOf(fields[key]));
  return signValues(values, secretKey);
}
