import { clock } from '../common/clock';
import { invoiceForOperation, invoiceRecord, notifyInvoice } from './invoice-record';
import type { JsonOut } from './json-text';
import { refused } from './protocol';
import type { CallContext, CallHandler, SandboxRuntime } from './runtime';
import { INVOICE_STATUS, Invoice } from './sandbox.state';

/**
 * A two-step payment's hold, from held to its end: charged (invoice/charge), released
 * (invoice/unhold, or charged when a charge is queued) or lapsed at its `expires_at`.
 */

/** A hold lasts a week unless the settings say otherwise (`holdLifetimeS`). */
export const HOLD_LIFETIME_S = 7 * 24 * 3600;

/**
 * A hold lapses at its `expires_at` as the gateway's does: the funds go back to the payer and
 * the record shows the released status (6, there is no status of its own), notified like any
 * other change; a charge after it is refused (the invoice is no longer held). Run by the hold's
 * own timer, by the sandbox clock's advance, and before any call reads the hold (a restarted
 * sandbox's hold lapses too). True when it lapsed now.
 */
export function lapseIfExpired(rt: SandboxRuntime, invoice: Invoice): boolean {
  if (invoice.status !== INVOICE_STATUS.HELD || clock.now() < invoice.expiresAt.getTime()) return false;
  invoice.status = INVOICE_STATUS.REJECTED;
  invoice.updated = invoice.expiresAt;
  invoice.processed = invoice.expiresAt;
  rt.state.settleHold(invoice.shopId, invoice.currency, invoice.amount, false);
  notifyInvoice(rt, invoice);
  return true;
}

/** The hold's lapse, due at its `expires_at` on the clock. */
export function scheduleLapse(rt: SandboxRuntime, invoice: Invoice): void {
  if (invoice.status !== INVOICE_STATUS.HELD) return;
  rt.scheduler.afterReal(invoice.expiresAt.getTime() - clock.now(), () => {
    lapseIfExpired(rt, invoice);
  });
}

/** Second step of a two-step payment, for held invoices only: charged → paid. */
export const invoiceCharge: CallHandler = (ctx) => settleHeld(ctx, true);

/**
 * Cancels a hold, for held invoices only: the money returns to the payer → 6 (a released hold
 * has no status of its own). A hold with a charge still queued is charged instead → 4.
 */
export const invoiceUnhold: CallHandler = (ctx) => settleHeld(ctx, false);

function settleHeld(ctx: CallContext, charge: boolean): JsonOut {
  ctx.fields.now();
  const invoice = invoiceForOperation(ctx);
  lapseIfExpired(ctx.rt, invoice);
  if (invoice.status !== INVOICE_STATUS.HELD) {
    throw refused(`invoice ${invoice.id} is not held (status ${invoice.status})`);
  }
  const now = clock.date();
  const charged = charge || invoice.chargeOnUnhold === true;
  invoice.status = charged ? INVOICE_STATUS.PAID : INVOICE_STATUS.REJECTED;
  invoice.updated = now;
  invoice.processed = now;
  ctx.rt.state.settleHold(invoice.shopId, invoice.currency, invoice.amount, charged);
  notifyInvoice(ctx.rt, invoice);
  return invoiceRecord(ctx.rt, invoice, false);
}
