/**
 * Readers of the variables whose values have a structure of their own (URLs of one scheme, key
 * lists, amounts per currency, proxy lists, time zones). Each refuses a bad value with a one-line
 * ConfigError that never repeats a secret (a key, a password inside a URL).
 */
import { isIP } from 'node:net';
import { SCOPES, type Scope } from '../common/actor';
import { minorUnitsProblem, parseCurrencyInput } from '../common/currency';
import { Amount } from '../common/money';
import { decodeWebhookSecret, WEBHOOK_SECRET_PROBLEM } from '../common/webhook-secret';
import { ConfigError, type Env, list, str } from './parse';
import { isTrustPreset } from './trusted-proxies';
import type { ShopKey } from './types';

/**
 * Amounts per currency, `643:50000.00,840:1000.00` (the alphabetic code is taken too: `RUB:…`):
 * each amount an exact positive decimal within its currency's minor unit, each currency once.
 * Unset: an empty map.
 */
export function currencyAmounts(env: Env, name: string): ReadonlyMap<number, Amount> {
  const out = new Map<number, Amount>();
  for (const entry of list(env, name)) {
    const colon = entry.indexOf(':');
    const code = colon < 0 ? null : parseCurrencyInput(entry.slice(0, colon).trim());
    if (code === null)
      throw new ConfigError(
        name,
        `entries must be currency:amount (643:50000.00), got "${entry.slice(0, 60)}"`,
      );
    const text = entry.slice(colon + 1).trim();
    if (!Amount.isValid(text) || !Amount.parse(text).isPositive())
      throw new ConfigError(
        name,
        `amount of currency ${code} must be a positive decimal string, got "${text.slice(0, 40)}"`,
      );
    const tooFine = minorUnitsProblem(text, code);
    if (tooFine) throw new ConfigError(name, `amount of currency ${code} ${tooFine}`);
    if (out.has(code)) throw new ConfigError(name, `names currency ${code} twice`);
    out.set(code, Amount.parse(text));
  }
  return out;
}

/**
 * An approval threshold: `643:50000.00,840:1000.00` read exactly (Amount, never a float), keyed by
 * ISO 4217 numeric code; unset or empty: no threshold.
 */
export function thresholdMap(env: Env, name: string): Map<number, Amount> {
  const map = new Map<number, Amount>();
  const raw = str(env, name);
  if (raw === undefined || raw.trim() === '') return map;
  for (const entry of raw.split(',').map((e) => e.trim())) {
    const m = /^(\d{1,3}):(\S+)$/.exec(entry);
    if (m === null)
      throw new ConfigError(
        name,
        'must be currency:amount entries separated by commas, e.g. 643:50000.00,840:1000.00',
      );
    const currency = Number(m[1]);
    if (currency < 1)
      throw new ConfigError(name, `has currency ${m[1]}: not an ISO 4217 numeric code`);
    if (!Amount.isValid(m[2]))
      throw new ConfigError(
        name,
        `has for currency ${currency} an amount that is not a plain decimal number`,
      );
    const amount = Amount.parse(m[2]);
    if (!amount.isPositive())
      throw new ConfigError(name, `has for currency ${currency} an amount that is not above zero`);
    if (map.has(currency)) throw new ConfigError(name, `names currency ${currency} twice`);
    map.set(currency, amount);
  }
  return map;
}

/**
 * An IANA time-zone name (`Europe/Moscow`, `UTC`), as its canonical spelling. Offsets and POSIX
 * strings (`+03:00`, `UTC+3`, whose sign PostgreSQL reads the other way) are refused: the day's
 * boundaries are computed by PostgreSQL's AT TIME ZONE, which must read the same zone.
 */
export function timeZone(env: Env, name: string, fallback: string): string {
  const raw = str(env, name) ?? fallback;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(raw) || raw.length > 64)
    throw new ConfigError(
      name,
      `must be an IANA time zone name such as Europe/Moscow, got ${JSON.stringify(raw.slice(0, 64))}`,
    );
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw new ConfigError(name, `is not a known time zone: ${JSON.stringify(raw)}`);
  }
}

/** A postgres:// URL; it holds a password, so no message repeats it. */
export function databaseUrl(env: Env, name: string): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a postgres:// connection URL');
  }
  if (!['postgres:', 'postgresql:'].includes(parsed.protocol)) {
    throw new ConfigError(name, 'must be a postgres:// connection URL');
  }
  return raw;
}

/** redis:// or rediss:// with a host; it may carry a password: no message repeats it. */
export function redisUrl(env: Env, name: string): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['redis:', 'rediss:'].includes(parsed.protocol) || parsed.hostname === '') {
    throw new ConfigError(
      name,
      'must be a redis:// or rediss:// URL with a host (redis://:password@host:6379/0)',
    );
  }
  if (!/^\/?(\d+)?$/.test(parsed.pathname)) {
    throw new ConfigError(
      name,
      'may name only a database number after the host (redis://host:6379/0)',
    );
  }
  return raw;
}

export function redisPrefix(env: Env, name: string, def: string): string {
  const prefix = str(env, name) ?? def;
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) {
    throw new ConfigError(
      name,
      `must be 1 to 64 letters, digits or _ . : -, got ${JSON.stringify(prefix.slice(0, 80))}`,
    );
  }
  return prefix;
}

/** A comma list of bearer keys, each at least 16 characters; a key is never repeated in a message. */
export function bearerKeys(env: Env, name: string): string[] {
  const keys = list(env, name);
  for (const k of keys) {
    if (k.length < 16) throw new ConfigError(name, 'holds a key shorter than 16 characters');
  }
  return keys;
}

const SHOP_SCOPES: readonly Scope[] = SCOPES;

/** `key` (every shop scope) or `key:scope+scope`; the scope list follows the last colon. */
export function shopKeys(env: Env, name: string): ShopKey[] {
  return list(env, name).map((entry) => {
    const colon = entry.lastIndexOf(':');
    const key = colon < 0 ? entry : entry.slice(0, colon);
    const scopes = colon < 0 ? [...SHOP_SCOPES] : entry.slice(colon + 1).split('+');
    if (key.length < 16) throw new ConfigError(name, 'holds a key shorter than 16 characters');
    for (const sc of scopes) {
      if (!SHOP_SCOPES.includes(sc as Scope)) {
        throw new ConfigError(
          name,
          `names an unknown scope "${sc.slice(0, 20)}" (known: ${SHOP_SCOPES.join(', ')})`,
        );
      }
    }
    return { key, scopes: scopes as Scope[] };
  });
}

/** Every shop scope: what a key without a scope list, or a generated one, may do. */
export function allShopScopes(): Scope[] {
  return [...SHOP_SCOPES];
}

/**
 * TRUST_PROXY's form: false, a hop count, or a list of addresses/CIDRs/presets. How wide the list
 * may be is a rule of its own (`trustProxyWidth` in rules.ts), as it reads TRUST_PROXY_ALLOW_WIDE.
 */
export function trustProxyValue(env: Env, name: string): false | number | string[] {
  const raw = str(env, name);
  if (raw === undefined || /^(false|0|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new ConfigError(
      name,
      'true would believe X-Forwarded-For from any client; give the number of proxy hops in front of the service (e.g. 1) or their addresses/CIDRs',
    );
  }
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw.split(',').map((entry) => {
    const e = entry.trim();
    if (isTrustPreset(e)) return e;
    const [addr, bits, extra] = e.split('/');
    const family = isIP(addr);
    const max = family === 4 ? 32 : 128;
    const okBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !okBits || extra !== undefined) {
      throw new ConfigError(
        name,
        `must be false, a hop count or a comma list of addresses/CIDRs, got "${e.slice(0, 60)}"`,
      );
    }
    return e;
  });
}

/** A comma list of absolute http(s) URLs. */
export function webhookUrls(env: Env, name: string): string[] {
  return list(env, name).map((u) => {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new ConfigError(name, 'must be a comma list of absolute URLs');
    }
    if (!['http:', 'https:'].includes(parsed.protocol))
      throw new ConfigError(name, 'must hold http(s) URLs only');
    // fetch refuses such an address (no delivery would ever go out) and it would put its password
    // in every error text: the receiver's credentials belong in its query or its own secret.
    if (parsed.username !== '' || parsed.password !== '')
      throw new ConfigError(name, 'must not hold user information (user:password@) in an address');
    return u;
  });
}

/** The Standard Webhooks key: `whsec_` (optional) + base64 of at least 24 bytes, decoded. */
export function webhookSecret(env: Env, name: string): Buffer | null {
  const raw = str(env, name);
  if (raw === undefined) return null;
  const key = decodeWebhookSecret(raw);
  if (key === null) throw new ConfigError(name, WEBHOOK_SECRET_PROBLEM);
  return key;
}

/** A UTC offset such as `+03:00`. */
export function utcOffset(env: Env, name: string, def: string): string {
  const o = str(env, name) ?? def;
  if (!/^[+-]\d{2}:\d{2}$/.test(o)) throw new ConfigError(name, 'must look like +03:00');
  return o;
}
