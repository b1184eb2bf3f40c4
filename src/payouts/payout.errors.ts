import { DomainError, GatewayFailure } from '../common/errors';
import { GatewayError, GatewayTransportError } from '../gateway';

/** A read-only gateway call (quote, account check, balance) that failed, as a problem. */
export function gatewayFailure(call: string, err: unknown): unknown {
  if (err instanceof GatewayError) {
    return new GatewayFailure(
      `${call} was refused by the gateway`,
      err.errorCode,
      err.gatewayMessage,
      err.fatal,
      err.fatal === true ? 422 : 502,
    );
  }
  if (err instanceof GatewayTransportError) {
    return new GatewayFailure(
      `${call} got no usable answer (${err.kind})`,
      null,
      null,
      null,
      err.kind === 'timeout' ? 504 : 502,
    );
  }
  return err;
}

/** The dual-approval rule (issue #27): one admin key counts once, however often it approves. */
export class SameApproverTwice extends DomainError {
  constructor(shopPaymentId: string) {
    super(
      'same-approver',
      409,
      'Approved by this key already',
      `payout ${shopPaymentId} needs two distinct admin keys to approve it: this key has already approved it; another admin key must give the second approval`,
    );
  }
}

/** Approve or reject on a payout that is not (any longer) awaiting approval. */
export class NotAwaitingApproval extends DomainError {
  constructor(shopPaymentId: string, currentStatus: string, action: 'approve' | 'reject') {
    super(
      'not-awaiting-approval',
      409,
      'Payout is not awaiting approval',
      `payout ${shopPaymentId} is ${currentStatus}: only a payout awaiting approval can be ${action === 'approve' ? 'approved' : 'rejected'}`,
      { currentStatus },
    );
  }
}

/** Approvals are recorded with the acting admin key's id: a call without one is refused. */
export class ApproverUnknown extends DomainError {
  constructor() {
    super('forbidden', 403, 'Forbidden', 'an approval or rejection needs an admin key');
  }
}
