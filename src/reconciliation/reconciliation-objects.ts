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
import { Amount } from '../common/money';
import { readPayoutRecord } from '../payouts/payout.rules';
import { isFinal as payoutFinal, PAYOUT_FINAL_STATUSES } from '../payouts/payout.state';
import type { PayoutStatus } from '../payouts/payout.entity';
import {
  FINAL_REFUND_STATUSES as REFUND_FINAL_STATUSES,
  isFinalRefund,
  refundStatusFromGateway,
} from '../refunds/refund.state';
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
  /** What may explain it, said in its attention reason (not stored with the item). */
  hint?: string;
}

async function absentAsNull<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof GatewayError && e.isAbsent) return null;
    throw e;
  }
}

const PAYOUT_FINALS: readonly string[] = PAYOUT_FINAL_STATUSES;

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
      {
        status: inv.status,
        unholdRequestedAt: inv.unhold_requested_at,
        holdExpiresAt: inv.hold_expires_at,
      },
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
        AND ((updated_at >= $2 AND updated_at < $3) OR status <> ALL($4::varchar[]))
      ORDER BY created_at, id`,
    [paymentShop, day.from, day.to, REFUND_FINAL_STATUSES],
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
    // A refund the gateway holds for this invoice under an id we do not know: missing ours.
    const known = new Set(
      (
        (await ds.query(`SELECT shop_refund_id FROM refunds WHERE gateway_invoice_id = $1`, [
          invoiceId,
        ])) as { shop_refund_id: string }[]
      ).map((r) => r.shop_refund_id),
    );
    for (const t of theirs) {
      if (known.has(t.shop_refund_id)) continue;
      items.push({
        kind: 'missing_ours',
        objectType: 'refund',
        objectId: t.shop_refund_id,
        currency: ours[0].currency,
        ours: null,
        gateway: refundStatusFromGateway(t.status) ?? String(t.status),
        amount: String(t.amount),
      });
    }
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

  // Every payout that changed in the day or is not final, sent or with a gateway id: by its
  // withdraw id, or by our id when the gateway never gave one; read through the record rule
  // every payout path uses (a record that is not this payout's is an item, never agreement).
  const payouts = (await ds.query(
    `SELECT id, shop_payment_id, status, withdraw_id::text AS withdraw_id, shop_write_off::text AS shop_write_off,
            amount::text AS amount, amount_type, shop_currency, payway, account_masked,
            (call_lease_until IS NOT NULL AND call_lease_until > clock_now()) AS in_flight
       FROM payouts
      WHERE shop_id = $1 AND (withdraw_id IS NOT NULL OR sent_at IS NOT NULL)
        AND ((updated_at >= $2 AND updated_at < $3) OR NOT (status = ANY($4::varchar[])))
      ORDER BY created_at, id`,
    [payoutShop, day.from, day.to, PAYOUT_FINALS],
  )) as {
    id: string;
    shop_payment_id: string;
    status: PayoutStatus;
    withdraw_id: string | null;
    shop_write_off: string | null;
    amount: string;
    amount_type: 'ps_amount' | 'shop_amount';
    shop_currency: number;
    payway: string;
    account_masked: string;
    in_flight: boolean;
  }[];
  for (const p of payouts) {
    // A create on its way: the gateway may not have it yet; the next run asks.
    if (p.in_flight) continue;
    const record = await absentAsNull(() =>
      p.withdraw_id === null
        ? gateway.withdrawShopPaymentStatus(p.shop_payment_id)
        : gateway.withdrawStatus(Number(p.withdraw_id)),
    );
    const base = {
      objectType: 'payout' as const,
      objectId: p.shop_payment_id,
      currency: p.shop_currency,
      rowId: p.id,
      rowStatus: p.status,
    };
    if (record === null) {
      // Absent: a variance only for a payout the gateway must have (it gave an id, or ours is
      // final succeeded); an unknown outcome without an id is the poller's to settle.
      if (p.withdraw_id !== null || p.status === 'succeeded')
        items.push({ ...base, kind: 'missing_gateway', ours: p.status, gateway: null });
      continue;
    }
    const reading = readPayoutRecord(
      {
        shopPaymentId: p.shop_payment_id,
        amount: Amount.fromText(p.amount),
        amountType: p.amount_type,
        shopCurrency: p.shop_currency,
        payway: p.payway,
        accountMasked: p.account_masked,
      },
      record,
      config.payouts.status,
    );
    if (!reading.ours) {
      items.push({ ...base, kind: 'foreign_record', ours: p.status, gateway: reading.reason });
      continue;
    }
    const mapped = reading.mapped.status;
    for (const item of compareObject({
      objectType: 'payout',
      objectId: p.shop_payment_id,
      currency: p.shop_currency,
      ours: { status: p.status, final: payoutFinal(p.status), amount: p.shop_write_off },
      gateway: {
        status: mapped,
        final: payoutFinal(mapped),
        amount: record.shop_write_off == null ? null : String(record.shop_write_off),
      },
    }))
      items.push({ ...item, rowId: p.id, rowStatus: p.status });
  }
  return items;
}
