import type { By } from '../../common/actor';
import type { InvoiceView } from '../invoice.view';
import type { InvoiceDeps } from './invoice-deps';
import { settleHold, type HoldAction } from './settle-hold';

/**
 * `POST /invoices/{id}/unhold`: invoice/unhold of a held invoice, its request the hold's gateway
 * id; the row records that the release was asked for, so the invoice rule (judgeInvoice) reads a
 * later 6 as the released hold. canCaptureOrRelease and holdActionDone (invoice.state.ts) decide
 * before the call; the phases are settle-hold.ts's.
 */
export const UNHOLD: HoldAction = {
  action: 'unhold',
  call: 'invoice/unhold',
  send: (gateway, invoiceId) => gateway.unholdInvoice(invoiceId),
};

export function unholdInvoice(ctx: InvoiceDeps, shopOrderId: string, by: By): Promise<InvoiceView> {
  return settleHold(ctx, shopOrderId, UNHOLD, by);
}
