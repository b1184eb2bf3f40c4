import { createHmac } from 'node:crypto';
import { KeyRing, parseKeyRing } from '../common/key-ring';
import { Amount } from '../common/money';
import { deriveKey } from '../common/sealed';
import type { CreatePayoutDto } from './dto/payout-requests.dto';
import {
  canonicalPayoutFacts,
  canonicalPayoutRequest,
  fingerprintOfStored,
  legacyCanonicalPayoutRequest,
  PAYOUT_REQUEST_INDEX,
  PayoutFingerprints,
} from './payout-fingerprint';

const key = (fill: number): string => Buffer.alloc(32, fill).toString('base64');
const dto = (over: Partial<CreatePayoutDto> = {}): CreatePayoutDto =>
  ({
    shopPaymentId: 'po-1',
    amount: '100.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: 'card',
    account: '4111111111111111',
    accountDetails: { b: '2', a: '1' },
    ...over,
  }) as CreatePayoutDto;

describe('payout request fingerprints', () => {
  it('compares amounts by value: "100", "100.0" and "100.00" are one request, "100.01" another', () => {
    const texts = ['100', '100.0', '100.00'].map((amount) =>
      canonicalPayoutRequest(dto({ amount })),
    );
    expect(new Set(texts).size).toBe(1);
    expect(canonicalPayoutRequest(dto({ amount: '100.01' }))).not.toBe(texts[0]);
  });

  it('is computable from stored data: the row (numeric keeps the scale) and the sealed recipient', () => {
    expect(
      canonicalPayoutFacts({
        shopPaymentId: 'po-1',
        amount: Amount.fromText('100.0'),
        amountType: 'ps_amount',
        shopCurrency: 643,
        payway: 'card',
        account: '4111111111111111',
        accountDetails: { a: '1', b: '2' },
        description: null,
      }),
    ).toBe(canonicalPayoutRequest(dto()));
  });

  it('matches the new form under any ring key, and the older spelled form under ring and legacy keys', () => {
    const old = new KeyRing(parseKeyRing(`old:${key(1)}`));
    const ring = new KeyRing(parseKeyRing(`new:${key(2)},old:${key(1)}`));
    const f = new PayoutFingerprints(ring, 'gateway-secret');
    const made = f.of(dto());
    expect(made.keyId).toBe('new');
    expect(f.matches(made.fingerprint, dto({ amount: '100.0' }))).toBe(true);
    expect(f.matches(made.fingerprint, dto({ account: '5555555555554444' }))).toBe(false);
    const legacyRing = old.blindIndex(
      legacyCanonicalPayoutRequest(dto({ amount: '100.0' })),
      PAYOUT_REQUEST_INDEX,
    );
    expect(f.matches(legacyRing, dto({ amount: '100.0' }))).toBe(true);
    const legacySecret = createHmac('sha256', deriveKey('gateway-secret', 'payout-fingerprint'))
      .update(legacyCanonicalPayoutRequest(dto()))
      .digest('hex');
    expect(f.matches(legacySecret, dto())).toBe(true);
    expect(f.matches(legacySecret, dto({ amount: '100.01' }))).toBe(false);
    // What keys:rotate writes is what a repeat is compared with under the new key alone.
    const only = new PayoutFingerprints(new KeyRing(parseKeyRing(`new:${key(2)}`)), 'other');
    const recomputed = fingerprintOfStored(ring, {
      ...dto(),
      amount: Amount.fromText('100.00'),
    });
    expect(only.matches(recomputed, dto({ amount: '100' }))).toBe(true);
  });
});
