import { DomainError } from '../common/errors';
import { Amount, moneyText } from '../common/money';

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
    /** The invoice's currency: the figures are written with its minor-unit digits. */
    currency?: number,
  ) {
    const text = (a: Amount): string => (currency === undefined ? a.toString() : moneyText(a, currency));
    const figures = {
      paidAmount: text(paid),
      refundedOrPending: text(committed),
      requestedAmount: text(requested),
      disputedAmount: text(disputed),
    };
    if (disputed.isPositive()) {
      super(
        'refund-exceeds-refundable',
        422,
        'Refund exceeds the refundable amount',
        `invoice ${shopOrderId}: of ${figures.paidAmount} paid, ${figures.refundedOrPending} is already refunded or being refunded and ${figures.disputedAmount} is disputed (open, lost or accepted); ${figures.requestedAmount} more does not fit`,
        figures,
      );
      return;
    }
    super(
      'refund-exceeds-paid-amount',
      422,
      'Refund exceeds the paid amount',
      `invoice ${shopOrderId}: ${figures.refundedOrPending} of ${figures.paidAmount} is already refunded or being refunded; ${figures.requestedAmount} more does not fit`,
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
