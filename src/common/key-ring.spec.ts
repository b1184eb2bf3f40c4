import fc from 'fast-check';
import { KeyRing, parseKeyRing, SealError } from './key-ring';

const key = (fill: number): string => Buffer.alloc(32, fill).toString('base64');
const ctx = { table: 'payouts', column: 'account_sealed', rowId: 'row-1' };

describe('key ring', () => {
  const ring = new KeyRing(parseKeyRing(`new:${key(1)},old:${key(2)}`));
  const oldOnly = new KeyRing(parseKeyRing(`old:${key(2)}`));

  it('round-trips any text under the first key, naming it', () => {
    fc.assert(fc.property(fc.string(), (text) => ring.unseal(ring.seal(text, ctx), ctx) === text));
    expect(ring.seal('x', ctx)).toMatch(/^k1\.new\./);
  });

  it('opens values sealed under any key of the ring; they are not current', () => {
    const sealed = oldOnly.seal('4111111111111111', ctx);
    expect(ring.unseal(sealed, ctx)).toBe('4111111111111111');
    expect(ring.isCurrent(sealed)).toBe(false);
    expect(ring.isCurrent(ring.seal('x', ctx))).toBe(true);
  });

  it('refuses a value whose key was dropped, naming the key id only', () => {
    const sealed = ring.seal('secret', ctx);
    expect(() => oldOnly.unseal(sealed, ctx)).toThrow(/key "new"/);
  });

  it.each([
    ['another row', { ...ctx, rowId: 'row-2' }],
    ['another column', { ...ctx, column: 'payment_token' }],
    ['another table', { ...ctx, table: 'invoices' }],
  ])('refuses a value moved to %s', (_name, other) => {
    const sealed = ring.seal('secret', ctx);
    expect(() => ring.unseal(sealed, other)).toThrow(SealError);
  });

  it('refuses a changed key id, nonce, tag or body', () => {
    const parts = ring.seal('secret', ctx).split('.');
    const swapped = [...parts];
    swapped[1] = 'old';
    expect(() => ring.unseal(swapped.join('.'), ctx)).toThrow(SealError);
    for (const i of [2, 3, 4]) {
      const bytes = Buffer.from(parts[i], 'base64url');
      bytes[0] ^= 1;
      const t = [...parts];
      t[i] = bytes.toString('base64url');
      expect(() => ring.unseal(t.join('.'), ctx)).toThrow(SealError);
    }
    expect(() => ring.unseal('tok_plain', ctx)).toThrow(SealError);
  });

  it('blind index: stable per key and purpose, not the value, one per key for look-ups', () => {
    expect(ring.blindIndex('tok_1', 'payment-token')).toBe(
      ring.blindIndex('tok_1', 'payment-token'),
    );
    expect(ring.blindIndex('tok_1', 'payment-token')).not.toBe(
      ring.blindIndex('tok_2', 'payment-token'),
    );
    expect(ring.blindIndex('tok_1', 'payment-token')).not.toBe(ring.blindIndex('tok_1', 'other'));
    expect(ring.blindIndexes('tok_1', 'payment-token')).toEqual([
      ring.blindIndex('tok_1', 'payment-token'),
      oldOnly.blindIndex('tok_1', 'payment-token'),
    ]);
  });
});
