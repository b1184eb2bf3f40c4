/**
 * An operator's recheck of one refund, and `?refresh=true` on an invoice's refunds: the listing
 * asked with nothing held, then applied under the locks through the refund rule.
 */
import { transactionFor, type By } from '../../common/actor';
import { clock } from '../../common/clock';
import { NotFound } from '../../common/errors';
import { toGatewayId } from '../../gateway';
import { InvoiceEntity } from '../../invoices/invoice.entity';
import { lockInvoice } from '../../invoices/invoice-transitions';
import { RefundView, toRefundView } from '../dto/refund.view';
import { RefundEntity } from '../refund.entity';
import { lockRefundById } from '../refund-transitions';
import { isFinalRefund, refundStatusFromGateway } from '../refund.state';
import { resolveAttention } from '../../common/attention';
import { type RefundDeps } from './refund-deps';
import { applyRefundListing, keepWatched, getRefundsOrFail } from './settle-refund';

/**
 * Admin recheck: invoice/get-refunds now (nothing held), the listing applied to this refund
 * through its rule (a final status clears a "not final yet" flag itself). It never
 * unschedules: a WAITING refund keeps (or gets) its next check while its watch lasts. The
 * flag is cleared here only when the refund is final already and the listing says the same.
 */
export async function recheckRefund(
  d: RefundDeps,
  shopRefundId: string,
  by: By,
): Promise<RefundView> {
  const pre = await d.dataSource
    .getRepository(RefundEntity)
    .findOneBy({ shopId: d.shopId, shopRefundId });
  if (!pre) throw new NotFound('Refund', shopRefundId);
  const askedAt = clock.date();
  const records = await getRefundsOrFail(d, toGatewayId(pre.gatewayInvoiceId));
  return transactionFor(d.dataSource, by, async (m) => {
    const refund = await lockRefundById(m, pre.id);
    if (!refund) throw new NotFound('Refund', shopRefundId);
    // A create call still in flight is its own evidence: its answer, not this listing, settles it.
    const inFlight = refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > clock.now();
    const wasFinal = isFinalRefund(refund.status);
    const outcome = inFlight ? null : await applyRefundListing(d, m, refund, records, askedAt);
    const listed = records.find((r) => r.shop_refund_id === refund.shopRefundId);
    const agrees =
      wasFinal &&
      outcome !== null &&
      outcome !== 'needs_attention' &&
      listed !== undefined &&
      refundStatusFromGateway(listed.status) === refund.status;
    if (agrees && refund.needsAttention)
      await resolveAttention(
        m,
        { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
        { action: 'recheck', gatewayStatus: listed.status },
        'admin',
      );
    else await keepWatched(d, m, refund);
    return toRefundView(await m.findOneByOrFail(RefundEntity, { id: refund.id }));
  });
}

/** `?refresh=true`: asks invoice/get-refunds and applies every listed refund we know. */
export async function refreshInvoiceRefunds(
  d: RefundDeps,
  invoice: InvoiceEntity,
  by: By,
): Promise<void> {
  if (invoice.invoiceId === null) return;
  // Asked with nothing held; applied under the locks in one short transaction.
  const askedAt = clock.date();
  const records = await getRefundsOrFail(d, toGatewayId(invoice.invoiceId));
  await transactionFor(d.dataSource, by, async (m) => {
    await lockInvoice(m, { shopId: d.shopId, shopOrderId: invoice.shopOrderId });
    const refunds = await m.find(RefundEntity, {
      where: { invoicePk: invoice.id },
      lock: { mode: 'pessimistic_write' },
    });
    for (const refund of refunds) {
      const inFlight =
        refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > clock.now();
      if (!isFinalRefund(refund.status) && !inFlight)
        await applyRefundListing(d, m, refund, records, askedAt);
    }
  });
}
