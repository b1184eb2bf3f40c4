import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { randomBytesPooled } from './random-token';

/**
 * Keys derived from the gateway secret (`deriveKey`: the payout request fingerprints written
 * before the key ring, still matched), and the sealing that payout accounts used before the
 * data-encryption key ring (key-ring.ts): kept so the start-up step (keys/reseal.ts) can open
 * those values once and re-seal them under the ring.
 * New values are never sealed here.
 *
 * Format: `v1.<nonce>.<tag>.<ciphertext>`, each part base64url.
 */
const VERSION = 'v1';
const NONCE_BYTES = 12;

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

/** A 32-byte key for one purpose, derived from the master secret. */
export function deriveKey(secret: string, purpose: string): Buffer {
  if (secret.length === 0) throw new SealError('cannot derive a key from an empty secret');
  return Buffer.from(
    hkdfSync(
      'sha256',
      Buffer.from(secret, 'utf8'),
      Buffer.alloc(0),
      `piastrix-orchestrator:${purpose}`,
      32,
    ),
  );
}

export function seal(plaintext: string, key: Buffer): string {
  const nonce = randomBytesPooled(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(VERSION));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    VERSION,
    nonce.toString('base64url'),
    tag.toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

/** Opens a sealed text; throws SealError when it was altered or sealed under another key. */
export function unseal(sealed: string, key: Buffer): string {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SealError('not a sealed value');
  const [, nonce, tag, body] = parts.map((p) => Buffer.from(p, 'base64url'));
  if (nonce.length !== NONCE_BYTES || tag.length !== 16) throw new SealError('not a sealed value');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(Buffer.from(VERSION));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('sealed value failed authentication (altered, or another key)');
  }
}
