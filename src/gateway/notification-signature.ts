import { timingSafeEqual } from 'node:crypto';
import { parseLossless } from './lossless';
import { digest, signText } from './signature';

/**
 * Server-notification verification (spec, Events rule 2): every key except `sign` whose value is
 * neither null nor an empty string, sorted by key, values as transmitted, joined with `:`, the
 * secret appended, SHA-256 hex. Unknown fields take part like any other.
 */

export interface NotificationCheck {
  valid: boolean;
  /** Every received field except `sign` and null ones, as text exactly as transmitted. */
  fields: Record<string, string>;
  error?: string;
  /** The notification's `shop_id` names no shop of ours: there is no secret to verify it with. */
  unknownShop?: boolean;
}

/** The secret of the shop a notification names (its `shop_id` text); undefined: not our shop. */
export type NotificationSecret = string | ((shopId: string | undefined) => string | undefined);

type RawFields = Record<string, unknown>;

function readBody(rawBody: string | Buffer, contentType: string): RawFields {
  const text = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  if (mediaType === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(text));
  }
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    const parsed = parseLossless(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new SyntaxError('JSON body is not an object');
    }
    return parsed as RawFields;
  }
  throw new SyntaxError(`unsupported content type "${mediaType}"`);
}

function signString(fields: Readonly<Record<string, unknown>>): string {
  const text: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields))
    if (v !== null && v !== undefined) text[k] = signText(v);
  return notificationSignString(text);
}

/**
 * The text a notification's signature covers, from its fields as text (received or stored):
 * every key except `sign` whose value is not empty, sorted, values joined with `:`. Two bodies
 * with the same sign string carry the same signature: to us they are the same notification.
 */
export function notificationSignString(fields: Readonly<Record<string, string>>): string {
  return Object.keys(fields)
    .filter((k) => k !== 'sign' && fields[k] !== '')
    .sort()
    .map((k) => fields[k])
    .join(':');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) {
    // timingSafeEqual needs equal lengths; spend the same work so timing does not tell.
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

export function verifyNotification(
  rawBody: string | Buffer,
  contentType: string,
  secretOf: NotificationSecret,
): NotificationCheck {
  let raw: RawFields;
  try {
    raw = readBody(rawBody, contentType);
  } catch (e) {
    return { valid: false, fields: {}, error: `unreadable notification: ${(e as Error).message}` };
  }
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k !== 'sign' && v !== null) fields[k] = signText(v);
  }
  const given = raw.sign;
  if (typeof given !== 'string' || given === '')
    return { valid: false, fields, error: 'missing sign' };
  const secret = typeof secretOf === 'string' ? secretOf : secretOf(fields.shop_id);
  if (secret === undefined) {
    const shop =
      fields.shop_id === undefined ? 'no shop_id' : `shop_id ${fields.shop_id.slice(0, 32)}`;
    return { valid: false, fields, error: `${shop} is not a configured shop`, unknownShop: true };
  }
  const expected = digest(signString(raw), secret);
  if (!sameText(expected, given.toLowerCase())) return { valid: false, fields, error: 'bad sign' };
  return { valid: true, fields };
}

/** Signs notification fields the way the gateway does; for tests and the sandbox. */
export function signNotificationFields(
  fields: Readonly<Record<string, string | number | boolean | null>>,
  secret: string,
): string {
  return digest(signString(fields), secret);
}
