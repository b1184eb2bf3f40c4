import fc from 'fast-check';
import { Amount } from '../common/money';
import type { InputPayway, PaywayGroup } from '../gateway/gateway.types';
import {
  attemptOrderId,
  checkNamedPayways,
  defaultPayways,
  expiryProblem,
  mayMove,
  payRefusal,
  publicIdOf,
  rowIdOf,
  shownStatus,
  statusAfterInvoice,
} from './payment-link.rules';
import { PAYMENT_LINK_STATUSES, type PaymentLinkStatus } from './payment-link.state';

const NOW = Date.parse('2026-12-01T10:00:00Z');
const at = (offsetS: number): Date => new Date(NOW + offsetS * 1000);

describe('payment link ids', () => {
  it('a row id and its public id go both ways; any other spelling is no link', () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        const id = publicIdOf(uuid);
        expect(id).toMatch(/^plink_[0-9a-f]{32}$/);
        expect(rowIdOf(id)).toBe(uuid.toLowerCase());
      }),
    );
    for (const bad of ['plink_', 'PLINK_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11', 'plink_0B6F6A523C1E4A8F9A7E2D5C1F0E9B11', '0b6f6a52-3c1e-4a8f-9a7e-2d5c1f0e9b11', 'plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11 ', 'plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b1'])
      expect(rowIdOf(bad)).toBeNull();
    expect(attemptOrderId('plink_ab', 3)).toBe('plink_ab-3');
  });
});

describe('what a payer may do with a link', () => {
  it.each<[PaymentLinkStatus, number | null, PaymentLinkStatus, string | null]>([
    ['active', null, 'active', null],
    ['active', 60, 'active', null],
    ['active', 0, 'expired', 'expired'],
    ['active', -1, 'expired', 'expired'],
    ['paid', -1, 'paid', 'paid'],
    ['deactivated', 60, 'deactivated', 'deactivated'],
    ['expired', null, 'expired', 'expired'],
  ])('%s with expiry %s s from now: shown %s, refused %s', (status, inS, shown, refused) => {
    const link = { status, expiresAt: inS === null ? null : at(inS) };
    expect(shownStatus(link, NOW)).toBe(shown);
    expect(payRefusal(link, NOW)).toBe(refused);
  });

  it('an expiry must be in the future', () => {
    expect(expiryProblem(at(-1), NOW)).toEqual({ field: 'expiresAt', message: 'must be in the future' });
    expect(expiryProblem(at(0), NOW)).not.toBeNull();
    expect(expiryProblem(at(1), NOW)).toBeNull();
    expect(expiryProblem(null, NOW)).toBeNull();
  });
});

describe('a link follows its invoices', () => {
  it.each<[PaymentLinkStatus, boolean, string, PaymentLinkStatus | null]>([
    ['active', false, 'succeeded', 'paid'],
    ['active', false, 'rejected', null],
    ['active', false, 'awaiting_payer', null],
    // The payment happened: an expiry or deactivation during it does not undo it.
    ['expired', false, 'succeeded', 'paid'],
    ['deactivated', false, 'succeeded', 'paid'],
    ['paid', false, 'succeeded', null],
    ['active', true, 'succeeded', null],
  ])('%s (reusable %s), invoice %s → %s', (status, reusable, invoice, to) => {
    expect(statusAfterInvoice({ status, reusable }, invoice)).toBe(to);
  });

  it('only an active link moves (a late payment aside); a final status never goes back', () => {
    for (const from of PAYMENT_LINK_STATUSES)
      for (const to of PAYMENT_LINK_STATUSES) {
        const allowed = mayMove(from, to);
        if (to === 'active' || from === to) expect(allowed).toBe(false);
        else if (from === 'active') expect(allowed).toBe(true);
        else expect(allowed).toBe(to === 'paid');
      }
  });
});

describe('the payways a link offers', () => {
  const payway = (alias: string, over: Partial<InputPayway> = {}): InputPayway =>
    ({ alias, currency: 643, min_amount: '10', max_amount: '1000', is_active: 'true', add_ons_config: {}, ...over }) as InputPayway;
  const groups = [
    { payways: [payway('a'), payway('usd', { currency: 840 }), payway('off', { is_active: 'false' })] },
    { payways: [payway('small', { max_amount: '99.99' }), payway('a'), payway('b', { min_amount: '100.00' })] },
  ] as unknown as PaywayGroup<InputPayway>[];

  it('by default: active, of the currency, taking the amount (bounds exact), each once, in order', () => {
    expect(defaultPayways(groups, Amount.parse('100.00'), 643)).toEqual(['a', 'b']);
    expect(defaultPayways(groups, Amount.parse('99.99'), 643)).toEqual(['a', 'small']);
    expect(defaultPayways(groups, Amount.parse('5000'), 643)).toEqual([]);
  });

  it('named: each checked as an invoice create checks its payway, errors named by position', () => {
    const found = [payway('a'), undefined, payway('off', { is_active: 'false' }), payway('a')];
    const errors = checkNamedPayways(['a', 'nope', 'off', 'a'], found, Amount.parse('5000'), 643, [undefined, ['a'], undefined, undefined]);
    expect(errors.map((e) => e.field)).toEqual(['amount', 'payways[1]', 'payways[2]', 'payways[3]']);
    expect(errors[0].message).toBe('must be at most 1000');
    expect(errors[1].message).toContain('did you mean a?');
    expect(errors[3].message).toBe('names a again');
  });
});
