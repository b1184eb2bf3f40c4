import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { randomBytesPooled } from './random-token';

/**
 * The data-encryption key ring (`DATA_ENCRYPTION_KEYS`): secrets kept at rest (payout accounts,
 * recurrent payment tokens) are sealed with AES-256-GCM under the ring's first key; every key
 * of the ring opens what it sealed, so a new key can be put first, old values re-sealed
 * (`npm run keys:rotate`) and the old key dropped afterwards.
 *
 * A sealed value is `k1.<key id>.<nonce>.<tag>.<ciphertext>` (parts base64url). Its additional
 * authenticated data names the format, the key id, and the table, column and row it belongs
 * to: a value copied into another row or column does not open.
 *
 * The ring's keys are independent of the gateway secret: rotating one never touches the other.
 */
export const SEALED_PREFIX = 'k1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export interface DataKey {
  id: string;
  /** 32 bytes as configured; purpose keys are derived from it. */
  key: Buffer;
}

/** Where a sealed value lives: part of what it is authenticated with. */
export interface SealContext {
  table: string;
  column: string;
  rowId: string;
}

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

/** `id:base64-32-bytes` entries, comma separated; throws an Error naming the problem (never a key). */
export function parseKeyRing(text: string): DataKey[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0) throw new Error('must hold at least one id:base64-key entry');
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    if (!KEY_ID.test(id))
      throw new Error(`entry ${i + 1} must be id:base64-key with an id of letters, digits, - or _`);
    if (seen.has(id)) throw new Error(`names key id "${id}" twice`);
    seen.add(id);
    const raw = entry.slice(colon + 1);
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(raw))
      throw new Error(`key "${id}" must be 32 bytes in base64 (openssl rand -base64 32)`);
    return { id, key };
  });
}

/** A fresh one-key ring as its configuration text, e.g. for a development data directory. */
export function generateKeyRingText(
  id = `dev${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`,
): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

export class KeyRing {
  private readonly sealKeys = new Map<string, Buffer>();
  private readonly indexKeys = new Map<string, Buffer>();

  constructor(private readonly keys: DataKey[]) {
    if (keys.length === 0) throw new SealError('a key ring needs at least one key');
    for (const k of keys) {
      this.sealKeys.set(k.id, derive(k.key, 'seal'));
      this.indexKeys.set(k.id, derive(k.key, 'blind-index'));
    }
  }

  /** The key that seals; the others only open. */
  get primaryId(): string {
    return this.keys[0].id;
  }

  get ids(): string[] {
    return this.keys.map((k) => k.id);
  }

  seal(plaintext: string, ctx: SealContext): string {
    const keyId = this.primaryId;
    const nonce = randomBytesPooled(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealKeys.get(keyId)!, nonce);
    cipher.setAAD(aad(keyId, ctx));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${SEALED_PREFIX}${keyId}.${[nonce, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.')}`;
  }

  /** Opens a sealed value; SealError when it was altered, moved, or its key is not in the ring. */
  unseal(sealed: string, ctx: SealContext): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || `${parts[0]}.` !== SEALED_PREFIX)
      throw new SealError('not a sealed value');
    const [, keyId, ...rest] = parts;
    const [nonce, tag, body] = rest.map((p) => Buffer.from(p, 'base64url'));
    if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES)
      throw new SealError('not a sealed value');
    const key = this.sealKeys.get(keyId);
    if (key === undefined)
      throw new SealError(`sealed under key "${keyId}", which DATA_ENCRYPTION_KEYS does not hold`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAAD(aad(keyId, ctx));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError(
        `sealed value of ${ctx.table}.${ctx.column} failed authentication (altered or moved)`,
      );
    }
  }

  /** The key id a sealed value names, or null for anything else. */
  keyIdOf(sealed: string): string | null {
    if (!isSealed(sealed)) return null;
    return sealed.split('.')[1] ?? null;
  }

  /** True when the value is sealed under the primary key (nothing for rotation to do). */
  isCurrent(sealed: string): boolean {
    return this.keyIdOf(sealed) === this.primaryId;
  }

  /**
   * The blind index of a value under the primary key: an HMAC that allows equality look-ups
   * without storing the value. `purpose` separates indexes of different kinds of value.
   */
  blindIndex(value: string, purpose: string): string {
    return this.blindIndexUnder(this.primaryId, value, purpose);
  }

  /** The value's blind index under every key: a look-up during a rotation matches either. */
  blindIndexes(value: string, purpose: string): string[] {
    return this.ids.map((id) => this.blindIndexUnder(id, value, purpose));
  }

  private blindIndexUnder(keyId: string, value: string, purpose: string): string {
    return createHmac('sha256', this.indexKeys.get(keyId)!)
      .update(`${purpose}\u0000${value}`, 'utf8')
      .digest('hex');
  }
}

function derive(key: Buffer, purpose: string): Buffer {
  return Buffer.from(
    hkdfSync('sha256', key, Buffer.alloc(0), `piastrix-orchestrator:data:${purpose}`, 32),
  );
}

function aad(keyId: string, ctx: SealContext): Buffer {
  return Buffer.from(JSON.stringify(['k1', keyId, ctx.table, ctx.column, ctx.rowId]), 'utf8');
}
