import express, { Request, Response, Router } from 'express';
import { invoiceByOrderOrId } from './control.routes';
import { invoiceRecord } from './invoice-record';
import { JsonOut, toJsonText } from './json-text';
import { refundRecord } from './refunds';
import type { SandboxRuntime } from './runtime';
import { INVOICE_STATUS, PAYOUT_STATUS } from './sandbox.state';

/**
 * The gateway restates a final status (a bank reversal, a payout the bank returned days later, a
 * refund the acquirer undid): the object's record changes from one final status to another and
 * the shop's balance moves with it, as the gateway's own books would. No notification is sent
 * (the gateway does not notify a restatement); the shop learns it by asking (Recheck,
 * reconciliation). Only final-to-final changes that move money are taken:
 *
 * - `POST /sandbox/invoices/{shopOrderId|invoiceId}/restate {status: 6}`: a paid (4) invoice
 *   becomes rejected; its amount leaves the payment shop's available balance.
 * - `POST /sandbox/refunds/{shopRefundId}/restate {status: "FAILED"}`: a SUCCESS refund becomes
 *   FAILED; its amount returns to the shop's available balance.
 * - `POST /sandbox/payouts/{shopPaymentId}/restate {status: 6}`: a paid (5) payout becomes
 *   rejected (6) or cancelled (8); its write-off returns to the agent shop's available balance.
 */
function fail(res: Response, status: number, message: string): void {
  res
    .status(status)
    .type('application/json')
    .send(toJsonText({ result: false, message }));
}

function ok(res: Response, data: JsonOut): void {
  res.type('application/json').send(toJsonText({ result: true, data }));
}

function statusOf(req: Request): unknown {
  const b: unknown = req.body;
  return typeof b === 'object' && b !== null ? (b as Record<string, unknown>).status : undefined;
}

export function restateRouter(rt: SandboxRuntime): Router {
  const router = express.Router();
  router.use(express.json());
  const { state } = rt;
  const shopIds = rt.shops.map((s) => s.id);

  router.post('/invoices/:id/restate', (req: Request, res: Response) => {
    const invoice = invoiceByOrderOrId(state, shopIds, String(req.params.id));
    if (invoice === undefined) return fail(res, 404, 'no such invoice');
    if (statusOf(req) !== INVOICE_STATUS.REJECTED) return fail(res, 400, 'status must be 6');
    if (invoice.status !== INVOICE_STATUS.PAID)
      return fail(res, 409, `invoice ${invoice.id} is not paid (status ${invoice.status})`);
    invoice.status = INVOICE_STATUS.REJECTED;
    invoice.updated = new Date();
    state.debit(invoice.shopId, invoice.currency, invoice.amount);
    ok(res, invoiceRecord(rt, invoice, true));
  });

  router.post('/refunds/:id/restate', (req: Request, res: Response) => {
    const refund = state.refunds.get(String(req.params.id));
    if (refund === undefined) return fail(res, 404, 'no such refund');
    if (statusOf(req) !== 'FAILED') return fail(res, 400, 'status must be FAILED');
    if (refund.status !== 'SUCCESS')
      return fail(res, 409, `refund ${refund.shopRefundId} is not SUCCESS (${refund.status})`);
    const invoice = state.invoices.get(refund.invoiceId);
    if (invoice === undefined) return fail(res, 409, 'the refund has no invoice');
    refund.status = 'FAILED';
    refund.errorCode = 10;
    state.credit(invoice.shopId, refund.currency, refund.amount);
    ok(res, refundRecord(refund));
  });

  router.post('/payouts/:id/restate', (req: Request, res: Response) => {
    const id = String(req.params.id);
    const payout = shopIds
      .map((s) => state.findPayoutByShopPaymentId(s, id))
      .find((p) => p !== undefined);
    if (payout === undefined) return fail(res, 404, 'no such payout');
    const to = statusOf(req);
    if (to !== PAYOUT_STATUS.REJECTED && to !== PAYOUT_STATUS.CANCELLED)
      return fail(res, 400, 'status must be 6 or 8');
    if (payout.status !== PAYOUT_STATUS.SUCCESS)
      return fail(res, 409, `payout ${payout.id} is not paid (status ${payout.status})`);
    payout.status = to;
    payout.updated = new Date();
    state.changeAvailable(payout.shopId, payout.shopCurrency, payout.shopWriteOff);
    ok(res, { id: payout.id, status: payout.status, shop_payment_id: payout.shopPaymentId });
  });
  return router;
}
