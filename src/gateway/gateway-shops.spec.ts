import { DEFAULT_GATEWAY_CALLS, type GatewayCall } from '../config/config';
import { CALL_SHOP, GatewayShops } from './gateway-shops';

const shops = new GatewayShops({
  payment: { shopId: 356, secretKey: 'payment-secret' },
  payout: { shopId: 357, secretKey: 'agent-secret' },
});

describe('GatewayShops', () => {
  it('routes every call of the interface to a shop: money out and the balance to the agent shop', () => {
    const calls = Object.keys(DEFAULT_GATEWAY_CALLS) as GatewayCall[];
    expect(Object.keys(CALL_SHOP).sort()).toEqual([...calls].sort());
    const agent = calls.filter((c) => shops.forCall(c).shopId === 357).sort();
    expect(agent).toEqual([
      'check_account',
      'shop_balance',
      'shop_output_config/shop',
      'withdraw/create',
      'withdraw/shop_payment_status',
      'withdraw/status',
      'withdraw/try',
    ]);
    expect(shops.forCall('invoice/create-refund').secretKey).toBe('payment-secret');
  });

  it.each([
    ['356', 'payment-secret'],
    [357, 'agent-secret'],
    ['0356', undefined],
    [' 356', undefined],
    ['358', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('finds the shop a notification names exactly: %j', (id, secret) => {
    expect(shops.byId(id)?.secretKey).toBe(secret);
  });

  it('knows each secret once', () => {
    expect(shops.secrets().sort()).toEqual(['agent-secret', 'payment-secret']);
    const one = new GatewayShops({
      payment: { shopId: 1, secretKey: 's' },
      payout: { shopId: 1, secretKey: 's' },
    });
    expect(one.secrets()).toEqual(['s']);
  });
});
