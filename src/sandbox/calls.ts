import type { GatewayCall } from '../config/config';
import { inputConfigJson, outputConfigJson } from './payway-catalogue';
import {
  invoiceCharge,
  invoiceCheck,
  invoiceCreate,
  invoiceHold,
  invoiceTry,
  invoiceUnhold,
} from './invoices';
import {
  checkAccount,
  shopBalance,
  shopPaymentStatus,
  withdrawCreate,
  withdrawStatus,
  withdrawTry,
} from './payouts';
import { createRefund, getRefunds } from './refunds';
import type { CallHandler } from './runtime';

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
