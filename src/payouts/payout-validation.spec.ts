import type { OutputPayway } from '../gateway/gateway.types';
import { accountProblems, amountProblems } from './payout-validation';
import { PAYOUT } from '../../test/support/payways';

const CARD: OutputPayway = {
  alias: PAYOUT.card,
  currency: 643,
  min_amount: '100',
  max_amount: '100000',
  fee_config: { percent: '1', fix: '30' },
  account_info_config: { account: { regex: '^\\d{16,19}$', title: 'Card number' } },
  paysystem_data: {},
};
const BANK: OutputPayway = {
  ...CARD,
  alias: 'bank_transfer_rub[mock_server,success]',
  account_info_config: {
    account: { regex: '^\\d{20}$', title: 'Account' },
    bik: { regex: '^\\d{9}$', title: 'BIK' },
  },
};

describe('payout validation', () => {
  it.each([
    ['100', []],
    ['100000', []],
    ['100000.00', []],
    ['99.99', ['amount']],
    ['100000.01', ['amount']],
    ['0', ['amount']],
    ['1.123456789', ['amount']],
  ])('amount %s', (amount, fields) => {
    expect(amountProblems(amount, CARD).map((e) => e.field)).toEqual(fields);
  });

  it('a ps_amount has at most the payway currency minor unit; a shop_amount is left to its shopCurrency', () => {
    expect(amountProblems('100.001', CARD)).toEqual([{ field: 'amount', message: expect.stringContaining('643') }]);
    expect(amountProblems('100.001', CARD, 'ps_amount').map((e) => e.field)).toEqual(['amount']);
    expect(amountProblems('100.001', CARD, 'shop_amount')).toEqual([]);
    expect(amountProblems('100', { ...CARD, currency: 392 })).toEqual([]);
    expect(amountProblems('100.5', { ...CARD, currency: 392 }).map((e) => e.field)).toEqual(['amount']);
  });

  it('runs a configured pattern only on short text, and survives one that does not compile', () => {
    const slow: OutputPayway = { ...CARD, account_info_config: { account: { regex: '^(a+)+$', title: 'A' } } };
    const started = Date.now();
    expect(accountProblems(`${'a'.repeat(300)}!`, undefined, slow)).toEqual([{ field: 'account', message: 'must be at most 255 characters' }]);
    // Behaviour, not speed: run on the long text the pattern would backtrack for ages; refused by
    // its length first it takes well under a millisecond (the bound is far more than five times).
    expect(Date.now() - started).toBeLessThan(1000);
    const broken: OutputPayway = { ...CARD, account_info_config: { account: { regex: '(', title: 'A' } } };
    expect(accountProblems('4111111111111111', undefined, broken)).toEqual([]);
  });

  it('checks account against the detail named account', () => {
    expect(accountProblems('4111111111111111', undefined, CARD)).toEqual([]);
    expect(accountProblems('4111', undefined, CARD).map((e) => e.field)).toEqual(['account']);
  });

  it('names missing and wrong details and refuses unknown ones', () => {
    expect(accountProblems('12345678901234567890', { bik: '044525225' }, BANK)).toEqual([]);
    expect(accountProblems('12345678901234567890', {}, BANK)).toEqual([
      { field: 'accountDetails.bik', message: 'is required (BIK)' },
    ]);
    expect(
      accountProblems('12345678901234567890', { bik: 'x', extra: '1' }, BANK).map((e) => e.field),
    ).toEqual(['accountDetails.bik', 'accountDetails.extra']);
  });
});
