/**
 * What the shop reads about an invoice's refunds (shared/API.md, invoice body), pure: the sums
 * the database keeps (SUCCESS and WAITING refunds) turned into the four view fields. Amounts are
 * exact and written with the currency's minor-unit digits ("0.00", never "0").
 */
import { Amount, moneyText } from '../common/money';
import type { InvoiceStatus } from './invoice.state';

/** How much of the invoice has been refunded for certain: nothing, some, or all of it. */
export type RefundProgress = 'none' | 'partial' | 'full';
export const REFUND_PROGRESS: readonly RefundProgress[] = ['none', 'partial', 'full'];

export interface RefundSums {
  /** Sum of SUCCESS refunds. */
  refundedAmount: string;
  /** Sum of WAITING refunds: sent (or being sent) and not settled yet. */
  refundPendingAmount: string;
  /** Sum of the disputes open, lost or accepted: held or taken back by the payer's bank. */
  disputedAmount: string;
  /**
   * What a new refund may still take: the amount less every refund that is not FAILED and every
   * dispute open, lost or accepted.
   */
  refundableAmount: string;
  refundStatus: RefundProgress;
}

/**
 * `refundableAmount` is the room the refund cap (fitsPaidAmount) leaves, by one rule for both
 * (refundableAmountOf, below): only a `succeeded` invoice can be refunded, so any other status
 * has none; it never goes below zero (an operator's
 * correction of a FAILED refund to SUCCESS may count more than the amount until the gateway's
 * books are looked at). `refundStatus` reads the SUCCESS sum only: `full` once it reaches the
 * amount, `partial` above zero, `none` at zero.
 */
export function refundSumsOf(inv: {
  amount: Amount;
  currency: number;
  status: InvoiceStatus;
  refundedAmount: Amount;
  refundPendingAmount: Amount;
  disputedAmount: Amount;
}): RefundSums {
  const refundable = refundableAmountOf(inv, [
    inv.refundedAmount,
    inv.refundPendingAmount,
    inv.disputedAmount,
  ]);
  return {
    refundedAmount: moneyText(inv.refundedAmount, inv.currency),
    refundPendingAmount: moneyText(inv.refundPendingAmount, inv.currency),
    disputedAmount: moneyText(inv.disputedAmount, inv.currency),
    refundableAmount: moneyText(refundable, inv.currency),
    refundStatus: refundProgressOf(inv.refundedAmount, inv.amount),
  };
}

/**
 * `full` once the SUCCESS sum reaches the amount, `partial` above zero, `none` at zero; nothing
 * refunded (most invoices) is told by the signs alone, without decimal arithmetic.
 */
function refundProgressOf(refunded: Amount, amount: Amount): RefundProgress {
  if (refunded.isZero()) return amount.isPositive() ? 'none' : 'full';
  return refunded.gte(amount) ? 'full' : refunded.isPositive() ? 'partial' : 'none';
}

/**
 * The refund sum rule, decided here once (the refund cap in src/refunds/refund.rules.ts, the
 * dispute cap in src/disputes/disputes.rules.ts and the invoice body above all call it): what a
 * new refund (or dispute) may still take of an invoice is nothing unless the invoice is
 * `succeeded`, else its amount less everything that counts (`counted`: the refunds SUCCESS and
 * WAITING, i.e. not FAILED, and the disputes open, lost or accepted), never below zero. Exact
 * decimals throughout.
 */
export function refundableAmountOf(
  inv: { amount: Amount; status: InvoiceStatus },
  counted: readonly Amount[],
): Amount {
  // Nothing counted (most invoices): the amount itself, without arithmetic; the very Amount the
  // subtraction makes when no counted zero has more digits than the amount.
  if (counted.every((a) => a.isZero() && a.scale <= inv.amount.scale))
    return inv.status === 'succeeded' && inv.amount.isPositive() ? inv.amount : Amount.zero();
  const left = inv.amount.minus(Amount.sum([...counted]));
  return inv.status === 'succeeded' && left.isPositive() ? left : Amount.zero();
}
