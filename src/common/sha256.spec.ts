import { createHash } from 'node:crypto';
import { sameSecret, sha256Bytes, sha256Hex } from './sha256';

describe('sha256', () => {
  it.each(['', 'abc', 'é🙂\u0000', 'x'.repeat(10_000), '\uD800 lone surrogate'])(
    "gives createHash's digest of the UTF-8 text (%#)",
    (text) => {
      const expected = createHash('sha256').update(text, 'utf8').digest();
      expect(sha256Hex(text)).toBe(expected.toString('hex'));
      expect(sha256Bytes(text).equals(expected)).toBe(true);
    },
  );

  it('the known vector', () => {
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('compares secrets of any length', () => {
    expect(sameSecret('Bearer abc', 'Bearer abc')).toBe(true);
    expect(sameSecret('Bearer ab', 'Bearer abc')).toBe(false);
    expect(sameSecret('', 'Bearer abc')).toBe(false);
    expect(sameSecret('Bearer abd', 'Bearer abc')).toBe(false);
  });
});
