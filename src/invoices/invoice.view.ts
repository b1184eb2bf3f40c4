import { alphabeticCurrency } from '../common/currency';
import { moneyText, moneyTextOrNull } from '../common/money';
import type { InvoiceEntity, RedirectData } from './invoice.entity';
import { refundSumsOf, type RefundProgress } from './invoice-refund-sums';
import type { InvoiceStatus } from './invoice.state';

/** The invoice as the shop sees it (shared/API.md). Amounts are decimal strings, times ISO UTC. */
export interface InvoiceView {
  shopOrderId: string;
  invoiceId: string | null;
  paymentId: string | null;
  status: InvoiceStatus;
  gatewayStatus: number | null;
  amount: string;
  currency: number;
  /** ISO 4217 alphabetic code of `currency` (null when ISO 4217 does not list the number). */
  currencyCode: string | null;
  payway: string;
  description: string | null;
  twoStep: boolean;
  /** The shop's own references, as given at create ({} when none). */
  metadata: Record<string, string>;
  /** What the payer pays, fees included, in psCurrency (the gateway's client_price); null until known. */
  payerPrice: string | null;
  psCurrency: number | null;
  /** SUCCESS refunds. */
  refundedAmount: string;
  /** WAITING refunds. */
  refundPendingAmount: string;
  /** Disputes open, lost or accepted. */
  disputedAmount: string;
  /** amount − every refund not FAILED − disputes open, lost or accepted; zero unless succeeded. */
  refundableAmount: string;
  refundStatus: RefundProgress;
  redirect: RedirectData | null;
  payUrl: string | null;
  paymentToken: { account: string | null; expiresAt: string | null; token?: string } | null;
  createdAt: string;
  updatedAt: string;
  processedAt: string | null;
  /** When the gateway lets the hold lapse (invoice/check's expires_at); null when not known. */
  holdExpiresAt: string | null;
  /** An operator must look (shared/API.md, Admin: attention). */
  needsAttention: boolean;
  attentionReason: string | null;
  /** The payment link whose payer's form made it (`plink_…`); absent for the shop's own invoices. */
  paymentLinkId?: string;
}

/**
 * The invoice's properties the view reads (toInvoiceView, its refund sums, the admin's token): a
 * read that only answers the view selects these columns and no others (VIEWS_BY_SHOP_ORDER_IDS),
 * so a row's stored answer, fingerprint and claim are not parsed for every GET. The
 * type below makes the compiler refuse a view that reads anything else.
 */
export const INVOICE_VIEW_FIELDS = [
  'id',
  'shopOrderId',
  'invoiceId',
  'paymentId',
  'status',
  'gatewayStatus',
  'amount',
  'currency',
  'payway',
  'description',
  'twoStep',
  'metadata',
  'payerPrice',
  'psCurrency',
  'refundedAmount',
  'refundPendingAmount',
  'disputedAmount',
  'redirect',
  'payToken',
  'paymentTokenInfo',
  'paymentTokenSealed',
  'createdAt',
  'updatedAt',
  'processedAt',
  'holdExpiresAt',
  'needsAttention',
  'attentionReason',
  'paymentLinkId',
] as const satisfies ReadonlyArray<keyof InvoiceEntity>;

/** What the view is built from: a whole invoice, or the view read's columns of one. */
export type InvoiceViewSource = Pick<InvoiceEntity, (typeof INVOICE_VIEW_FIELDS)[number]>;

/**
 * `payUrl` carries the invoice's unguessable pay token; null when the payer has nowhere to go.
 * The raw payment token is shown to admins only (opened by `revealToken`).
 */
export function toInvoiceView(
  inv: InvoiceViewSource,
  publicBaseUrl: string,
  opts: { admin?: boolean; revealToken?: () => string | null } = {},
): InvoiceView {
  const info = inv.paymentTokenInfo;
  const token = opts.admin && opts.revealToken ? opts.revealToken() : null;
  const hasToken =
    inv.paymentTokenSealed !== null ||
    (info !== null && (info.account !== undefined || info.expiresAt !== undefined));
  const view: InvoiceView = {
    shopOrderId: inv.shopOrderId,
    invoiceId: inv.invoiceId,
    paymentId: inv.paymentId,
    status: inv.status,
    gatewayStatus: inv.gatewayStatus,
    amount: moneyText(inv.amount, inv.currency),
    currency: inv.currency,
    currencyCode: alphabeticCurrency(inv.currency),
    payway: inv.payway,
    description: inv.description,
    twoStep: inv.twoStep,
    metadata: inv.metadata ?? {},
    payerPrice: moneyTextOrNull(inv.payerPrice, inv.psCurrency ?? inv.currency),
    psCurrency: inv.psCurrency,
    // The refund sums, written with the currency's minor-unit digits ("0.00", not "0").
    ...refundSumsOf(inv),
    redirect: inv.redirect,
    payUrl: inv.redirect ? payUrlOf(publicBaseUrl, inv.shopOrderId, inv.payToken) : null,
    paymentToken: hasToken
      ? {
          account: info?.account ?? null,
          expiresAt: info?.expiresAt ?? null,
          ...(token !== null ? { token } : {}),
        }
      : null,
    createdAt: inv.createdAt.toISOString(),
    updatedAt: inv.updatedAt.toISOString(),
    processedAt: inv.processedAt ? inv.processedAt.toISOString() : null,
    holdExpiresAt: inv.holdExpiresAt ? inv.holdExpiresAt.toISOString() : null,
    needsAttention: inv.needsAttention,
    attentionReason: inv.attentionReason ?? null,
    ...(inv.paymentLinkId ? { paymentLinkId: paymentLinkPublicId(inv.paymentLinkId) } : {}),
  };
  return view;
}

/** A payment link's public id: `plink_` and its row's uuid without dashes. */
export function paymentLinkPublicId(rowId: string): string {
  return `plink_${rowId.replace(/-/g, '')}`;
}

export function payUrlOf(publicBaseUrl: string, shopOrderId: string, payToken: string): string {
  return `${publicBaseUrl}/pay/${encodeURIComponent(shopOrderId)}?t=${payToken}`;
}
