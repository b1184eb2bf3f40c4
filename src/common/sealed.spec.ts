import fc from 'fast-check';
import { deriveKey, seal, SealError, unseal } from './sealed';

describe('sealed', () => {
  const key = deriveKey('gateway-secret', 'payout-account');

  it('round-trips any text', () => {
    fc.assert(fc.property(fc.string(), (text) => unseal(seal(text, key), key) === text));
  });

  it('uses a fresh nonce: the same text seals differently', () => {
    expect(seal('4111111111111111', key)).not.toBe(seal('4111111111111111', key));
  });

  it('does not contain the plaintext', () => {
    expect(seal('4111111111111111', key)).not.toContain('4111111111111111');
  });

  it('detects a changed ciphertext, tag or nonce', () => {
    const sealed = seal('{"account":"4111111111111111"}', key);
    const parts = sealed.split('.');
    for (const i of [1, 2, 3]) {
      const bytes = Buffer.from(parts[i], 'base64url');
      bytes[0] ^= 1;
      const tampered = [...parts];
      tampered[i] = bytes.toString('base64url');
      expect(() => unseal(tampered.join('.'), key)).toThrow(SealError);
    }
  });

  it('refuses another key and a malformed value', () => {
    const sealed = seal('secret', key);
    expect(() => unseal(sealed, deriveKey('other-secret', 'payout-account'))).toThrow(SealError);
    expect(() => unseal(sealed, deriveKey('gateway-secret', 'other-purpose'))).toThrow(SealError);
    expect(() => unseal('v1.abc', key)).toThrow(SealError);
    expect(() => unseal('plain text', key)).toThrow(SealError);
  });
});
