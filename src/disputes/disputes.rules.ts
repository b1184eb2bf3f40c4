/**
 * Every rule of a dispute, each a named function (the state machine lives in dispute.state.ts and
 * is re-exported here, so the next path finds it by name):
 *
 * - how much of an invoice may still be disputed: `disputableAmountOf`, the one refund sum rule
 *   (refundableAmountOf: paid − refunds not FAILED − disputes open, lost or accepted), so what
 *   is left to dispute and what is left to refund are one figure;
 * - whether a new dispute fits it: `fitsDisputable`;
 * - which disputes hold part of the payment: `countsAgainstPayment`; which are chargebacks:
 *   `isChargeback`;
 * - which status moves are allowed: `decideDisputeTransition`;
 * - what a repeat of a create is compared on: `disputeFacts`;
 * - what a create may say about time: `disputeTimesProblems`.
 */
import type { FieldError } from '../common/errors';
import { Amount } from '../common/money';
import { refundableAmountOf } from '../invoices/invoice-refund-sums';
import type { InvoiceStatus } from '../invoices/invoice.state';
import {
  CHARGEBACK_STATUSES,
  COUNTED_DISPUTE_STATUSES,
  type DisputeStatus,
} from './dispute.state';

export { decideDisputeTransition, isFinalDispute } from './dispute.state';

/** An open dispute holds its amount; a lost or accepted one took it: both count. */
export function countsAgainstPayment(status: DisputeStatus): boolean {
  return COUNTED_DISPUTE_STATUSES.includes(status);
}

/** A lost or accepted dispute: a chargeback, in the books. */
export function isChargeback(status: DisputeStatus): boolean {
  return CHARGEBACK_STATUSES.includes(status);
}

/**
 * What is left to dispute of an invoice: nothing unless it is `succeeded`, else its amount less
 * the refunds that count (`refunds`: not FAILED) and the other disputes that count (`disputes`:
 * open, lost or accepted), never below zero. The same rule as a refund's room.
 */
export function disputableAmountOf(
  inv: { amount: Amount; status: InvoiceStatus },
  refunds: readonly Amount[],
  disputes: readonly Amount[],
): Amount {
  return refundableAmountOf(inv, [...refunds, ...disputes]);
}

/** Would a new dispute of `amount` stay within what is left to dispute? Nothing never fits. */
export function fitsDisputable(
  inv: { amount: Amount; status: InvoiceStatus },
  refunds: readonly Amount[],
  disputes: readonly Amount[],
  amount: Amount,
): boolean {
  return amount.isPositive() && amount.lte(disputableAmountOf(inv, refunds, disputes));
}

/**
 * The facts a repeated create is compared on (by differingFields): the invoice, the amount by
 * value ("30.0" repeats "30.00"), the reason, the times as instants, the reference and the note.
 */
export function disputeFacts(d: {
  shopOrderId: string;
  amount: Amount;
  reason: string;
  reportedAt: Date;
  respondBy: Date | null;
  gatewayReference: string | null;
  note: string;
}): Record<string, unknown> {
  return {
    shopOrderId: d.shopOrderId,
    amount: d.amount.canonicalText(),
    reason: d.reason,
    reportedAt: d.reportedAt.toISOString(),
    respondBy: d.respondBy?.toISOString() ?? null,
    gatewayReference: d.gatewayReference,
    note: d.note,
  };
}

/**
 * A chargeback is reported in the past (the service's clock), and its deadline, when given, is
 * not before it was reported.
 */
export function disputeTimesProblems(
  reportedAt: Date,
  respondBy: Date | null,
  now: Date,
): FieldError[] {
  const errors: FieldError[] = [];
  if (reportedAt.getTime() > now.getTime())
    errors.push({ field: 'reportedAt', message: 'must not be in the future' });
  if (respondBy !== null && respondBy.getTime() < reportedAt.getTime())
    errors.push({ field: 'respondBy', message: 'must not be before reportedAt' });
  return errors;
}
