import { currencyAlpha } from './payway-catalogue';
import { clock } from '../common/clock';
import { MONEY_SCALE } from './decimal';
import { invoiceForOperation } from './invoice-record';
import type { JsonOut } from './json-text';
import { absent, gatewayTime, notUnique, refused } from './protocol';
import type { CallHandler, SandboxRuntime } from './runtime';
import { DELAYS_MS } from './runtime';
import { INVOICE_STATUS, Invoice, Refund } from './sandbox.state';

/**
 * Refunds: `invoice/create-refund` (partial or full, for paid invoices, never above the paid
 * amount) answers WAITING; after a short delay the refund ends SUCCESS (FAILED with the
 * refund_failed scenario) and a refund notification follows. `invoice/get-refunds` lists them.
 */

export function refundRecord(refund: Refund): JsonOut {
  const amount = refund.amount.toFixed(MONEY_SCALE);
  return {
    shop_refund_id: refund.shopRefundId,
    status: refund.status,
    invoice_id: refund.invoiceId,
    amount,
    currency: currencyAlpha(refund.currency),
    error_code: refund.errorCode,
    created_at: gatewayTime(refund.createdAt),
    processed_at: refund.processedAt === undefined ? null : gatewayTime(refund.processedAt),
    settlement_amount: amount,
    settlement_currency: currencyAlpha(refund.currency),
    settlement_rate: null,
  };
}

export const createRefund: CallHandler = (ctx) => {
  const { fields, rt } = ctx;
  const invoice = invoiceForOperation(ctx);
  const amount = fields.amount('amount');
  const shopRefundId = fields.text('shop_refund_id', { max: 255 });
  const callbackUrl = fields.optionalUrl('callback_url');
  if (invoice.status !== INVOICE_STATUS.PAID) {
    throw refused(`invoice ${invoice.id} is not paid (status ${invoice.status})`);
  }
  if (rt.state.refunds.has(shopRefundId)) throw notUnique('shop_refund_id', shopRefundId);
  const left = invoice.amount.minus(rt.state.committedRefunds(invoice.id));
  if (amount.compare(left) > 0) {
    throw refused(
      `refund amount exceeds what is left of the paid amount (${left.toFixed(MONEY_SCALE)})`,
    );
  }
  const refund: Refund = {
    shopRefundId,
    invoiceId: invoice.id,
    amount,
    currency: invoice.currency,
    status: 'WAITING',
    errorCode: 0,
    callbackUrl,
    createdAt: clock.date(),
  };
  rt.state.refunds.set(shopRefundId, refund);
  scheduleRefundEnd(rt, invoice, refund);
  return refundRecord(refund);
};

/**
 * A WAITING refund ends `DELAYS_MS.refund` (scaled) after its creation; after a restart one
 * that is overdue ends at once.
 */
export function scheduleRefundEnd(rt: SandboxRuntime, invoice: Invoice, refund: Refund): void {
  const due = refund.createdAt.getTime() + DELAYS_MS.refund * rt.state.settings.timeScale;
  rt.scheduler.afterReal(due - clock.now(), () => finishRefund(rt, invoice, refund));
}

function finishRefund(rt: SandboxRuntime, invoice: Invoice, refund: Refund): void {
  if (refund.status !== 'WAITING') return;
  const failed = invoice.payway.scenarios.has('refund_failed');
  refund.status = failed ? 'FAILED' : 'SUCCESS';
  refund.errorCode = failed ? 10 : 0;
  refund.processedAt = clock.date();
  if (!failed) {
    rt.state.debit(invoice.shopId, refund.currency, refund.amount);
    invoice.updated = refund.processedAt;
  }
  rt.notifier.send({
    type: 'refund',
    group: `refund:${refund.shopRefundId}`,
    url: refund.callbackUrl ?? invoice.urls.callback ?? null,
    scenarios: invoice.payway.scenarios,
    final: true,
    fields: {
      shop_id: invoice.shopId,
      shop_refund_id: refund.shopRefundId,
      invoice_id: invoice.id,
      shop_order_id: invoice.shopOrderId,
      status: refund.status,
      amount: refund.amount.toFixed(MONEY_SCALE),
      currency: currencyAlpha(refund.currency),
      error_code: refund.errorCode,
      created_at: gatewayTime(refund.createdAt),
      processed_at: gatewayTime(refund.processedAt),
    },
  });
}

export const getRefunds: CallHandler = (ctx) => {
  ctx.fields.now();
  const id = ctx.fields.int('invoice_id');
  const invoice = ctx.rt.state.invoices.get(id);
  if (invoice === undefined || invoice.shopId !== ctx.shopId) throw absent('Invoice');
  return ctx.rt.state.refundsOf(id).map(refundRecord);
};
