import { adjustmentPostings, imbalance, openingPostings, parseAdjustment } from './ledger.chart';

describe('imbalance', () => {
  it('sums per currency, exactly (no float)', () => {
    expect(
      imbalance([
        { account: 'sales', currency: 643, amount: '0.1' },
        { account: 'sales', currency: 643, amount: '0.2' },
        { account: 'adjustments', currency: 643, amount: '-0.3' },
      ]).size,
    ).toBe(0);
    expect([
      ...imbalance([
        { account: 'sales', currency: 643, amount: '5' },
        { account: 'adjustments', currency: 840, amount: '-5' },
      ]),
    ]).toEqual([
      [643, '5'],
      [840, '-5'],
    ]);
  });
});

describe('adjustments and opening entries', () => {
  it('takes an adjustment whole or names each bad field', () => {
    expect(
      parseAdjustment({
        account: 'agent_available',
        currency: 'rub',
        amount: '-5.00',
        note: 'fee',
      }),
    ).toEqual({
      account: 'agent_available',
      currency: 643,
      amount: '-5.00',
      note: 'fee',
    });
    const bad = parseAdjustment({
      account: 'adjustments',
      currency: 643,
      amount: '5.001',
      note: '',
    });
    expect('errors' in bad && bad.errors.map((e) => e.field)).toEqual([
      'account',
      'amount',
      'note',
    ]);
    const jpy = parseAdjustment({ account: 'sales', currency: 392, amount: '1.5', note: 'x' });
    expect('errors' in jpy && jpy.errors.map((e) => e.field)).toEqual(['amount']);
    for (const amount of ['5e2', '+5', '05', '0', '-0.00', ' 5', 5, null]) {
      const r = parseAdjustment({ account: 'sales', currency: 643, amount, note: 'x' });
      expect('errors' in r).toBe(true);
    }
  });

  it('posts the other side to adjustments with the same digits', () => {
    expect(
      adjustmentPostings({ account: 'agent_available', currency: 643, amount: '-5.00', note: 'x' }),
    ).toEqual([
      { account: 'agent_available', currency: 643, amount: '-5.00' },
      { account: 'adjustments', currency: 643, amount: '5.00' },
    ]);
  });

  it('opens from the gateway balance, nothing for an empty one', () => {
    expect(openingPostings({ currency: 643, available: '1000.00', frozen: '40.00' })).toEqual([
      { account: 'agent_available', currency: 643, amount: '1000.00' },
      { account: 'agent_frozen', currency: 643, amount: '40.00' },
      { account: 'adjustments', currency: 643, amount: '-1040' },
    ]);
    expect(openingPostings({ currency: 643, available: '0.00', frozen: '0' })).toEqual([]);
  });
});
