import fc from 'fast-check';
import type { CreateInvoiceDto } from './dto/create-invoice.dto';
import { canonicalJson } from '../common/idempotency';
import { sha256Hex } from '../common/sha256';
import { invoiceRequestFacts, invoiceRequestIdentity } from './invoice-request';

/** The v2 fingerprint as it was first made, verbatim: stored rows hold hashes of its output. */
function requestFingerprintV2(dto: CreateInvoiceDto): string {
  const facts = invoiceRequestFacts(dto);
  const secret =
    dto.paymentTokenFrom !== undefined
      ? { paymentTokenFrom: dto.paymentTokenFrom }
      : { paymentToken: dto.paymentToken ?? null };
  return sha256Hex(canonicalJson({ v: 2, facts, secret }));
}

/** Keys that JSON.parse reorders (integer-like), that sort oddly, or that look reserved. */
const key = fc.oneof(
  fc.constantFrom('10', '2', '0', 'a', 'B', 'é', 'e\u0301', '😀', '', ' ', 'amount', 'z'),
  fc.string({ maxLength: 6 }),
);
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('"quoted"\\\n\u2028', '\ud800', '100.10', '</script>'),
);
const dto: fc.Arbitrary<CreateInvoiceDto> = fc
  .record(
    {
      shopOrderId: fc.string({ minLength: 1, maxLength: 8 }),
      amount: fc.constantFrom('100', '100.0', '100.10', '0.01', '1e2', 'x'),
      currency: fc.constantFrom(643, 840, 978),
      payway: fc.constantFrom('card_rub', 'qiwi_rub'),
      description: text,
      twoStep: fc.boolean(),
      extras: fc.dictionary(key, text, { maxKeys: 4 }),
      metadata: fc.dictionary(key, fc.oneof(text, fc.integer(), fc.double(), fc.boolean()), {
        maxKeys: 4,
      }),
      clientIp: fc.constantFrom('127.0.0.1', '::1'),
      clientInfo: fc.record({
        browserColorDepth: fc.oneof(fc.integer(), fc.double({ noNaN: true })),
        browserLanguage: text,
        browserJavaEnabled: fc.boolean(),
      }),
      savePaymentToken: fc.boolean(),
      successUrl: fc.webUrl(),
      paymentToken: fc.string({ maxLength: 10 }),
      paymentTokenFrom: fc.string({ maxLength: 10 }),
      holdPolicy: fc.constantFrom('charge', 'release'),
    },
    { requiredKeys: ['shopOrderId', 'amount', 'currency', 'payway'] },
  )
  .map((d) => d as unknown as CreateInvoiceDto);

describe('invoiceRequestIdentity: the facts and the fingerprint in one canonical pass', () => {
  it('gives requestFingerprintV2 and invoiceRequestFacts exactly, on generated requests', () => {
    fc.assert(
      fc.property(dto, (d) => {
        const { factsJson, fingerprint } = invoiceRequestIdentity(d);
        expect(fingerprint).toBe(requestFingerprintV2(d));
        expect(JSON.parse(factsJson)).toEqual(invoiceRequestFacts(d));
        // The stored text is canonical: parsed and written again it does not change.
        expect(canonicalJson(JSON.parse(factsJson))).toBe(factsJson);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the fingerprint stored rows were written with (a pinned request)', () => {
    const d = {
      shopOrderId: 'order-1',
      amount: '100.50',
      currency: 643,
      payway: 'card_rub',
      description: 'Tea',
      metadata: { '10': 'x', '2': 'y' },
      paymentToken: 'tok',
    } as unknown as CreateInvoiceDto;
    expect(invoiceRequestIdentity(d).fingerprint).toBe(PINNED);
    expect(requestFingerprintV2(d)).toBe(PINNED);
  });
});

/** The fingerprint the code before the one-pass identity gave the pinned request. */
const PINNED = '8d9225c004c28dd75d3f4fcc47599b9bb08a8134072f89c95ac86b7c36752c3b';
