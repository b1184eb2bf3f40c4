import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/config';
import { GatewayError } from '../gateway/gateway.errors';
import type { GatewayService } from '../gateway/gateway.service';
import {
  isFinal as invoiceFinal,
  statusFromGatewayNumber as invoiceStatusOf,
} from '../invoices/invoice.state';
import type { InvoiceStatus } from '../invoices/invoice.state';
import { holdReading } from '../invoices/invoice.rules';
import { clock } from '../common/clock';
import {
  isFinal as payoutFinal,
  statusFromGatewayNumber as payoutStatusOf,
} from '../payouts/payout.state';
import type { PayoutStatus } from '../payouts/payout.entity';
import { isFinalRefund, refundStatusFromGateway } from '../refunds/refund.state';
import type { RefundStatus } from '../refunds/refund.entity';
import { compareObject, type ReconciliationItem } from './reconciliation.rules';

/**
 * The objects of a reconciliation: every invoice, refund and payout that changed in the day or is
 * not final, each asked about at the gateway (invoice/check, invoice/get-refunds once per
 * invoice, withdraw/status) and compared (compareObject). A status call the gateway cannot
 * answer fails the run: a result is never built on a partial view.
 */

export interface FlaggableItem extends ReconciliationItem {
  /** The object's row id (for its attention flag) and status. */
  rowId?: string;
  rowStatus?: string;
}

async function absentAsNull<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof GatewayError && e.isAbsent) return null;
    throw e;
  }
}

/** Statuses in which the gateway may not have the object yet: its absence is no variance. */
const INVOICE_MAYBE_UNSENT = new Set(['pending', 'unknown', 'ps_create_failed']);

export async function reconcileObjects(
  ds: DataSource,
  gateway: GatewayService,
  config: AppConfig,
  day: { from: Date; to: Date },
): Promise<FlaggableItem[]> {
  const paymentShop = config.gateway.shops.payment.shopId;
  const payoutShop = config.gateway.shops.payout.shopId;
  const items: FlaggableItem[] = [];

  const invoices = (await ds.query(
    `SELECT id, shop_order_id, status, amount::text AS amount, currency, unhold_requested_at, hold_expires_at FROM invoices
      WHERE shop_id = $1 AND status <> 'ps_create_failed'
        AND ((updated_at >= $2 AND updated_at < $3) OR processed_at IS NULL)
      ORDER BY created_at, id`,
    [paymentShop, day.from, day.to],
  )) as {
    id: string;
    shop_order_id: string;
    status: InvoiceStatus;
    amount: string;
    currency: number;
    unhold_requested_at: Date | null;
    hold_expires_at: Date | null;
  }[];
  for (const inv of invoices) {
    const record = await absentAsNull(() => gateway.checkInvoice(inv.shop_order_id));
    if (record === null && INVOICE_MAYBE_UNSENT.has(inv.status)) continue;
    const reported = record === null ? null : invoiceStatusOf(record.status);
    // A 6 for a released or lapsed hold is the gateway's word for `unheld` or `expired` (the
    // invoice rule's reading).
    const mapped = holdReading(
      { status: inv.status, unholdRequestedAt: inv.unhold_requested_at, holdExpiresAt: inv.hold_expires_at },
      reported,
      clock.date(),
    );
    if (record !== null && mapped === null) continue;
    for (const item of compareObject({
      objectType: 'invoice',
      objectId: inv.shop_order_id,
      currency: inv.currency,
      ours: { status: inv.status, final: invoiceFinal(inv.status), amount: inv.amount },
      // The amount in the shop's currency, as the gateway holds it (invoice/check's shop_amount).
      gateway:
        record === null || mapped === null
          ? null
          : {
              status: mapped,
              final: invoiceFinal(mapped),
              amount: record.shop_amount == null ? null : String(record.shop_amount),
            },
    }))
      items.push({ ...item, rowId: inv.id, rowStatus: inv.status });
  }

  const refunds = (await ds.query(
    `SELECT id, shop_refund_id, status, amount::text AS amount, currency, gateway_invoice_id::text AS gateway_invoice_id, submit_state
       FROM refunds
      WHERE shop_id = $1 AND gateway_invoice_id IS NOT NULL
        AND ((updated_at >= $2 AND updated_at < $3) OR status = 'WAITING')
      ORDER BY created_at, id`,
    [paymentShop, day.from, day.to],
  )) as {
    id: string;
    shop_refund_id: string;
    status: RefundStatus;
    amount: string;
    currency: number;
    gateway_invoice_id: string;
    submit_state: string;
  }[];
  const byInvoice = new Map<string, typeof refunds>();
  for (const r of refunds)
    byInvoice.set(r.gateway_invoice_id, [...(byInvoice.get(r.gateway_invoice_id) ?? []), r]);
  for (const [invoiceId, ours] of byInvoice) {
    const theirs = (await absentAsNull(() => gateway.getRefunds(Number(invoiceId)))) ?? [];
    for (const r of ours) {
      const g = theirs.find((t) => t.shop_refund_id === r.shop_refund_id);
      if (g === undefined && r.submit_state !== 'accepted') continue;
      const status = g === undefined ? null : refundStatusFromGateway(g.status);
      if (g !== undefined && status === null) continue;
      for (const item of compareObject({
        objectType: 'refund',
        objectId: r.shop_refund_id,
        currency: r.currency,
        ours: { status: r.status, final: isFinalRefund(r.status), amount: r.amount },
        gateway:
          g === undefined || status === null
            ? null
            : { status, final: isFinalRefund(status), amount: String(g.amount) },
      }))
        items.push({ ...item, rowId: r.id, rowStatus: r.status });
    }
  }

  const payouts = (await ds.query(
    `SELECT id, shop_payment_id, status, withdraw_id::text AS withdraw_id, shop_write_off::text AS shop_write_off, shop_currency
       FROM payouts
      WHERE shop_id = $1 AND withdraw_id IS NOT NULL
        AND ((updated_at >= $2 AND updated_at < $3) OR status NOT IN ('succeeded', 'failed', 'rejected'))
      ORDER BY created_at, id`,
    [payoutShop, day.from, day.to],
  )) as {
    id: string;
    shop_payment_id: string;
    status: PayoutStatus;
    withdraw_id: string;
    shop_write_off: string | null;
    shop_currency: number;
  }[];
  for (const p of payouts) {
    const record = await absentAsNull(() => gateway.withdrawStatus(Number(p.withdraw_id)));
    const mapped =
      record === null ? null : payoutStatusOf(record.status, config.payouts.status).status;
    for (const item of compareObject({
      objectType: 'payout',
      objectId: p.shop_payment_id,
      currency: p.shop_currency,
      ours: { status: p.status, final: payoutFinal(p.status), amount: p.shop_write_off },
      gateway:
        record === null || mapped === null
          ? null
          : { status: mapped, final: payoutFinal(mapped), amount: String(record.shop_write_off) },
    }))
      items.push({ ...item, rowId: p.id, rowStatus: p.status });
  }
  return items;
}
