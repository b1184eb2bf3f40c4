import type { IncomingHttpHeaders } from 'node:http';
import { UnsupportedMediaType, type FieldError } from './errors';
import { reservedMetadataKey } from './metadata';

/** Deeper than any body this API takes (card, clientInfo, extras are one or two levels). */
const MAX_DEPTH = 32;

/**
 * More properties than any object of this API has (a create has about 20 top-level fields, a
 * gateway notification about 30, `metadata` at most 20 keys). Above it, validation would do work
 * and write an error per property: a small body would cost much and answer much more.
 */
export const MAX_KEYS_PER_OBJECT = 64;

/**
 * Refuses, before any handler runs, what no field of this API may hold and PostgreSQL or the
 * gateway cannot take: NUL characters and lone UTF-16 surrogates (in the path, the query or the
 * body), bodies nested deeper than MAX_DEPTH and objects (the query included) with more than
 * MAX_KEYS_PER_OBJECT properties, each as one error. Everything else is the DTOs' business.
 */
export function inputProblem(url: string, query: unknown, body: unknown): FieldError | null {
  return (
    urlProblem(url) ??
    stringsProblem(query, 'query') ??
    stringsProblem(body, '') ??
    reservedMetadataKey(query) ??
    reservedMetadataKey(body)
  );
}

/** Where the JSON routes live: everything under the global prefix takes JSON bodies only. */
const JSON_PREFIX = '/api/v1/';

/**
 * A body on a JSON route that is not `application/json` is a 415 naming the type, before
 * anything reads it: curl's `-d` sends a form, which would otherwise be validated field by field
 * (its whole text one "field"). `path` is the request's path as the router routes it (decoded
 * once by routedPath: `/%61pi/v1/…` is `/api/v1/…`, the absolute request form its path); the
 * webhook, the payer page and the console's form posts are outside the prefix. A request without a body (no length, or length 0) has nothing to refuse.
 */
export function unsupportedBody(method: string, path: string, headers: IncomingHttpHeaders): UnsupportedMediaType | null {
  if (
    hasBody(headers) &&
    path.startsWith(JSON_PREFIX) &&
    !isJson(headers['content-type']) &&
    !(isBatchUpload(method, path) && isMediaType(headers['content-type'], 'text/csv'))
  )
    return new UnsupportedMediaType(headers['content-type']);
  return null;
}

/**
 * The one route that takes a large body, and CSV as well as JSON: `POST /payouts/batches`
 * (shared/API.md, Payouts). Matched as one exact method and path as the router routes it
 * (routedPath): a spelling the router does not route there keeps the 64 kB JSON-only rules.
 */
export const PAYOUT_BATCH_ROUTE = {
  method: 'POST',
  path: '/api/v1/payouts/batches',
  /** The route's access rule (its handler declares it from here), checked before its body is read. */
  scopes: ['payouts'],
} as const;
/** 10,000 rows of about 300 bytes, with room to spare; larger is a 413. */
export const PAYOUT_BATCH_BODY_LIMIT = 5 * 1024 * 1024;

/** `path`: the request's path as the router routes it (request.path, routedPath). */
export function isBatchUpload(method: string, path: string): boolean {
  return method === PAYOUT_BATCH_ROUTE.method && path === PAYOUT_BATCH_ROUTE.path;
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

function isJson(contentType: string | undefined): boolean {
  return isMediaType(contentType, 'application/json');
}

function isMediaType(contentType: string | undefined, type: string): boolean {
  return contentType !== undefined && contentType.split(';')[0].trim().toLowerCase() === type;
}

function urlProblem(url: string): FieldError | null {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path.toLowerCase().includes('%00')) return { field: 'path', message: 'must not contain NUL characters' };
  if (q >= 0 && url.slice(q).toLowerCase().includes('%00')) return { field: 'query', message: 'must not contain NUL characters' };
  return null;
}

/**
 * What the edge refuses in one value of a body it did not walk itself (a payout batch's rows,
 * walked a slice at a time after the key's scope was checked): `path` names it, `depth` is how
 * deep in the body it sits.
 */
export function valueProblem(value: unknown, path: string, depth: number): FieldError | null {
  return stringsProblem(value, path, depth);
}

function stringsProblem(root: unknown, rootName: string, rootDepth = 0): FieldError | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: rootName, depth: rootDepth }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) return { field: path || 'body', message: 'must not contain NUL characters' };
      if (!wellFormed(value)) return { field: path || 'body', message: 'must be well-formed Unicode' };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_DEPTH) return { field: path || 'body', message: `is nested more than ${MAX_DEPTH} levels deep` };
    const keys = Object.keys(value);
    if (!Array.isArray(value) && keys.length > MAX_KEYS_PER_OBJECT) {
      return { field: path || rootName || 'body', message: `has more than ${MAX_KEYS_PER_OBJECT} properties` };
    }
    for (const key of keys) {
      const at = path ? `${path}.${key}` : key;
      if (key.includes('\0') || !wellFormed(key)) {
        return { field: rootName || 'body', message: 'has a property name with a NUL character or bad Unicode' };
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: at.slice(0, 200), depth: depth + 1 });
    }
  }
  return null;
}

/** No lone UTF-16 surrogate (String.prototype.isWellFormed, which our ES2022 target lacks). */
function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}
