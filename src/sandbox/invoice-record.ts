import { JsonOut, moneyJson } from './json-text';
import { gatewayTime, refused } from './protocol';
import type { CallContext, SandboxRuntime } from './runtime';
import { INVOICE_STATUS, Invoice, invoiceStatusText } from './sandbox.state';

/**
 * What the sandbox's gateway says about an invoice, whatever step it is at: its record (as
 * invoice/create, invoice/check and the control routes answer it), its payment notification, and
 * the invoice an operation names. Payment (invoices.ts) and a hold's lifecycle both write it.
 */

/** Scenarios whose outcome the gateway does not notify (the shop asks invoice/check). */
function notifies(invoice: Invoice): boolean {
  const s = invoice.payway.scenarios;
  return !(s.has('success') || s.has('rejected') || s.has('refund_failed'));
}

/** `ps_data`: JSON text with the masked account and, after success, the issued token. */
function psData(invoice: Invoice): string {
  const data: Record<string, string> = {};
  if (invoice.cardMask !== undefined) data.account = invoice.cardMask;
  if (invoice.issuedToken !== undefined) data.payment_token = invoice.issuedToken;
  return JSON.stringify(data);
}

function tokenJson(rt: SandboxRuntime, invoice: Invoice): JsonOut {
  const token =
    invoice.issuedToken === undefined ? undefined : rt.state.tokens.get(invoice.issuedToken);
  if (token === undefined) return null;
  return {
    token: token.token,
    status: 'SUCCESS',
    expires_at: gatewayTime(token.expiresAt),
    account: token.accountMask,
    card_info: { ...token.cardInfo },
  };
}

/** The invoice record; `forCheck` adds the fields only invoice/check returns. */
export function invoiceRecord(rt: SandboxRuntime, invoice: Invoice, forCheck: boolean): JsonOut {
  const record: Record<string, JsonOut> = {
    shop_order_id: invoice.shopOrderId,
    shop_id: invoice.shopId,
    status: invoice.status,
    payment_id: invoice.id,
    ps_data: psData(invoice),
    ps_currency: invoice.paywayConfig.currency,
    payway: invoice.payway.requested,
    description: invoice.description,
    created: gatewayTime(invoice.created),
    updated: gatewayTime(invoice.updated),
    processed: invoice.processed === undefined ? null : gatewayTime(invoice.processed),
    shop_currency: invoice.currency,
    shop_amount: moneyJson(invoice.amount),
    client_price: moneyJson(invoice.clientPrice),
    error_code: invoice.errorCode,
    shop_refund: moneyJson(rt.state.refundedAmount(invoice.id)),
    settlement_currency: invoice.currency,
    settlement_rate: null,
  };
  if (!forCheck) return record;
  return {
    ...record,
    expires_at: gatewayTime(invoice.expiresAt),
    is_unique: true,
    payment_token: tokenJson(rt, invoice),
  };
}

/** Payment notification for the invoice's current status, to the URL its status calls for. */
export function notifyInvoice(rt: SandboxRuntime, invoice: Invoice): void {
  if (!notifies(invoice)) return;
  const rejected = invoice.status === INVOICE_STATUS.REJECTED;
  const url = rejected
    ? (invoice.urls.callbackRejected ?? invoice.urls.callback)
    : invoice.urls.callback;
  rt.notifier.send({
    type: 'invoice',
    group: invoiceGroup(invoice.shopOrderId),
    url: url ?? null,
    scenarios: invoice.payway.scenarios,
    final: rejected || invoice.status === INVOICE_STATUS.PAID,
    fields: {
      shop_id: invoice.shopId,
      shop_order_id: invoice.shopOrderId,
      description: invoice.description,
      shop_amount: moneyJson(invoice.amount),
      shop_refund: moneyJson(rt.state.refundedAmount(invoice.id)),
      shop_currency: invoice.currency,
      payment_id: invoice.id,
      client_price: moneyJson(invoice.clientPrice),
      ps_currency: invoice.paywayConfig.currency,
      payway: invoice.payway.requested,
      ps_data: psData(invoice),
      created: gatewayTime(invoice.created),
      updated: gatewayTime(invoice.updated),
      status: invoiceStatusText(invoice.status),
      addons: JSON.stringify(invoice.addons),
    },
  });
}

export function invoiceGroup(shopOrderId: string): string {
  return `invoice:${shopOrderId}`;
}

/** The invoice named by `invoice_id` of an operation; refused when unknown. */
export function invoiceForOperation(ctx: CallContext): Invoice {
  const id = ctx.fields.int('invoice_id');
  const invoice = ctx.rt.state.invoices.get(id);
  if (invoice === undefined || invoice.shopId !== ctx.shopId)
    throw refused(`invoice ${id} is not found`);
  return invoice;
}
