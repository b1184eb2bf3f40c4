import { hash, timingSafeEqual } from 'node:crypto';

/**
 * SHA-256 of a text's UTF-8 bytes in one call. `crypto.hash` (Node ≥ 20.12) makes no Hash object
 * per digest: half the cost of createHash().update().digest() for the short texts a request
 * hashes (its API key, its fingerprint, the gateway signature). Same bytes out.
 */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** As sha256Hex, the 32 bytes (for a constant-time comparison). */
export function sha256Bytes(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/**
 * Constant-time equality of two secrets of any length (keys, tokens, CSRF values): their digests
 * are compared, so neither the content nor the length of the expected one shows in the timing.
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256Bytes(given), sha256Bytes(expected));
}
