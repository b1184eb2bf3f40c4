import type { GatewayCall, GatewayShop, GatewayShopRole } from '../config/config';

/**
 * Which of the merchant's two gateway shops each call belongs to. The gateway reports balances
 * only for agent shops created for payouts (gateway-interface.md, shop_balance), and its test
 * server runs payments and payouts through two shops (gateway-facts.md, "Shops seen"): payments
 * go through the payment shop, payouts and the balance through the agent shop. Each call is
 * signed with its own shop's secret. This table is the only place that decides it.
 */
export const CALL_SHOP: Readonly<Record<GatewayCall, GatewayShopRole>> = {
  'invoice/try': 'payment',
  'invoice/create': 'payment',
  'invoice/hold': 'payment',
  'invoice/check': 'payment',
  'invoice/charge': 'payment',
  'invoice/unhold': 'payment',
  'invoice/create-refund': 'payment',
  'invoice/get-refunds': 'payment',
  'shop_input_config/shop': 'payment',
  'shop_output_config/shop': 'payout',
  shop_balance: 'payout',
  'withdraw/try': 'payout',
  check_account: 'payout',
  'withdraw/create': 'payout',
  'withdraw/status': 'payout',
  'withdraw/shop_payment_status': 'payout',
};

/** The configured shops, looked up by role, by call, or by the id a notification names. */
export class GatewayShops {
  constructor(private readonly shops: Readonly<Record<GatewayShopRole, GatewayShop>>) {}

  of(role: GatewayShopRole): GatewayShop {
    return this.shops[role];
  }

  forCall(call: GatewayCall): GatewayShop {
    return this.shops[CALL_SHOP[call]];
  }

  /** The shop whose `shop_id` is this text (as a notification carries it); undefined when not ours. */
  byId(shopId: string | number | undefined): GatewayShop | undefined {
    const text = String(shopId ?? '');
    return Object.values(this.shops).find((s) => String(s.shopId) === text);
  }

  /** Every configured secret, so none can leak through a gateway message that echoes one. */
  secrets(): string[] {
    return [...new Set(Object.values(this.shops).map((s) => s.secretKey))];
  }
}
