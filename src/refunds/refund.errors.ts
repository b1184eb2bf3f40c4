import { DomainError } from '../common/errors';
import { Amount } from '../common/money';

/**
 * The refunds that still count (not FAILED), the disputes that hold or took back part of the
 * payment (open, lost or accepted) and this refund would exceed what the payer paid. Without
 * disputes it is `refund-exceeds-paid-amount`; with any, `refund-exceeds-refundable`, naming
 * `disputedAmount` beside the same figures, so the shop sees what took the room.
 */
export class RefundExceedsPaidAmount extends DomainError {
  constructor(
    shopOrderId: string,
    paid: Amount,
    committed: Amount,
    requested: Amount,
    disputed: Amount = Amount.zero(),
  ) {
    const figures = {
      paidAmount: paid.toString(),
      refundedOrPending: committed.toString(),
      requestedAmount: requested.toString(),
      disputedAmount: disputed.toString(),
    };
    if (disputed.isPositive()) {
      super(
        'refund-exceeds-refundable',
        422,
        'Refund exceeds the refundable amount',
        `invoice ${shopOrderId}: of ${paid.toString()} paid, ${committed.toString()} is already refunded or being refunded and ${disputed.toString()} is disputed (open, lost or accepted); ${requested.toString()} more does not fit`,
        figures,
      );
      return;
    }
    super(
      'refund-exceeds-paid-amount',
      422,
      'Refund exceeds the paid amount',
      `invoice ${shopOrderId}: ${committed.toString()} of ${paid.toString()} is already refunded or being refunded; ${requested.toString()} more does not fit`,
      figures,
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
