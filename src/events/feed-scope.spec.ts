import type { Actor, Scope } from '../common/actor';
import { SCOPES } from '../common/actor';
import { feedObjectTypes, objectTypeOfEventType } from './feed-scope';

const shop = (...scopes: Scope[]): Actor => ({ keyId: 'k', role: 'shop', scopes });

describe('feedObjectTypes', () => {
  it.each<[string, Actor | undefined, string[]]>([
    [
      'payments only: invoices, payment tokens, payment links and disputes',
      shop('payments'),
      ['invoice', 'payment_token', 'dispute', 'payment_link'],
    ],
    [
      'refunds only: no invoice events (their payUrl carries the payer token)',
      shop('refunds'),
      ['refund'],
    ],
    ['payouts only: payouts and their batches', shop('payouts'), ['payout', 'payout_batch']],
    ['payments + refunds', shop('payments', 'refunds'), ['invoice', 'refund', 'payment_token', 'dispute', 'payment_link']],
    [
      'read only: everything',
      shop('read'),
      ['invoice', 'refund', 'payout', 'payout_batch', 'payment_token', 'reconciliation', 'dispute', 'payment_link'],
    ],
    [
      'read + payments: what payments covers',
      shop('payments', 'read'),
      ['invoice', 'payment_token', 'dispute', 'payment_link'],
    ],
    ['read + payouts: what payouts covers', shop('read', 'payouts'), ['payout', 'payout_batch']],
    [
      'every shop scope: everything, reconciliation included (what the webhooks deliver)',
      shop(...SCOPES),
      ['invoice', 'refund', 'payout', 'payout_batch', 'payment_token', 'reconciliation', 'dispute', 'payment_link'],
    ],
    [
      'payments + refunds + payouts without read: their types',
      shop('payments', 'refunds', 'payouts'),
      ['invoice', 'refund', 'payout', 'payout_batch', 'payment_token', 'dispute', 'payment_link'],
    ],
    ['no scope at all: nothing', shop(), []],
    [
      'admin',
      { keyId: 'a', role: 'admin', scopes: [] },
      ['invoice', 'refund', 'payout', 'payout_batch', 'payment_token', 'reconciliation', 'dispute', 'payment_link'],
    ],
    [
      'the service itself (no actor)',
      undefined,
      ['invoice', 'refund', 'payout', 'payout_batch', 'payment_token', 'reconciliation', 'dispute', 'payment_link'],
    ],
  ])('%s', (_name, actor, types) => expect([...feedObjectTypes(actor)]).toEqual(types));
});

describe('objectTypeOfEventType', () => {
  it('takes the part before the first dot', () => {
    expect(objectTypeOfEventType('invoice.refund_updated')).toBe('invoice');
    expect(objectTypeOfEventType('payout.needs_attention')).toBe('payout');
    expect(objectTypeOfEventType('odd')).toBe('odd');
  });
});
