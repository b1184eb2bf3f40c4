import { sha256Hex } from '../common/sha256';
import { isLosslessNumber, stringifyLossless } from './lossless';

/**
 * Request signing (spec, Authentication): the call's signed fields, sorted by key, their values
 * joined with `:` as transmitted, the secret appended with no separator, SHA-256 lowercase hex.
 */

/** A value as it appears in the transmitted text: strings as-is, numbers by their JSON digits. */
export function signText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' || typeof value === 'bigint') return value.toString();
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'object' && value !== null) return stringifyLossless(value);
  throw new TypeError(`cannot sign a ${value === null ? 'null' : typeof value} value`);
}

/** SHA-256 lowercase hex of the sign string with the secret appended. */
export function digest(signString: string, secret: string): string {
  return sha256Hex(signString + secret);
}

/** The string to sign, without the secret. Exported for tests; never log it. */
export function buildSignString(
  body: Readonly<Record<string, unknown>>,
  signedKeys: readonly string[],
): string {
  return [...signedKeys]
    .sort()
    .map((key) => {
      if (!(key in body) || body[key] === undefined || body[key] === null) {
        throw new TypeError(`signed field "${key}" is missing from the request body`);
      }
      return signText(body[key]);
    })
    .join(':');
}

/** The `sign` value for a request body. */
export function sign(
  body: Readonly<Record<string, unknown>>,
  signedKeys: readonly string[],
  secret: string,
): string {
  return digest(buildSignString(body, signedKeys), secret);
}
