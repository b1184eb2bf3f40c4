import { Amount } from '../common/money';
import type { InvoiceStatus } from './invoice.state';
import fc from 'fast-check';
import { refundableAmountOf, refundSumsOf, type RefundSums } from './invoice-refund-sums';

type WithoutDisputes = Omit<RefundSums, 'disputedAmount'>;

/** The sums of an invoice without disputes (their own cases below). */
const sums = (
  amount: string,
  status: InvoiceStatus,
  refunded: string,
  pending: string,
  currency = 643,
): WithoutDisputes => {
  const { disputedAmount, ...rest } = refundSumsOf({
    amount: Amount.parse(amount),
    currency,
    status,
    // As the database returns them: COALESCE(SUM(...), 0) is "0" with no fraction.
    refundedAmount: Amount.fromText(refunded),
    refundPendingAmount: Amount.fromText(pending),
    disputedAmount: Amount.fromText('0'),
  });
  expect(disputedAmount).toBe(currency === 392 ? '0' : '0.00');
  return rest;
};

describe('invoice refund sums', () => {
  it.each<[string, string, InvoiceStatus, string, string, WithoutDisputes]>([
    [
      'nothing refunded',
      '100.00',
      'succeeded',
      '0',
      '0',
      {
        refundedAmount: '0.00',
        refundPendingAmount: '0.00',
        refundableAmount: '100.00',
        refundStatus: 'none',
      },
    ],
    [
      '30 SUCCESS, 20 WAITING (10 FAILED counts nowhere)',
      '100.00',
      'succeeded',
      '30.00',
      '20.00',
      {
        refundedAmount: '30.00',
        refundPendingAmount: '20.00',
        refundableAmount: '50.00',
        refundStatus: 'partial',
      },
    ],
    [
      'only a WAITING refund: nothing refunded yet',
      '100.00',
      'succeeded',
      '0',
      '100.00',
      {
        refundedAmount: '0.00',
        refundPendingAmount: '100.00',
        refundableAmount: '0.00',
        refundStatus: 'none',
      },
    ],
    [
      'refunded in full',
      '100.00',
      'succeeded',
      '100.00',
      '0',
      {
        refundedAmount: '100.00',
        refundPendingAmount: '0.00',
        refundableAmount: '0.00',
        refundStatus: 'full',
      },
    ],
    [
      'the same value at another scale is still full',
      '100.10',
      'succeeded',
      '100.1',
      '0',
      {
        refundedAmount: '100.10',
        refundPendingAmount: '0.00',
        refundableAmount: '0.00',
        refundStatus: 'full',
      },
    ],
    [
      'JPY, no minor unit: whole numbers',
      '1000',
      'succeeded',
      '1',
      '0',
      {
        refundedAmount: '1',
        refundPendingAmount: '0',
        refundableAmount: '999',
        refundStatus: 'partial',
      },
    ],
    [
      'the amount sent as a whole number is written with the minor unit',
      '100',
      'succeeded',
      '0.50',
      '0',
      {
        refundedAmount: '0.50',
        refundPendingAmount: '0.00',
        refundableAmount: '99.50',
        refundStatus: 'partial',
      },
    ],
    [
      'eight decimals and eighteen integer digits stay exact',
      '123456789012345678.12345678',
      'succeeded',
      '0.00000001',
      '0.00000002',
      {
        refundedAmount: '0.00000001',
        refundPendingAmount: '0.00000002',
        refundableAmount: '123456789012345678.12345675',
        refundStatus: 'partial',
      },
    ],
    [
      'more counted than paid (an operator correction): refundable is zero, not negative',
      '100.00',
      'succeeded',
      '90.00',
      '20.00',
      {
        refundedAmount: '90.00',
        refundPendingAmount: '20.00',
        refundableAmount: '0.00',
        refundStatus: 'partial',
      },
    ],
  ])('%s', (_name, amount, status, refunded, pending, expected) => {
    expect(sums(amount, status, refunded, pending, _name.startsWith('JPY') ? 392 : 643)).toEqual(
      expected,
    );
  });

  it.each<InvoiceStatus>([
    'pending',
    'created',
    'awaiting_payer',
    'ps_create_failed',
    'ps_notice_failed',
    'rejected',
    'held',
    'unheld',
    'unknown',
  ])('a %s invoice has nothing refundable, with the amount scale', (status) => {
    expect(sums('100.00', status, '0', '0')).toEqual({
      refundedAmount: '0.00',
      refundPendingAmount: '0.00',
      refundableAmount: '0.00',
      refundStatus: 'none',
    });
  });

  it('disputes open, lost or accepted are not refundable, and never take it below zero', () => {
    const of = (refunded: string, pending: string, disputed: string): RefundSums =>
      refundSumsOf({
        amount: Amount.parse('100.00'),
        currency: 643,
        status: 'succeeded',
        refundedAmount: Amount.fromText(refunded),
        refundPendingAmount: Amount.fromText(pending),
        disputedAmount: Amount.fromText(disputed),
      });
    expect(of('20.00', '10.00', '30')).toEqual({
      refundedAmount: '20.00',
      refundPendingAmount: '10.00',
      disputedAmount: '30.00',
      refundableAmount: '40.00',
      refundStatus: 'partial',
    });
    expect(of('60.00', '0', '50.00').refundableAmount).toBe('0.00');
  });
});

describe('refundableAmountOf with nothing counted', () => {
  it('gives what the subtraction gives, value and digits, whatever the zeros are written as', () => {
    const decimal = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 4 }))
      .map(([units, scale]) => {
        const text = units.toString().padStart(scale + 1, '0');
        return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
      });
    const zero = fc.constantFrom('0', '0.0', '0.00', '0.000', '0.0000');
    const status = fc.constantFrom<InvoiceStatus>(
      'succeeded',
      'awaiting_payer',
      'rejected',
      'held',
    );
    fc.assert(
      fc.property(
        decimal,
        fc.array(fc.oneof(zero, decimal), { maxLength: 3 }),
        status,
        (a, c, st) => {
          const inv = { amount: Amount.fromText(a), status: st };
          const counted = c.map((x) => Amount.fromText(x));
          const left = inv.amount.minus(Amount.sum([...counted]));
          const expected = st === 'succeeded' && left.isPositive() ? left : Amount.zero();
          expect(refundableAmountOf(inv, counted).toString()).toBe(expected.toString());
        },
      ),
      { numRuns: 2000 },
    );
  });
});
