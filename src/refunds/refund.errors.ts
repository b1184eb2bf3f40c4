import { DomainError } from '../common/errors';
import type { Amount } from '../common/money';

/** The refunds that still count (not FAILED) plus this one would exceed what the payer paid. */
export class RefundExceedsPaidAmount extends DomainError {
  constructor(shopOrderId: string, paid: Amount, committed: Amount, requested: Amount) {
    super(
      'refund-exceeds-paid-amount',
      422,
      'Refund exceeds the paid amount',
      `invoice ${shopOrderId}: ${committed.toString()} of ${paid.toString()} is already refunded or being refunded; ${requested.toString()} more does not fit`,
      {
        paidAmount: paid.toString(),
        refundedOrPending: committed.toString(),
        requestedAmount: requested.toString(),
      },
    );
  }
}

/** A problem stored with the refund (response_body) so that a repeated request replays it. */
export interface StoredProblem {
  code: string;
  status: number;
  title: string;
  detail: string;
  extra: Record<string, unknown>;
}

export function storeProblem(err: DomainError): StoredProblem {
  return {
    code: err.code,
    status: err.status,
    title: err.title,
    detail: err.message,
    extra: err.extra,
  };
}

export function replayProblem(p: StoredProblem): DomainError {
  return new DomainError(p.code, p.status, p.title, p.detail, p.extra);
}
