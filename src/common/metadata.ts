import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsOptional, registerDecorator } from 'class-validator';
import { CARD_NUMBER_MESSAGE, CVV_KEY_MESSAGE, holdsCardNumber, namesCvv } from './card-data';
import type { FieldError } from './errors';

/** shared/API.md, Metadata: an object of string keys and string values within these limits. */
export const METADATA_MAX_KEYS = 20;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_VALUE_LENGTH = 500;

const SHAPE = 'must be an object of string keys and string values';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A key as an error names it (`metadata.orderRef`); an overlong key is cut, never echoed whole. */
function fieldOf(field: string, key: string): string {
  const shown =
    key.length > METADATA_MAX_KEY_LENGTH ? `${key.slice(0, METADATA_MAX_KEY_LENGTH)}…` : key;
  return `${field}.${shown}`;
}

/**
 * What is wrong with a `metadata` value, one error per key (`metadata.<key>`), at most one per
 * key and never more than the key limit allows plus one. `filter`: the list query form
 * (`?metadata[key]=value`), where a repeated parameter arrives as an array.
 */
export function metadataProblems(value: unknown, field = 'metadata', filter = false): FieldError[] {
  if (!isPlainObject(value)) {
    return [{ field, message: filter ? 'filters are written metadata[key]=value' : SHAPE }];
  }
  const keys = Object.keys(value);
  // Keys named like prototype members are removed by the framework before validation; an
  // empty filter would then match everything (see reservedMetadataKey for the refusal).
  if (filter && keys.length === 0)
    return [{ field, message: 'filters are written metadata[key]=value' }];
  if (keys.length > METADATA_MAX_KEYS) {
    return [
      { field, message: `has ${keys.length} keys; at most ${METADATA_MAX_KEYS} are allowed` },
    ];
  }
  const errors: FieldError[] = [];
  for (const key of keys) {
    const v = value[key];
    const at = fieldOf(field, key);
    if (key.length < 1 || key.length > METADATA_MAX_KEY_LENGTH) {
      errors.push({ field: at, message: `key must be 1 to ${METADATA_MAX_KEY_LENGTH} characters` });
    } else if (filter && Array.isArray(v)) {
      errors.push({ field: at, message: 'may be given once' });
    } else if (typeof v !== 'string') {
      errors.push({ field: at, message: 'must be a string' });
    } else if (v.length > METADATA_MAX_VALUE_LENGTH) {
      errors.push({
        field: at,
        message: `must be at most ${METADATA_MAX_VALUE_LENGTH} characters`,
      });
    } else if (!filter && namesCvv(key)) {
      // Stored metadata only: a filter stores nothing (and finds nothing such).
      errors.push({ field: at, message: CVV_KEY_MESSAGE });
    } else if (!filter && holdsCardNumber(v)) {
      errors.push({ field: at, message: CARD_NUMBER_MESSAGE });
    }
  }
  return errors;
}

/** The constraint name flattenValidationErrors expands into per-key errors. */
export const METADATA_CONSTRAINT = 'isMetadata';
export const METADATA_FILTER_CONSTRAINT = 'isMetadataFilter';

/**
 * A `metadata` property: kept exactly as parsed (class-transformer would drop `__proto__` and
 * stumble over `constructor`), then checked by metadataProblems; each problem is its own
 * `metadata.<key>` error (see flattenValidationErrors).
 */
export function IsMetadata(filter = false): PropertyDecorator {
  const asObject = Type(() => Object);
  const keep = Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => obj[key]);
  return (target: object, propertyName: string | symbol) => {
    asObject(target, propertyName);
    keep(target, propertyName);
    registerDecorator({
      name: filter ? METADATA_FILTER_CONSTRAINT : METADATA_CONSTRAINT,
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: SHAPE },
      validator: {
        validate: (value: unknown) => metadataProblems(value, 'metadata', filter).length === 0,
      },
    });
  };
}

/** Metadata as stored and compared: `{}` when none was given. */
export function metadataOf(
  value: Record<string, string> | undefined | null,
): Record<string, string> {
  return value ?? {};
}

/**
 * The query parser of the app: Node's simple parser, with every
 * `metadata[<key>]` parameter gathered into one `metadata` object, so list DTOs can validate
 * `?metadata[orderRef]=A-1` as `{metadata: {orderRef: 'A-1'}}`. The key is everything between
 * `metadata[` and the final `]` (`metadata[a][b]` filters on the key `a][b`); a repeated
 * parameter stays an array (a 400 then); a plain `metadata=` beside them wins and is refused.
 */
export function foldMetadataQuery(parsed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  let metadata: Record<string, unknown> | null = null;
  for (const [name, value] of Object.entries(parsed)) {
    if (name.startsWith('metadata[') && name.endsWith(']')) {
      metadata ??= Object.create(null) as Record<string, unknown>;
      Object.defineProperty(metadata, name.slice('metadata['.length, -1), {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[name] = value;
    }
  }
  if (metadata !== null && !('metadata' in out)) out.metadata = metadata;
  return out;
}

/** Names the framework strips from every object before validation (prototype pollution). */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * A `metadata` key (in a body or a list filter) that the framework would silently drop before
 * validation: refused instead, naming it, so what is stored or filtered is what was sent.
 */
export function reservedMetadataKey(root: unknown): FieldError | null {
  if (root === null || typeof root !== 'object') return null;
  const metadata = (root as Record<string, unknown>).metadata;
  if (!Object.prototype.hasOwnProperty.call(root, 'metadata') || !isPlainObject(metadata))
    return null;
  for (const key of Object.keys(metadata)) {
    if (RESERVED_KEYS.has(key))
      return { field: `metadata.${key}`, message: 'is a reserved name; choose another key' };
  }
  return null;
}

/**
 * The list filter `?metadata[key]=value` (invoices, refunds, payouts): one definition of its
 * documentation and validation for every list query.
 */
export function MetadataFilter(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      name: 'metadata',
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        'Only objects whose metadata holds every given key with that value: ?metadata[orderRef]=A-1',
      example: { orderRef: 'A-1' },
    }),
    IsOptional(),
    IsMetadata(true),
  );
}
