/**
 * The primitive readers of environment variables: each takes the raw text, refuses a bad value
 * with a one-line `ConfigError` naming the variable, and returns the typed value. The messages
 * are pinned by tests and read by operators: change them only on purpose.
 */

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

/** Trimmed; unset and blank both read as unset. */
export function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function int(
  env: Env,
  name: string,
  def: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A duration or scale above zero; decimals allowed (never money: amounts are read by Amount). */
export function positiveNumber(env: Env, name: string, def: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) <= 0) {
    throw new ConfigError(name, `must be a positive number, got "${raw}"`);
  }
  return Number(raw);
}

/** A comma list; unset gives the default, set but blank an empty list. */
export function list(env: Env, name: string, def: string[] = []): string[] {
  const raw = env[name];
  if (raw === undefined) return def;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function intList(env: Env, name: string, def: number[]): number[] {
  return list(env, name, def.map(String)).map((s) => {
    if (!/^\d+$/.test(s))
      throw new ConfigError(name, `must be a comma-separated list of whole numbers, got "${s}"`);
    return Number(s);
  });
}

export function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** An absolute http(s) URL; the default, when given, is checked the same way. */
export function url(env: Env, name: string, def?: string): string | undefined {
  const raw = str(env, name) ?? def;
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!['http:', 'https:'].includes(parsed.protocol))
    throw new ConfigError(name, 'must be an http(s) URL');
  return raw;
}

/** One of a few words, e.g. `json` or `form`. */
export function choice<T extends string>(env: Env, name: string, values: readonly T[], def: T): T {
  const raw = str(env, name) ?? def;
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be ${values.join(' or ')}`);
  return raw as T;
}
