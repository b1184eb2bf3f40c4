import { randomBytes, randomFillSync } from 'node:crypto';

/** Bytes drawn from the CSPRNG at a time; Node's own randomUUID keeps a cache the same way. */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * `bytes` random bytes from the CSPRNG, cut from a 4 KB pool refilled by `randomFillSync` once it
 * is used up: each byte is handed out once, and a caller no longer pays for a call into the
 * CSPRNG of its own (about 2 µs alone, 2 % of a create's or a notification's CPU under load).
 * Larger requests go to `randomBytes` directly. What was handed out is not kept: a later heap
 * dump finds zeros where it was.
 */
function drawPooled<T>(bytes: number, take: (from: number, to: number) => T, whole: () => T): T {
  if (!Number.isInteger(bytes) || bytes <= 0)
    throw new RangeError('random bytes: the size must be a positive integer');
  if (bytes > POOL_BYTES / 4) return whole();
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = take(offset, offset + bytes);
  pool.fill(0, offset, offset + bytes);
  offset += bytes;
  return out;
}

/** `bytes` random bytes as base64url text (tokens), from the pool. */
export function randomToken(bytes: number): string {
  return drawPooled(
    bytes,
    (from, to) => pool.toString('base64url', from, to),
    () => randomBytes(bytes).toString('base64url'),
  );
}

/** `bytes` random bytes in a buffer of their own (a seal's nonce), from the pool. */
export function randomBytesPooled(bytes: number): Buffer {
  return drawPooled(
    bytes,
    (from, to) => Buffer.from(pool.subarray(from, to)),
    () => randomBytes(bytes),
  );
}
