import { boundsCheckFor, checkConvertedBounds } from './currency-conversion';

const RUB_PAYWAY = { currency: 643, min_amount: '10.0', max_amount: '500000.0' };

describe('boundsCheckFor', () => {
  it.each([
    [643, 643, 'local'],
    [840, 643, 'gateway'],
    [643, 840, 'gateway'],
    [643, '643', 'local'], // a currency written as text is the same currency
    [840, undefined, 'local'], // no currency listed: nothing to convert to
    [840, null, 'local'],
    [643, 'RUB', 'gateway'], // not a code: never taken as the order's currency
  ] as const)('order in %s on a payway in %s: %s', (currency, paywayCurrency, expected) => {
    expect(boundsCheckFor(currency, paywayCurrency)).toBe(expected);
  });
});

describe('checkConvertedBounds', () => {
  it.each([
    ['within', { amount: '27051.71', currency: 643 }, []],
    ['within, the currency written as text', { amount: '100.00', currency: '643' }, []],
    [
      'a currency that is not a code',
      { amount: '100.00', currency: '643.5' },
      [{ field: 'currency', message: "cannot be priced in the payway's currency RUB (643)" }],
    ],
    ['exactly the minimum', { amount: '10.00', currency: 643 }, []],
    ['exactly the maximum, written as the gateway does', { amount: '500000.0', currency: 643 }, []],
    [
      'a cent under the minimum',
      { amount: '9.99', currency: 643 },
      [{ field: 'amount', message: 'must be at least 10.0 in RUB (643) (it converts to 9.99)' }],
    ],
    [
      'a cent over the maximum',
      { amount: '500000.01', currency: 643 },
      [
        {
          field: 'amount',
          message: 'must be at most 500000.0 in RUB (643) (it converts to 500000.01)',
        },
      ],
    ],
    [
      'priced in another currency than the payway’s',
      { amount: '100.00', currency: 840 },
      [{ field: 'currency', message: "cannot be priced in the payway's currency RUB (643)" }],
    ],
    [
      'no price',
      { amount: undefined, currency: 643 },
      [{ field: 'currency', message: "cannot be priced in the payway's currency RUB (643)" }],
    ],
    [
      'a price that is not a decimal',
      { amount: 'abc', currency: 643 },
      [{ field: 'currency', message: "cannot be priced in the payway's currency RUB (643)" }],
    ],
  ])('%s', (_name, priced, expected) => {
    expect(checkConvertedBounds(priced, RUB_PAYWAY)).toEqual(expected);
  });

  it('compares exactly: no float rounding at the edge', () => {
    expect(
      checkConvertedBounds(
        { amount: '10.000000000000000001', currency: 643 },
        { currency: 643, min_amount: '10.000000000000000002' },
      ),
    ).toHaveLength(1);
  });
});
