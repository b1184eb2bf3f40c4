import type { By } from '../../common/actor';
import type { InvoiceView } from '../invoice.view';
import type { InvoiceDeps } from './invoice-deps';
import { settleHold, type HoldAction } from './settle-hold';

/**
 * `POST /invoices/{id}/charge`: invoice/charge of a held invoice, its request the hold's gateway
 * id. The rules: canCaptureOrRelease and holdActionDone (invoice.state.ts) before the call, the
 * invoice rule (judgeInvoice) on the answer; the phases are settle-hold.ts's.
 */
export const CHARGE: HoldAction = {
  action: 'charge',
  call: 'invoice/charge',
  send: (gateway, invoiceId) => gateway.chargeInvoice(invoiceId),
};

export function chargeInvoice(ctx: InvoiceDeps, shopOrderId: string, by: By): Promise<InvoiceView> {
  return settleHold(ctx, shopOrderId, CHARGE, by);
}
