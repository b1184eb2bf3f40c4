/**
 * Times as the gateway writes them: ISO 8601, with or without an offset. The interface says a
 * time without a zone is UTC+03:00 (the test server read `now` = `2023-07-18T13:23:41` that way),
 * so an offset-less time is read in the configured GATEWAY_NOW_OFFSET, the same reading the
 * service gives the `now` it sends.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** The instant a gateway time names; null for anything that is not such a time. */
export function parseGatewayTime(text: unknown, defaultOffset: string): Date | null {
  if (typeof text !== 'string') return null;
  const m = ISO.exec(text.trim());
  if (m === null) return null;
  const [, y, mo, d, h, mi, s = '00', frac = '', zone] = m;
  const offset = zone ?? defaultOffset;
  const normalised =
    offset === 'Z'
      ? 'Z'
      : offset.includes(':')
        ? offset
        : `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const millis = frac === '' ? '' : frac.slice(0, 4).padEnd(4, '0');
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${millis}${normalised}`);
  return Number.isNaN(date.getTime()) ? null : date;
}
