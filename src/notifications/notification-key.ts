import { sha256Hex } from '../common/sha256';
import { notificationSignString } from '../gateway';

/** Bumped when the key's recipe changes: rows of an older recipe are re-keyed at start-up. */
export const NOTIFICATION_KEY_VERSION = 2;

/**
 * The inbox key of a notification: SHA-256 over exactly what its signature covers (the sign
 * string: non-empty fields but `sign`, sorted, values joined). A redelivery lands on the same row
 * whatever its field order, spelling (JSON or form), or unsigned extras (`"zz":""`, `null`): none
 * of these change what the gateway vouched for, so none makes a new notification to apply. The
 * `type` query parameter is not signed and takes no part either. `verified: false` keys a separate
 * space, so an unverifiable copy can never occupy the row of the genuine notification.
 */
export function notificationContentKey(
  fields: Readonly<Record<string, string>>,
  verified = true,
): string {
  return sha256Hex(JSON.stringify([verified ? 'v' : 'u', notificationSignString(fields)]));
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
