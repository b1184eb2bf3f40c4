import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { buildSignString, sign } from './signature';
import { PAYMENT } from '../../test/support/payways';

describe('request signature', () => {
  it('joins the signed fields sorted by key, as transmitted, and hashes with the secret', () => {
    const body = {
      shop_order_id: 'order-1',
      payway: PAYMENT.card,
      amount: '100.10',
      currency: 643,
      shop_id: 1001,
      issue_payment_token: false,
      description: 'not signed',
    };
    const keys = [
      'shop_order_id',
      'shop_id',
      'payway',
      'issue_payment_token',
      'currency',
      'amount',
    ];
    expect(buildSignString(body, keys)).toBe(`100.10:643:false:${PAYMENT.card}:1001:order-1`);
    expect(sign(body, keys, 'k3y')).toBe(
      createHash('sha256').update(`100.10:643:false:${PAYMENT.card}:1001:order-1k3y`).digest('hex'),
    );
  });

  it('refuses to sign a body that lacks a signed field', () => {
    expect(() => buildSignString({ shop_id: 1 }, ['shop_id', 'now'])).toThrow(/"now"/);
  });

  it('key order in the input never changes the signature', () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.boolean());
    const entries = fc.uniqueArray(fc.tuple(fc.string({ minLength: 1 }), value), {
      minLength: 1,
      selector: ([key]) => key,
    });
    fc.assert(
      fc.property(entries, fc.func(fc.integer()), (list, rank) => {
        const shuffled = [...list].sort(([a], [b]) => rank(a) - rank(b));
        const keys = list.map(([key]) => key);
        const reordered = shuffled.map(([key]) => key);
        expect(sign(Object.fromEntries(shuffled), reordered, 's')).toBe(
          sign(Object.fromEntries(list), keys, 's'),
        );
      }),
    );
  });
});
