/**
 * Whether two values have the same JSON text: `JSON.stringify(a) === JSON.stringify(b)`, the
 * rule an event's view is compared by (the view an event was written with, against the view of
 * the row the statement left), without making either text. Plain objects and arrays are walked
 * in JSON.stringify's own order (own enumerable keys in order, a key whose value JSON leaves out
 * skipped, such an element of an array taken as null); anything else (a primitive, a Date, an
 * object with toJSON, an instance of a class) is compared by its text, so the answer is
 * JSON.stringify's on every value (src/common/same-json.spec.ts holds the two equal on
 * generated values). A cycle throws, as JSON.stringify does.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!walkable(a) || !walkable(b)) return JSON.stringify(a) === JSON.stringify(b);
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(inArray(x[i]), inArray(y[i]))) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < kx.length && leftOut(x[kx[i]])) i++;
    while (j < ky.length && leftOut(y[ky[j]])) j++;
    if (i === kx.length || j === ky.length) return i === kx.length && j === ky.length;
    if (kx[i] !== ky[j] || !sameJson(x[kx[i]], y[ky[j]])) return false;
    i++;
    j++;
  }
}

/** An array or a plain object without toJSON: its JSON text is made from its parts. */
function walkable(v: unknown): v is object {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  return typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** A property JSON.stringify writes nothing for. */
function leftOut(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** An array element as JSON.stringify writes it: one it would leave out is null. */
function inArray(v: unknown): unknown {
  return leftOut(v) ? null : v;
}
