import { sha256Hex } from '../common/sha256';
import { notificationSignString } from '../gateway';

/** Bumped when the key's recipe changes: rows of an older recipe are re-keyed at start-up. */
export const NOTIFICATION_KEY_VERSION = 3;

/**
 * The inbox key of a notification: its kind (`type`) and exactly what its signature covers (the
 * sign string: non-empty fields but `sign`, sorted, values joined). A redelivery lands on the same
 * row whatever its field order, spelling (JSON or form), or unsigned extras (`"zz":""`, `null`):
 * none of these change what the gateway vouched for, so none makes a new notification to apply.
 * The kind takes part: the same signed body received as another kind is another notification,
 * so no copy under a wrong `type` can occupy the row of the genuine one. `verified: false` keys a
 * separate space, so an unverifiable copy can never occupy it either.
 *
 * Built as SHA-256 of `type:` and the version-2 key (signedTextKey), so rows keyed by version 2
 * are re-keyed at start-up by one SQL pass over their stored key and type (notification-rekey.ts),
 * without opening their sealed fields. The type is never longer than 32 characters and the
 * version-2 key is 64 hex digits, so the text splits one way only.
 */
export function notificationContentKey(
  type: string,
  fields: Readonly<Record<string, string>>,
  verified = true,
): string {
  return typedKey(type, signedTextKey(fields, verified));
}

/** The version-2 key: what the signature covers, and whether it verified. */
export function signedTextKey(fields: Readonly<Record<string, string>>, verified: boolean): string {
  return sha256Hex(JSON.stringify([verified ? 'v' : 'u', notificationSignString(fields)]));
}

/** A version-2 key made version 3 (its SQL twin: TYPED_KEY_SQL in notification-rekey.ts). */
export function typedKey(type: string, signedKey: string): string {
  return sha256Hex(`${type}:${signedKey}`);
}

/** `::ffff:127.0.0.1` (IPv4 mapped into IPv6, as Node reports it on a dual-stack socket) → `127.0.0.1`. */
export function normaliseIp(ip: string | undefined): string {
  if (!ip) return '';
  const t = ip.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(t);
  return mapped ? mapped[1] : t;
}

export function isAllowedSource(ip: string | undefined, allowed: readonly string[]): boolean {
  const source = normaliseIp(ip);
  return source !== '' && allowed.some((a) => normaliseIp(a) === source);
}
