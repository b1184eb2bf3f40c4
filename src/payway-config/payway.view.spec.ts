import type { PaywayList } from './payway-config.service';
import { decimalOf, toPaywayListView } from './payway.view';

describe('payway view', () => {
  it.each([
    ['10.0', '10.0'], // the gateway's digits, not re-scaled
    ['500000.0', '500000.0'],
    ['0.10000000000000001', '0.10000000000000001'], // exact: a float would say 0.1
    ['12345678901234567.89', '12345678901234567.89'],
    ['1e-7', '0.0000001'],
    [' 2.5 ', '2.5'],
    ['-1.5', '-1.5'],
  ])('decimalOf(%j) is %j', (text, shown) => {
    expect(decimalOf(text)).toBe(shown);
  });

  it.each([
    [10],
    [0.1],
    [''],
    ['  '],
    ['abc'],
    ['1,5'],
    ['NaN'],
    ['Infinity'],
    [null],
    [undefined],
    [{}],
    [[1]],
  ])('decimalOf(%j) is null: never a float, never a guess', (v) => {
    expect(decimalOf(v)).toBeNull();
  });

  it('maps a payment list, dropping fields the gateway interface does not name and payways without an alias', () => {
    const list = {
      direction: 'payment',
      fetchedAt: '2026-01-15T09:50:00.000Z',
      groups: [
        {
          id: 1,
          name: 'Cards',
          rating: 1,
          payways: [
            {
              id: 7,
              alias: 'card',
              currency: 643,
              min_amount: '10.0',
              max_amount: 100000, // not through the lossless parse: not shown
              fee_config: { percent: '5.0', fix: '0.0' },
              fee_part_config: null,
              is_active: 'True',
              add_ons_config: {
                phone: { comment: { en: 'Digits' }, label: 'not a map', regex: 5 },
              },
              kind: 'card',
            },
            { id: 8, currency: 643 },
          ],
        },
      ],
    } as unknown as PaywayList;
    expect(toPaywayListView(list)).toEqual({
      direction: 'payment',
      fetchedAt: '2026-01-15T09:50:00.000Z',
      groups: [
        {
          id: 1,
          name: 'Cards',
          rating: 1,
          payways: [
            {
              id: 7,
              alias: 'card',
              currency: 643,
              minAmount: '10.00',
              maxAmount: null,
              feeConfig: { percent: '5.0', fix: '0.00' },
              feePartConfig: { percentPart: null, fixPart: null },
              isActive: true,
              addOnsConfig: {
                phone: {
                  label: null,
                  hint: { en: 'Digits' },
                  example: null,
                  regex: null,
                  prefix: null,
                },
              },
            },
          ],
        },
      ],
    });
  });

  it('maps a payout list: accountInfoConfig typed, paysystemData kept as an object', () => {
    const list = {
      direction: 'payout',
      fetchedAt: '2026-01-15T09:50:00.000Z',
      groups: [
        {
          id: 3,
          name: 'Wallets',
          rating: 2,
          payways: [
            {
              alias: 'to_wallet',
              currency: 643,
              min_amount: '10.0',
              max_amount: '15000.0',
              fee_config: { percent: '0.0', fix: '5.0' },
              account_info_config: { account: { regex: '^\\d+$', title: 'Phone', extra: 1 } },
              paysystem_data: 'not an object',
            },
          ],
        },
      ],
    } as unknown as PaywayList;
    expect(toPaywayListView(list).groups[0].payways[0]).toEqual({
      alias: 'to_wallet',
      currency: 643,
      minAmount: '10.00',
      maxAmount: '15000.00',
      feeConfig: { percent: '0.0', fix: '5.00' },
      accountInfoConfig: { account: { regex: '^\\d+$', title: 'Phone' } },
      paysystemData: {},
    });
  });
});
