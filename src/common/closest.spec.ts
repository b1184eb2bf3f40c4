import { boundedDistance, closestAliases, closestField } from './closest';

const CARD = 'card_core_payin_rub';
const KNOWN = [
  `${CARD}[mock_server,success_with_callback]`,
  `${CARD}[mock_server,success]`,
  `${CARD}[mock_server,rejected_with_callback]`,
  `${CARD}[mock_server,create_declined_with_callback]`,
  `${CARD}[mock_server,internal_server_error]`,
  `${CARD}[mock_server,timeout_error]`,
  'card_core_payin_usd[mock_server,success]',
  'qiwi_wallet_rub[mock_server,rejected]',
  'qiwi_wallet_rub[mock_server,success]',
];

describe('boundedDistance', () => {
  it.each([
    ['', '', 3, 0],
    ['abc', 'abc', 1, 0],
    ['kitten', 'sitting', 3, 3],
    ['kitten', 'sitting', 2, 3],
    ['amount', 'ammount', 1, 1],
    ['a', 'abcdef', 2, 3],
  ])('%p → %p within %p is %p', (a, b, limit, d) => {
    expect(boundedDistance(a, b, limit)).toBe(d);
  });
});

describe('closestField', () => {
  const FIELDS = ['shopOrderId', 'amount', 'currency', 'payway', 'description', 'twoStep', 'paymentToken'];
  it.each([
    ['shop_order_id', 'shopOrderId'],
    ['ShopOrderID', 'shopOrderId'],
    ['shop-order-id', 'shopOrderId'],
    ['order_id', 'shopOrderId'],
    ['ammount', 'amount'],
    ['curency', 'currency'],
    ['pay_way', 'payway'],
    ['two_step', 'twoStep'],
    ['payment_token', 'paymentToken'],
  ])('%p resembles %p', (given, field) => {
    expect(closestField(given, FIELDS)).toBe(field);
  });

  it.each(['wrong1', 'x', 'callbackUrl', 'status', 'a'.repeat(500)])('%p resembles nothing', (given) => {
    expect(closestField(given, FIELDS)).toBeNull();
  });
});

describe('closestAliases', () => {
  it('a payway without its scenario: its scenario forms', () => {
    const got = closestAliases(CARD, KNOWN);
    expect(got).toHaveLength(5);
    for (const a of got) expect(a.startsWith(`${CARD}[`)).toBe(true);
  });

  it('a scenario cut short: the listed one it starts, first', () => {
    expect(closestAliases(`${CARD}[mock_server,rejected]`, KNOWN)[0]).toBe(
      `${CARD}[mock_server,rejected_with_callback]`,
    );
    expect(closestAliases(`${CARD}[mock_server, rejected]`, KNOWN)[0]).toBe(
      `${CARD}[mock_server,rejected_with_callback]`,
    );
  });

  it('a misspelt payway with its scenario: that payway first', () => {
    expect(closestAliases('card_core_payin_rbu[mock_server,success]', KNOWN)[0]).toBe(
      `${CARD}[mock_server,success]`,
    );
  });

  it('an alias in capitals: the listed spelling first', () => {
    expect(closestAliases(`${CARD}[mock_server,success]`.toUpperCase(), KNOWN)[0]).toBe(
      `${CARD}[mock_server,success]`,
    );
  });

  it('nothing close: no suggestion; never more than five', () => {
    expect(closestAliases('nope_rub', KNOWN)).toEqual([]);
    expect(closestAliases('x'.repeat(1000), KNOWN)).toEqual([]);
    expect(closestAliases('card', KNOWN).length).toBeLessThanOrEqual(5);
  });
});
