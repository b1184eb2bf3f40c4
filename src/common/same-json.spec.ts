import fc from 'fast-check';
import { sameJson } from './same-json';

class Money {
  constructor(readonly amount: string) {}
}

const byText = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

// A small domain, so that two values drawn apart are often the same JSON text.
const leaf = fc.constantFrom<unknown>(
  null,
  undefined,
  0,
  -0,
  1,
  '1',
  '',
  'a',
  true,
  false,
  NaN,
  Infinity,
  () => 1,
  Symbol('s'),
  new Date(0),
  new Date(NaN),
  new Money('1'),
  { toJSON: () => 1 },
  Object.create(null) as unknown,
);
const key = fc.constantFrom('a', 'b', 'c', '1', '__proto__x');
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
}));

/** The same value rebuilt: its keys in the same order, each part a new object. */
function copy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copy);
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]));
  }
  return v;
}

describe('sameJson', () => {
  it('answers as the comparison of the two JSON texts, on generated pairs', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameJson(a, b)).toBe(byText(a, b));
        expect(sameJson(a, copy(a))).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it.each<[string, unknown, unknown, boolean]>([
    ['keys in another order', { a: 1, b: 2 }, { b: 2, a: 1 }, false],
    ['a key whose value JSON leaves out', { a: 1, b: undefined }, { a: 1 }, true],
    ['a function property', { a: 1, f: () => 2 }, { a: 1 }, true],
    ['an undefined element is null', [undefined, 1], [null, 1], true],
    ['an element missing', [1], [1, null], false],
    ['a number and its text', { a: 1 }, { a: '1' }, false],
    ['NaN and null', { a: NaN }, { a: null }, true],
    ['a date and its text', { at: new Date(0) }, { at: '1970-01-01T00:00:00.000Z' }, true],
    ['an array and an object', [], {}, false],
    ['a class instance and its fields', new Money('1'), { amount: '1' }, true],
    ['nested difference', { a: { b: [1, { c: 'x' }] } }, { a: { b: [1, { c: 'y' }] } }, false],
  ])('%s', (_name, a, b, same) => {
    expect(byText(a, b)).toBe(same);
    expect(sameJson(a, b)).toBe(same);
  });

  it('throws on a cycle, as JSON.stringify does', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    const b: Record<string, unknown> = {};
    b.self = b;
    expect(() => JSON.stringify(a)).toThrow();
    expect(() => sameJson(a, b)).toThrow();
  });
});
