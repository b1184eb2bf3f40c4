import { valueDifference } from './value-difference';

/** The tests' shape comparison tells apart what each of its two uses must tell apart. */
describe('valueDifference', () => {
  const ordered = { keyOrder: true, prototypes: 'made' } as const;
  const asSet = { keyOrder: false, prototypes: 'identity' } as const;

  it('key order counts only when asked', () => {
    expect(valueDifference({ a: 1, b: 2 }, { b: 2, a: 1 }, ordered)).toMatch(
      /keys a,b are not b,a/,
    );
    expect(valueDifference({ a: 1, b: 2 }, { b: 2, a: 1 }, asSet)).toBeNull();
  });

  it('a key set to undefined is a key; leaves by Object.is', () => {
    expect(valueDifference({ a: undefined }, {}, asSet)).toMatch(/keys/);
    expect(valueDifference({ a: -0 }, { a: 0 }, asSet)).toMatch(/\$\.a/);
    expect(valueDifference({ a: [NaN] }, { a: [NaN] }, asSet)).toBeNull();
  });

  it('prototypes: a made one by value, a class by identity', () => {
    const made = () => JSON.parse('{"x":1}') as object;
    const a = Object.setPrototypeOf({ constructor: [] }, [made()]) as object;
    const b = Object.setPrototypeOf({ constructor: [] }, [made()]) as object;
    expect(valueDifference(a, b, ordered)).toBeNull();
    expect(valueDifference(a, b, asSet)).toMatch(/another prototype/);
    class A {}
    class B {}
    expect(valueDifference(new A(), new B(), asSet)).toMatch(/another prototype/);
    // As values, the two prototypes differ in their own `constructor`.
    expect(valueDifference(new A(), new B(), ordered)).toMatch(/<prototype>\.constructor/);
    expect(valueDifference(Object.create(null), {}, ordered)).toMatch(/another prototype/);
    expect(valueDifference([1], { 0: 1 }, asSet)).toMatch(/an array and a non-array/);
  });
});
