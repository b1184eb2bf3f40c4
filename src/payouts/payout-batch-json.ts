/**
 * A JSON batch body `{batchId?, rows: [...]}` read a slice at a time (shared/API.md, Limits: large
 * bodies are parsed without holding the process). JSON.parse of a 5 MB body holds the event loop
 * for tens of milliseconds; here the text is cut at the top level and at each element of `rows`
 * (a scan of character codes, strings jumped over with indexOf), each piece given to JSON.parse,
 * and the work yields every YIELD_CHARS characters. The result is what JSON.parse would give for
 * the same text, and text that is not JSON is a SyntaxError as it would be.
 */

import { yieldTurn } from './payout-batch-csv';

const YIELD_CHARS = 32 * 1024;

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  return i;
}

function fail(at: number): never {
  throw new SyntaxError(`not valid JSON at position ${at}`);
}

/** The end (exclusive) of the string whose opening quote is at `i`. */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q < 0) fail(i);
    // A quote after an odd number of backslashes is escaped.
    let b = q - 1;
    while (text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** The end (exclusive) of the JSON value starting at `i` (its syntax is JSON.parse's to judge). */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) {
      j = stringEnd(text, j) - 1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return j;
      depth--;
      if (depth === 0) return j + 1;
    } else if (c === 0x2c && depth === 0) {
      return j;
    }
  }
  if (depth !== 0) fail(i);
  return j;
}

/** The body as JSON.parse would give it, parsed a slice at a time (see above). */
export async function parseBatchJson(text: string): Promise<unknown> {
  let i = skipWs(text, 0);
  // Anything but an object at the top is JSON.parse's (small or refused: no rows to slice).
  if (text.charCodeAt(i) !== 0x7b) return JSON.parse(text) as unknown;
  const out: Record<string, unknown> = {};
  let nextYield = YIELD_CHARS;
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) === 0x7d) return endOfBody(text, i + 1, out);
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) fail(i);
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) fail(i);
    i = skipWs(text, i + 1);
    if (key === 'rows' && text.charCodeAt(i) === 0x5b) {
      const rows: unknown[] = [];
      i = skipWs(text, i + 1);
      if (text.charCodeAt(i) === 0x5d) i++;
      else
        for (;;) {
          if (i >= nextYield) {
            await yieldTurn();
            nextYield = i + YIELD_CHARS;
          }
          const end = valueEnd(text, i);
          if (end === i) fail(i);
          rows.push(JSON.parse(text.slice(i, end)));
          i = skipWs(text, end);
          const c = text.charCodeAt(i);
          if (c === 0x5d) {
            i++;
            break;
          }
          if (c !== 0x2c) fail(i);
          i = skipWs(text, i + 1);
        }
      Object.defineProperty(out, key, { value: rows, enumerable: true, writable: true, configurable: true });
    } else {
      const end = valueEnd(text, i);
      if (end === i) fail(i);
      // As JSON.parse: `__proto__` is an own key like any other, a repeated key the last one.
      Object.defineProperty(out, key, {
        value: JSON.parse(text.slice(i, end)) as unknown,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      i = end;
    }
    i = skipWs(text, i);
    const c = text.charCodeAt(i);
    if (c === 0x7d) return endOfBody(text, i + 1, out);
    if (c !== 0x2c) fail(i);
    i = skipWs(text, i + 1);
  }
}

function endOfBody(text: string, i: number, out: Record<string, unknown>): Record<string, unknown> {
  if (skipWs(text, i) !== text.length) fail(i);
  return out;
}
