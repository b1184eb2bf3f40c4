import { createHash } from 'node:crypto';

/**
 * The inbox key of a notification: SHA-256 over its type and its fields (sign removed), sorted by
 * name. A redelivery carries the same fields, so it lands on the same row; field order on the wire
 * does not matter. `verified: false` keys a separate space, so an unverifiable copy can never
 * occupy the row of the genuine notification.
 */
export function notificationContentKey(
  type: string,
  fields: Readonly<Record<string, string>>,
  verified = true,
): string {
  const sorted = Object.keys(fields)
    .sort()
    .map((k) => [k, fields[k]]);
  return createHash('sha256')
    .update(JSON.stringify([verified ? 'v' : 'u', type, sorted]), 'utf8')
    .digest('hex');
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
