import { toBalanceView } from './balance.service';

describe('toBalanceView', () => {
  it('adds available, hold and frozen exactly, written with the currency’s minor-unit digits, under the agent shop id', () => {
    const view = toBalanceView(
      {
        shop_id: 1001,
        balances: [
          { currency: 643, available: '0.1', hold: '0.2', frozen: '1000000000000000.01' },
          { currency: 840, available: '10000.00', hold: '0', frozen: '0' },
        ],
      },
      1002,
    );
    expect(view).toEqual({
      shopId: 1002,
      balances: [
        {
          currency: 643,
          available: '0.10',
          hold: '0.20',
          frozen: '1000000000000000.01',
          total: '1000000000000000.31',
        },
        { currency: 840, available: '10000.00', hold: '0.00', frozen: '0.00', total: '10000.00' },
      ],
    });
  });
});
