import { signNotificationFields } from '../../src/gateway';
import { SECRET, SHOP_ID } from './app';
import { PAYMENT } from './payways';

/**
 * A payment notification as the gateway sends it (every value text), signed by the spec's rule
 * with `secret`: a paid card invoice of 100.00 RUB; `overrides` change or add fields before the
 * signature is made.
 */
export function paymentNotification(
  shopOrderId: string,
  overrides: Record<string, string> = {},
  secret = SECRET,
): Record<string, string> {
  const fields: Record<string, string> = {
    shop_id: String(SHOP_ID),
    shop_order_id: shopOrderId,
    description: 'order',
    shop_amount: '100.00',
    shop_refund: '0',
    shop_currency: '643',
    payment_id: '987654',
    client_price: '104.00',
    ps_currency: '643',
    payway: PAYMENT.card,
    ps_data: '{"account":"411111******1111"}',
    created: '2026-01-01T10:00:00+03:00',
    updated: '2026-01-01T10:05:00+03:00',
    status: 'success',
    addons: '{}',
    ...overrides,
  };
  return { ...fields, sign: signNotificationFields(fields, secret) };
}
