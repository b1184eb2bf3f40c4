/**
 * A small declarative schema for environment variables, local on purpose rather than zod,
 * envalid or convict (none of which is installed, and the service takes no new dependency for
 * this):
 * - the one-line ConfigError messages are pinned by tests and read by operators; a library's
 *   messages (or a mapping layer over them) would change or blur them;
 * - money bounds (approval thresholds, daily caps) are exact decimals per currency, read with
 *   Amount: a library's number types would read them as floats;
 * - several rules span variables (lease longer than a time-out, dual threshold not below the
 *   single one, both-or-neither shop settings, defaults that depend on sandbox mode), which the
 *   libraries either cannot say or say apart from the declaration;
 * - a declaration here is a plain object whose parts (name, type, default, bounds, group, one
 *   line of doc) are data, so docs/configuration.md is generated from exactly what is validated.
 *
 * A builder (`integer`, `decimal`, `flag`, …) makes a draft; `group()` names the drafts after
 * their keys and files them under a heading. `read(env, ctx)` validates and returns the value;
 * `ctx` carries what a derived default depends on (sandbox mode, the port, …).
 */
import { bool, choice, type Env, int, intList, list, positiveNumber, str, url } from './parse';

/** What the document shows of a variable. */
export interface VarInfo {
  readonly name: string;
  readonly group: string;
  readonly doc: string;
  /** e.g. `integer`, `positive number`, `boolean`, `URL`, `comma list`. */
  readonly type: string;
  /** As shown in the document: a value, or how it is derived. */
  readonly default: string;
  /** e.g. `1–65535`, `≥ 0`; empty when the type says it all. */
  readonly bounds: string;
  /** Never repeated in a message or a log line. */
  readonly secret: boolean;
  /** e.g. `seconds`; from the name's ending (`_S`, `_MS`, `_DAYS`) unless declared. */
  readonly unit: string;
}

export interface Var<T, C = void> extends VarInfo {
  /** The value, validated, or the default; a bad value throws a ConfigError naming the variable. */
  read(env: Env, ctx: C): T;
}

export interface Draft<T, C = void> {
  readonly info: Omit<VarInfo, 'name' | 'group'>;
  read(env: Env, name: string, ctx: C): T;
}

/** A default that depends on other settings; `text` says how, for the document. */
export class Derived<T, C> {
  constructor(
    readonly text: string,
    readonly from: (ctx: C) => T,
  ) {}
}

export function derived<T, C>(text: string, from: (ctx: C) => T): Derived<T, C> {
  return new Derived(text, from);
}

type Def<T, C> = T | Derived<T, C>;

function resolve<T, C>(def: Def<T, C>, ctx: C): T {
  return def instanceof Derived ? def.from(ctx) : def;
}

function defaultText<T, C>(def: Def<T, C>, show: (v: T) => string): string {
  return def instanceof Derived ? def.text : show(def);
}

interface Common {
  /** One line for the document. */
  doc: string;
  secret?: boolean;
  /** The document's default when the value alone would not say it (e.g. `unset: no tracing`). */
  defaultText?: string;
  /** When the name does not end in it (`_S`, `_MS`, `_DAYS`), e.g. `minutes`. */
  unit?: string;
}

function info(o: Common, type: string, def: string, bounds = ''): Draft<never>['info'] {
  return {
    doc: o.doc,
    type,
    default: o.defaultText ?? def,
    bounds,
    secret: o.secret ?? false,
    unit: o.unit ?? '',
  };
}

const code = (v: string): string => `\`${v}\``;

function intBounds(min: number, max: number): string {
  if (max === Number.MAX_SAFE_INTEGER) return `≥ ${min}`;
  return `${min}–${max}`;
}

/** A whole number within [min, max]. */
export function integer<C = void>(
  o: Common & { default: Def<number, C>; min?: number; max?: number },
): Draft<number, C> {
  const min = o.min ?? 0;
  const max = o.max ?? Number.MAX_SAFE_INTEGER;
  return {
    info: info(
      o,
      'integer',
      defaultText(o.default, (v) => code(String(v))),
      intBounds(min, max),
    ),
    read: (env, name, ctx) => int(env, name, resolve(o.default, ctx), min, max),
  };
}

/** A whole number within [min, max]; unset reads as undefined. */
export function optionalInteger(
  o: Common & { defaultText: string; min?: number; max?: number },
): Draft<number | undefined> {
  const min = o.min ?? 0;
  const max = o.max ?? Number.MAX_SAFE_INTEGER;
  return {
    info: info(o, 'integer', '', intBounds(min, max)),
    read: (env, name) => (str(env, name) === undefined ? undefined : int(env, name, 0, min, max)),
  };
}

/** A number above zero, decimals allowed (durations and scales; never money). */
export function decimal<C = void>(o: Common & { default: Def<number, C> }): Draft<number, C> {
  return {
    info: info(
      o,
      'number',
      defaultText(o.default, (v) => code(String(v))),
      '> 0',
    ),
    read: (env, name, ctx) => positiveNumber(env, name, resolve(o.default, ctx)),
  };
}

/** true/false (also 1/0, yes/no, on/off). */
export function flag<C = void>(o: Common & { default: Def<boolean, C> }): Draft<boolean, C> {
  return {
    info: info(
      o,
      'boolean',
      defaultText(o.default, (v) => code(String(v))),
    ),
    read: (env, name, ctx) => bool(env, name, resolve(o.default, ctx)),
  };
}

/** Free text, trimmed; blank reads as unset. */
export function text(o: Common & { default: string }): Draft<string> {
  return {
    info: info(o, 'string', code(o.default)),
    read: (env, name) => str(env, name) ?? o.default,
  };
}

/** Free text, trimmed; unset or blank reads as undefined. */
export function optionalText(o: Common & { defaultText: string }): Draft<string | undefined> {
  return { info: info(o, 'string', ''), read: (env, name) => str(env, name) };
}

/** An absolute http(s) URL; unset reads as the default (undefined when none). */
export function httpUrl<C = void>(
  o: Common & { default?: Derived<string, C>; defaultText?: string },
): Draft<string | undefined, C> {
  return {
    info: info(o, 'URL', o.default?.text ?? 'unset', 'http:// or https://'),
    read: (env, name, ctx) => url(env, name) ?? (o.default ? o.default.from(ctx) : undefined),
  };
}

/** A comma list; unset reads as the default, set but blank as an empty list. */
export function stringList<C = void>(
  o: Common & { default: Def<string[], C>; type?: string },
): Draft<string[], C> {
  return {
    info: info(
      o,
      o.type ?? 'comma list',
      defaultText(o.default, (v) => (v.length === 0 ? 'empty' : code(v.join(',')))),
    ),
    read: (env, name, ctx) => list(env, name, resolve(o.default, ctx)),
  };
}

/** A comma list of whole numbers. */
export function integerList(o: Common & { default: number[] }): Draft<number[]> {
  return {
    info: info(
      o,
      'comma list of integers',
      o.default.length === 0 ? 'empty' : code(o.default.join(',')),
    ),
    read: (env, name) => intList(env, name, o.default),
  };
}

/** One of a few words. */
export function oneOf<T extends string>(
  o: Common & { values: readonly T[]; default: T },
): Draft<T> {
  return {
    info: info(o, o.values.map(code).join(' or '), code(o.default)),
    read: (env, name) => choice(env, name, o.values, o.default),
  };
}

/** A value with a structure of its own, read by a function of values.ts or gateway-calls.ts. */
export function custom<T, C = void>(
  o: Common & {
    type: string;
    default: string;
    bounds?: string;
    read: (env: Env, name: string, ctx: C) => T;
  },
): Draft<T, C> {
  return { info: info(o, o.type, o.default, o.bounds), read: o.read };
}

/** Only `info` constrains a group's drafts: a `read` in the constraint would infer each ctx as never. */
type AnyDraft = { readonly info: Draft<unknown>['info'] };

type Named<D extends Record<string, AnyDraft>> = {
  [K in keyof D]: D[K] extends Draft<infer T, infer C> ? Var<T, C> : never;
};

export interface Group<D extends Record<string, AnyDraft>> {
  readonly title: string;
  /** A sentence under the heading. */
  readonly intro: string;
  readonly vars: Named<D>;
}

const UNITS: Record<string, string> = { S: 'seconds', MS: 'milliseconds', DAYS: 'days' };

function unitOf(name: string): string {
  const m = /_(S|MS|DAYS)$/.exec(name);
  return m === null ? '' : UNITS[m[1]];
}

/** Names each draft after its key (the variable's name) and files it under the heading. */
export function group<D extends Record<string, AnyDraft>>(
  title: string,
  intro: string,
  drafts: D,
): Group<D> {
  const vars: Record<string, Var<unknown, unknown>> = {};
  for (const [name, d] of Object.entries(drafts) as Array<[string, Draft<unknown, unknown>]>) {
    vars[name] = {
      ...d.info,
      unit: d.info.unit || unitOf(name),
      name,
      group: title,
      read: (env: Env, ctx: unknown) => d.read(env, name, ctx) as unknown,
    };
  }
  return { title, intro, vars: vars as Named<D> };
}
