import type { GatewayCall } from '../config/config';
import { inputConfigJson, outputConfigJson } from './payway-catalogue';
import { invoiceCharge, invoiceUnhold } from './holds';
import { invoiceCheck, invoiceCreate, invoiceHold, invoiceTry } from './invoices';
import {
  checkAccount,
  shopBalance,
  shopPaymentStatus,
  withdrawCreate,
  withdrawStatus,
  withdrawTry,
} from './payouts';
import { createRefund, getRefunds } from './refunds';
import type { CallHandler, ShopService } from './runtime';

/** The handler of each of the 16 calls of the interface. */
export const CALL_HANDLERS: Record<GatewayCall, CallHandler> = {
  'invoice/try': invoiceTry,
  'invoice/create': invoiceCreate,
  'invoice/hold': invoiceHold,
  'invoice/check': invoiceCheck,
  'invoice/charge': invoiceCharge,
  'invoice/unhold': invoiceUnhold,
  'invoice/create-refund': createRefund,
  'invoice/get-refunds': getRefunds,
  'shop_input_config/shop': (ctx) => {
    ctx.fields.now();
    return inputConfigJson(ctx.rt.catalogue);
  },
  'shop_output_config/shop': (ctx) => {
    ctx.fields.now();
    return outputConfigJson(ctx.rt.catalogue);
  },
  shop_balance: shopBalance,
  'withdraw/try': withdrawTry,
  check_account: checkAccount,
  'withdraw/create': withdrawCreate,
  'withdraw/status': withdrawStatus,
  'withdraw/shop_payment_status': shopPaymentStatus,
};

/**
 * The service each call needs from the shop that signs it: payouts and the balance only for an
 * agent shop (gateway-interface.md, shop_balance), payments only for a payment shop. Written here
 * apart from src/gateway so the sandbox checks the client's routing instead of sharing it.
 */
export const CALL_SERVICE: Record<GatewayCall, ShopService> = {
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
