/**
 * Where two values differ, down to their shape, for a test that holds two makers of a value
 * equal (a parser and its reference, a planned transform and class-transformer): the kind (an
 * array or not), the own keys (symbols too), their values (Object.is at the leaves) and the
 * prototype at every level. Null: no difference. Jest's toEqual reads neither key order nor
 * prototypes, and takes an object whose prototype is an array for an iterable.
 *
 * - `keyOrder`: the keys compared in order (what a parser gives), or as a set.
 * - `prototypes`: `identity`, the same prototype object (a class's); or `made`, where a prototype
 *   other than null, Object's or Array's was made from the text (a `__proto__` key) and is
 *   compared as a value.
 */
export interface DifferenceOptions {
  keyOrder: boolean;
  prototypes: 'identity' | 'made';
}

const SHARED_PROTOTYPES: readonly unknown[] = [null, Object.prototype, Array.prototype];

export function valueDifference(
  a: unknown,
  b: unknown,
  opts: DifferenceOptions,
  at = '$',
): string | null {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null)
    return Object.is(a, b) ? null : `${at}: ${String(a)} is not ${String(b)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${at}: an array and a non-array`;
  const keysOf = (o: object): string[] => {
    const keys = Reflect.ownKeys(o).map(String);
    return opts.keyOrder ? keys : keys.sort();
  };
  const [keys, others] = [keysOf(a), keysOf(b)];
  if (keys.join('\u0000') !== others.join('\u0000'))
    return `${at}: keys ${keys.join(',')} are not ${others.join(',')}`;
  for (const k of Reflect.ownKeys(a)) {
    const differs = valueDifference(
      Object.getOwnPropertyDescriptor(a, k)?.value,
      Object.getOwnPropertyDescriptor(b, k)?.value,
      opts,
      `${at}.${String(k)}`,
    );
    if (differs !== null) return differs;
  }
  const [p, q] = [Object.getPrototypeOf(a) as unknown, Object.getPrototypeOf(b) as unknown];
  if (
    opts.prototypes === 'identity' ||
    SHARED_PROTOTYPES.includes(p) ||
    SHARED_PROTOTYPES.includes(q)
  )
    return p === q ? null : `${at}: another prototype`;
  return valueDifference(p, q, opts, `${at}.<prototype>`);
}
