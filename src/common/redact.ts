/**
 * Redaction by shape, for everything that leaves the process as a log line: sensitive fields
 * are masked whatever their depth, card-number-like digit runs are masked in any string
 * (messages, structured values, error messages and stacks, causes of causes), and the payer
 * link's token `t` is cut from any URL. Redaction happens once, at the logger's serializer,
 * so no caller has to remember it.
 */
export const REDACTED = '[redacted]';

/**
 * Field names (compared without case, `_` or `-`) whose values never reach a log line. Names
 * ending in token, secret, password or signature are included too (`metricsToken`, `payToken`).
 */
const SENSITIVE_FIELDS = new Set([
  'card',
  'cardnumber',
  'pan',
  'number',
  'cvv',
  'cvv2',
  'cvc',
  'sign',
  'signature',
  'secret',
  'secretkey',
  'password',
  'token',
  'paymenttoken',
  't',
  'payurl',
  'authorization',
  'cookie',
  'apikey',
  'apikeys',
  'adminapikeys',
  'account',
  'accountdetails',
  'psdata',
  'dataencryptionkeys',
]);
const SENSITIVE_SUFFIXES = ['token', 'secret', 'secretkey', 'password', 'signature'];

export function isSensitiveField(name: string): boolean {
  const n = name.toLowerCase().replace(/[_-]/g, '');
  return SENSITIVE_FIELDS.has(n) || SENSITIVE_SUFFIXES.some((s) => n.endsWith(s));
}

/** 13-19 digits, each optionally followed by one space or dash. */
const DIGIT_RUN = /(?<![\d])\d(?:[ -]?\d){12,18}(?![\d])/g;
/** The payer link's token in a URL or query string. */
const PAY_LINK_TOKEN = /([?&]t=)[^&\s"'#]+/g;
/** A bearer key in free text. */
const BEARER = /(Bearer\s+)[^\s"',]+/gi;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * An address as it is shown anywhere (log lines, error texts, rows, API fields, pages): scheme,
 * host, port and path, never the user information or the query (a receiver's URL may carry its
 * own credentials or token there; shared/API.md, Configuration). The one redaction of addresses:
 * withoutAddressSecrets applies it to every URL in a text.
 */
export function shownAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** Any absolute URL in free text (an error message quoting the address it failed on). */
const URL_IN_TEXT = /\b[A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/[^\s"'<>`]+/g;

/** `text` with every address in it as shownAddress shows it (no user information, no query). */
export function withoutAddressSecrets(text: string): string {
  return text.replace(URL_IN_TEXT, (m) => {
    // Punctuation that ends a sentence is not part of the address.
    const tail = /[.,;:)\]]+$/.exec(m)?.[0] ?? '';
    const url = m.slice(0, m.length - tail.length);
    const shown = shownAddress(url);
    // Not parsable as a URL: still nothing before an `@` or after a `?` is shown.
    const cut = shown === '(not a URL)' ? url.replace(/\/\/[^/]*@/, '//').replace(/[?#].*$/, '') : shown;
    return cut + tail;
  });
}

/** Masks PAN-like runs (Luhn-valid, with or without spaces/dashes), pay-link tokens, bearer keys and addresses' user information and queries. */
export function scrubText(text: string): string {
  return withoutAddressSecrets(text)
    .replace(DIGIT_RUN, (m) => {
      const digits = m.replace(/[ -]/g, '');
      if (digits.length < 13 || digits.length > 19 || !luhnValid(digits)) return m;
      return `${digits.slice(0, 6)}******${digits.slice(-4)}`;
    })
    .replace(PAY_LINK_TOKEN, `$1${REDACTED}`)
    .replace(BEARER, `$1${REDACTED}`);
}

const MAX_DEPTH = 1000;

/** A copy of `value` safe to log: sensitive fields masked at any depth, strings scrubbed. */
export function redact(value: unknown): unknown {
  return walk(value, new WeakSet(), 0);
}

function walk(value: unknown, seen: WeakSet<object>, depth: number): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[circular]';
  if (depth > MAX_DEPTH) return '[too deep]';
  seen.add(value);
  try {
    if (value instanceof Error) return errorObject(value, seen, depth);
    if (Array.isArray(value)) return value.map((v) => walk(v, seen, depth + 1));
    if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
    if (value instanceof Date) return value;
    if (value instanceof Map) return walk(Object.fromEntries(value), seen, depth + 1);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        isSensitiveField(k) && v !== null && v !== undefined ? REDACTED : walk(v, seen, depth + 1);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** An error as a plain object: type, message, stack, own fields and its cause chain, redacted. */
function errorObject(err: Error, seen: WeakSet<object>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { type: err.name, message: scrubText(err.message) };
  if (err.stack) out.stack = scrubText(err.stack);
  for (const [k, v] of Object.entries(err)) {
    if (k === 'cause') continue;
    out[k] =
      isSensitiveField(k) && v !== null && v !== undefined ? REDACTED : walk(v, seen, depth + 1);
  }
  if (err.cause !== undefined) out.cause = walk(err.cause, seen, depth + 1);
  if (err instanceof AggregateError) out.errors = walk(err.errors, seen, depth + 1);
  return out;
}
