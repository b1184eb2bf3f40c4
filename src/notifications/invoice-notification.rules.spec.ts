import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { notificationSignString } from '../gateway';
import { Amount } from '../common/money';
import { isFinal, InvoiceStatus } from '../invoices/invoice.state';
import { checkInvoiceNotification, foldNotificationStatuses } from './invoice-notification.rules';
import { isAllowedSource, notificationContentKey } from './notification-key';

/** Notification words and where the gateway's own lifecycle takes an invoice with them. */
const WORDS: Record<string, InvoiceStatus> = {
  waiting: 'awaiting_payer',
  hold: 'held',
  success: 'succeeded',
  rejected: 'rejected',
};
const RANK: Record<string, number> = {
  pending: 0,
  awaiting_payer: 1,
  held: 2,
  succeeded: 3,
  rejected: 3,
};

/**
 * The model, written independently of the state machine: the first final word delivered wins for
 * ever; before any final, the most advanced word wins.
 */
function model(words: readonly string[]): InvoiceStatus {
  const firstFinal = words.map((w) => WORDS[w]).find((s) => s === 'succeeded' || s === 'rejected');
  if (firstFinal !== undefined) return firstFinal;
  return words
    .map((w) => WORDS[w])
    .reduce<InvoiceStatus>((best, s) => (RANK[s] > RANK[best] ? s : best), 'pending');
}

/** A real lifecycle: waiting, then optionally hold, then success or rejected (or still open). */
const lifecycle = fc
  .tuple(fc.boolean(), fc.boolean(), fc.constantFrom('success', 'rejected', null))
  .map(([waiting, hold, end]) => [
    ...(waiting ? ['waiting'] : []),
    ...(hold ? ['hold'] : []),
    ...(end ? [end] : []),
  ]);

/** Any order and any duplication of the lifecycle's notifications. */
const deliveries = lifecycle.chain((set) =>
  set.length === 0
    ? fc.constant({ set, delivered: [] as string[] })
    : fc
        .array(fc.constantFrom(...set), { minLength: 0, maxLength: 20 })
        .chain((extra) =>
          fc.shuffledSubarray([...set, ...extra], { minLength: set.length + extra.length }),
        )
        .map((delivered) => ({ set, delivered })),
);

describe('payment notifications folded over the invoice state machine', () => {
  it('any order and duplication of one lifecycle ends where the model says', () => {
    fc.assert(
      fc.property(deliveries, ({ delivered }) => {
        expect(foldNotificationStatuses('pending', delivered)).toBe(model(delivered));
      }),
      { numRuns: 2000 },
    );
  });

  it('a final lifecycle always ends in its final status, whatever the order', () => {
    fc.assert(
      fc.property(deliveries, ({ set, delivered }) => {
        const end = set[set.length - 1];
        if (end === 'success' || end === 'rejected')
          expect(foldNotificationStatuses('pending', delivered)).toBe(WORDS[end]);
      }),
    );
  });

  it('a final state never changes, whatever arrives', () => {
    const anyWord = fc.constantFrom(
      'waiting',
      'hold',
      'success',
      'rejected',
      'created',
      '1',
      '2',
      '4',
      '6',
      '8',
      'bogus',
    );
    fc.assert(
      fc.property(
        fc.constantFrom<InvoiceStatus>('succeeded', 'rejected', 'unheld'),
        fc.array(anyWord, { maxLength: 30 }),
        (final, words) => {
          expect(isFinal(final)).toBe(true);
          expect(foldNotificationStatuses(final, words)).toBe(final);
        },
      ),
    );
  });

  it('once the fold reaches a final state, every prefix after it keeps it', () => {
    fc.assert(
      fc.property(deliveries, ({ delivered }) => {
        let seenFinal: InvoiceStatus | null = null;
        for (let i = 1; i <= delivered.length; i += 1) {
          const s = foldNotificationStatuses('pending', delivered.slice(0, i));
          if (seenFinal !== null) expect(s).toBe(seenFinal);
          else if (isFinal(s)) seenFinal = s;
        }
      }),
    );
  });
});

describe('checkInvoiceNotification', () => {
  const invoice = { shopId: 1001, amount: Amount.fromText('100.10'), currency: 643 };
  const base = {
    shop_id: '1001',
    shop_order_id: 'o1',
    shop_amount: '100.10',
    shop_currency: '643',
    status: 'success',
  };

  it.each([
    [{}, { ok: true, to: 'succeeded' }],
    [{ shop_amount: '100.1' }, { ok: true, to: 'succeeded' }],
    [
      { shop_amount: undefined, shop_currency: undefined },
      { ok: true, to: 'succeeded' },
    ],
    [{ status: 'hold' }, { ok: true, to: 'held' }],
    [{ shop_amount: '100.11' }, { ok: false, kind: 'mismatch' }],
    [{ shop_amount: '1e2' }, { ok: false, kind: 'mismatch' }],
    [{ shop_currency: '840' }, { ok: false, kind: 'mismatch' }],
    [{ shop_id: '1002' }, { ok: false, kind: 'mismatch' }],
    [{ status: 'exploded' }, { ok: false, kind: 'unknown_status' }],
  ])('%j → %j', (override, expected) => {
    const fields = Object.fromEntries(
      Object.entries({ ...base, ...override }).filter(([, v]) => v !== undefined),
    ) as Record<string, string>;
    expect(checkInvoiceNotification(invoice, fields)).toMatchObject(expected);
  });
});

describe('notification keys and sources', () => {
  it('the content key ignores field order and separates verification', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })),
        (fields) => {
          const reversed = Object.fromEntries(Object.entries(fields).reverse());
          expect(notificationContentKey('invoice', reversed)).toBe(notificationContentKey('invoice', fields));
          expect(notificationContentKey('invoice', fields, false)).not.toBe(notificationContentKey('invoice', fields));
        },
      ),
    );
  });

  // Empty values are outside the signature, so they were a free way to a new key.
  it('the content key covers exactly what the signature covers: empty and unsigned extras do not change it', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })),
        fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 4 }),
        (fields, extra) => {
          const withEmpty = { ...Object.fromEntries(extra.map((k) => [k, ''])), ...fields };
          const withSign = { ...fields, sign: 'f'.repeat(64) };
          expect(notificationContentKey('invoice', withEmpty)).toBe(notificationContentKey('invoice', fields));
          expect(notificationContentKey('invoice', withSign)).toBe(notificationContentKey('invoice', fields));
          const signed = createHash('sha256')
            .update(JSON.stringify(['v', notificationSignString(fields)]), 'utf8')
            .digest('hex');
          expect(notificationContentKey('invoice', fields)).toBe(
            createHash('sha256').update(`invoice:${signed}`, 'utf8').digest('hex'),
          );
        },
      ),
    );
  });

  it('a changed signed value changes the key; a body re-split at a ":" is the same signed text and key', () => {
    expect(notificationContentKey('invoice', { a: '1', b: '2' })).not.toBe(
      notificationContentKey('invoice', { a: '1', b: '3' }),
    );
    expect(notificationContentKey('invoice', { a: '1', b: '2' })).not.toBe(notificationContentKey('invoice', { a: '1' }));
    // The signature cannot tell these apart (same sign), so neither may the inbox.
    expect(notificationContentKey('invoice', { a: '1:2' })).toBe(notificationContentKey('invoice', { a: '1', b: '2' }));
  });

  // A copy received under a wrong `type` never takes the genuine notification's row.
  it('the kind takes part in the key: the same signed body as another type is another key', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })),
        fc.string({ maxLength: 32 }),
        (fields, other) => {
          fc.pre(other !== 'invoice');
          expect(notificationContentKey(other, fields)).not.toBe(
            notificationContentKey('invoice', fields),
          );
        },
      ),
    );
    expect(notificationContentKey('refund', { a: '1' })).not.toBe(
      notificationContentKey('invoice', { a: '1' }),
    );
  });

  it('accepts IPv4-mapped addresses of an allowed source and nothing else', () => {
    const allowed = ['35.198.100.222', '35.198.175.25', '127.0.0.1'];
    expect(isAllowedSource('::ffff:127.0.0.1', allowed)).toBe(true);
    expect(isAllowedSource('35.198.175.25', allowed)).toBe(true);
    expect(isAllowedSource('35.198.175.26', allowed)).toBe(false);
    expect(isAllowedSource('::1', allowed)).toBe(false);
    expect(isAllowedSource(undefined, allowed)).toBe(false);
  });
});
