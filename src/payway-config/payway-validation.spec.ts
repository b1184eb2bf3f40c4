import { Amount } from '../common/money';
import type { InputPayway } from '../gateway/gateway.types';
import {
  checkAmountBounds,
  checkExtras,
  checkPaymentAgainstPayway,
  isActive,
  unknownPaywayMessage,
} from './payway-validation';
import { PAYMENT } from '../../test/support/payways';

const payway = (overrides: Partial<InputPayway> = {}): InputPayway => ({
  id: 201,
  alias: PAYMENT.wallet,
  currency: 643,
  min_amount: '1',
  max_amount: '15000',
  fee_config: { percent: '1.5', fix: '5' },
  fee_part_config: { percent_part: '1', fix_part: '0.5' },
  is_active: 'true',
  add_ons_config: { phone: { regex: '^\\+?7\\d{10}$', label: { en: 'Phone' } } },
  ...overrides,
});

describe('isActive', () => {
  it.each([
    ['true', true],
    ['TRUE', true],
    [' true ', true],
    ['false', false],
    ['', false],
    ['1', false],
    [true, true],
    [false, false],
    [undefined, false],
  ])('%p → %p', (value, expected) => expect(isActive({ is_active: value })).toBe(expected));
});

describe('checkAmountBounds (exact)', () => {
  const p = { min_amount: '10', max_amount: '500000' };
  it.each([
    ['10', null],
    ['10.00', null],
    ['9.99999999', 'must be at least 10'],
    ['500000', null],
    ['500000.00000001', 'must be at most 500000'],
    ['0.1', 'must be at least 10'],
  ])('%s → %p', (amount, expected) =>
    expect(checkAmountBounds(Amount.parse(amount), p)).toBe(expected),
  );

  it('compares beyond float precision', () => {
    // 0.1 + 0.2 style traps: 9007199254740993 is not representable as a double.
    const q = { min_amount: '9007199254740993', max_amount: '9007199254740995' };
    expect(checkAmountBounds(Amount.parse('9007199254740992'), q)).toBe(
      'must be at least 9007199254740993',
    );
    expect(checkAmountBounds(Amount.parse('9007199254740994'), q)).toBeNull();
  });

  it('a missing bound does not limit', () => {
    expect(checkAmountBounds(Amount.parse('1000000'), {})).toBeNull();
  });
});

describe('checkExtras', () => {
  const addOns = payway().add_ons_config;
  it('accepts a matching value', () =>
    expect(checkExtras({ phone: '+79001234567' }, addOns, PAYMENT.wallet)).toEqual([]));
  it('names a value that does not match', () =>
    expect(checkExtras({ phone: '123' }, addOns, PAYMENT.wallet)).toEqual([
      { field: 'extras.phone', message: expect.stringContaining('pattern') },
    ]));
  it('names a missing required field', () =>
    expect(checkExtras(undefined, addOns, PAYMENT.wallet)).toEqual([
      { field: 'extras.phone', message: `is required by payway ${PAYMENT.wallet}` },
    ]));
  it('refuses an unknown field', () =>
    expect(checkExtras({ phone: '+79001234567', colour: 'red' }, addOns, PAYMENT.wallet)).toEqual([
      { field: 'extras.colour', message: `is not an add-on field of payway ${PAYMENT.wallet}` },
    ]));
  it('refuses a non-string value', () =>
    expect(checkExtras({ phone: 79001234567 }, addOns, PAYMENT.wallet)).toEqual([
      { field: 'extras.phone', message: 'must be a string' },
    ]));
  it('refuses an extra that would override a request field', () =>
    expect(checkExtras({ amount: '1' }, { amount: {} }, 'x')).toEqual([
      { field: 'extras.amount', message: 'is a field of the invoice request itself, not an extra' },
    ]));
  it('an add-on marked optional may be left out', () =>
    expect(checkExtras({}, { note: { regex: '^.*$', required: false } }, 'x')).toEqual([]));
  it('a pattern that does not compile is left to the gateway', () =>
    expect(checkExtras({ code: 'abc' }, { code: { regex: '([' } }, 'x')).toEqual([]));
  it('more names than the payway has fields + 16 is one error for extras, naming the limit', () => {
    const many = Object.fromEntries(Array.from({ length: 7000 }, (_, i) => [`x${i}`, 'v']));
    expect(checkExtras(many, addOns, PAYMENT.wallet)).toEqual([
      {
        field: 'extras',
        message: `has more than 17 properties (payway ${PAYMENT.wallet} has 1 add-on fields)`,
      },
    ]);
    // At the limit, each name is still answered on its own.
    const atLimit = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`x${i}`, 'v']));
    expect(checkExtras(atLimit, addOns, PAYMENT.wallet)).toHaveLength(18);
  });
});

describe('checkPaymentAgainstPayway', () => {
  const input = {
    payway: PAYMENT.wallet,
    amount: Amount.parse('100'),
    currency: 643,
    extras: { phone: '+79001234567' },
    checkExtras: true,
  };
  it('accepts a request that fits', () =>
    expect(checkPaymentAgainstPayway(input, payway())).toEqual([]));
  it('unknown payway', () =>
    expect(checkPaymentAgainstPayway(input, undefined)).toEqual([
      { field: 'payway', message: `${PAYMENT.wallet} is not a known payment way; GET /api/v1/payways?direction=payment lists them` },
    ]));
  it('inactive payway', () =>
    expect(checkPaymentAgainstPayway(input, payway({ is_active: 'false' }))).toEqual([
      { field: 'payway', message: `${PAYMENT.wallet} is not active` },
    ]));
  it('collects every other problem at once', () => {
    const errors = checkPaymentAgainstPayway(
      { ...input, amount: Amount.parse('15000.01'), extras: {} },
      payway(),
    );
    expect(errors.map((e) => e.field)).toEqual(['amount', 'extras.phone']);
  });
  it('another currency: bounds are left to the converted price, the rest is still checked', () => {
    const errors = checkPaymentAgainstPayway(
      { ...input, currency: 840, amount: Amount.parse('15000.01'), extras: {} },
      payway(),
    );
    expect(errors.map((e) => e.field)).toEqual(['extras.phone']);
  });
  it('a quote does not ask for extras', () =>
    expect(
      checkPaymentAgainstPayway({ ...input, extras: undefined, checkExtras: false }, payway()),
    ).toEqual([]));
});

describe('unknownPaywayMessage', () => {
  it('names the closest aliases when there are any, and always where all are listed', () => {
    expect(unknownPaywayMessage('card_core_payin_rub', 'payment', ['a[x,y]', 'a[x,z]'])).toBe(
      'card_core_payin_rub is not a known payment way (did you mean a[x,y], a[x,z]?); GET /api/v1/payways?direction=payment lists them',
    );
    expect(unknownPaywayMessage('nope', 'payout')).toBe(
      'nope is not a known payout way; GET /api/v1/payways?direction=payout lists them',
    );
  });
});
