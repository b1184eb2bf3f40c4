import { DomainError, GatewayFailure } from '../common/errors';
import type { Amount } from '../common/money';
import { currencyName } from '../common/currency';
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

/** The dual-approval rule: one admin key counts once, however often it approves. */
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
/** Four eyes (payout.rules.ts `mayApprove`): the creating key never approves its own payout. */
export class SelfApproval extends DomainError {
  constructor(shopPaymentId: string) {
    super(
      'self-approval',
      403,
      'The creating key cannot approve',
      `payout ${shopPaymentId} was created (or its batch submitted) with this key: another admin key must approve it`,
    );
  }
}

export class ApproverUnknown extends DomainError {
  constructor() {
    super('forbidden', 403, 'Forbidden', 'an approval or rejection needs an admin key');
  }
}

/** Which daily cap a create would pass. */
export type CapName = 'daily' | 'recipient-daily';

/**
 * A create that would pass PAYOUT_DAILY_CAP or PAYOUT_RECIPIENT_DAILY_CAP: nothing was written
 * or sent. The figures are exact decimal strings in the shop currency.
 */
export class CapExceeded extends DomainError {
  constructor(
    cap: CapName,
    currency: number,
    figures: { limit: Amount; used: Amount; remaining: Amount; requested: Amount },
  ) {
    const variable = cap === 'daily' ? 'PAYOUT_DAILY_CAP' : 'PAYOUT_RECIPIENT_DAILY_CAP';
    const whose = cap === 'daily' ? 'all payouts' : "this recipient's payouts";
    super(
      'cap-exceeded',
      422,
      'Daily payout cap exceeded',
      `the ${cap} cap (${variable}) of ${figures.limit.toString()} in ${currencyName(currency)} for ${whose} of the UTC day has ${figures.remaining.toString()} left; this payout counts ${figures.requested.toString()}`,
      {
        cap,
        currency,
        limit: figures.limit.toString(),
        used: figures.used.toString(),
        remaining: figures.remaining.toString(),
        requested: figures.requested.toString(),
      },
    );
  }
}

/**
 * The agent shop's available balance, less the write-offs of payouts it has not yet seen, does
 * not cover this payout's write-off: nothing was sent. Figures in the shop currency.
 */
export class InsufficientBalance extends DomainError {
  constructor(currency: number, figures: { available: Amount; inFlight: Amount; needed: Amount }) {
    const free = figures.available.minus(figures.inFlight);
    super(
      'insufficient-balance',
      422,
      'Insufficient balance',
      `the agent shop's available balance in ${currencyName(currency)} is ${figures.available.toString()}, of which ${figures.inFlight.toString()} is taken by payouts in flight; this payout writes off ${figures.needed.toString()}`,
      {
        currency,
        available: figures.available.toString(),
        inFlight: figures.inFlight.toString(),
        needed: figures.needed.toString(),
        shortBy: figures.needed.minus(free).toString(),
      },
    );
  }
}

/**
 * A `ps_amount` payout whose write-off withdraw/try could not quote now, while an approval
 * threshold, a daily cap or the balance check of its currency needs it: nothing is stored or
 * sent (weighing the amount instead, the lower bound, could send without approval or past a
 * cap). Retryable: the same request later is quoted again. A refusal the gateway says is fatal
 * is a `gateway-error` 422 instead (the create would be refused the same way).
 */
export class WriteOffUnquoted extends DomainError {
  constructor(
    shopPaymentId: string,
    gateway: { errorCode: number | null; message: string | null; fatal: boolean | null },
  ) {
    super(
      'write-off-unquoted',
      503,
      'Write-off could not be quoted',
      `payout ${shopPaymentId}: withdraw/try could not quote its write-off now, and the approval thresholds, daily caps or balance check of its currency are judged on it; nothing was stored or sent: repeat the request later`,
      {
        gatewayErrorCode: gateway.errorCode,
        gatewayMessage: gateway.message,
        fatal: gateway.fatal,
      },
    );
  }
}

/** What withdraw/try's failure to quote a write-off the controls need means for the caller. */
export function unquotedFailure(shopPaymentId: string, err: unknown): DomainError {
  if (err instanceof GatewayError && err.fatal === true)
    return gatewayFailure('withdraw/try', err) as DomainError;
  return new WriteOffUnquoted(
    shopPaymentId,
    err instanceof GatewayError
      ? { errorCode: err.errorCode, message: err.gatewayMessage, fatal: err.fatal }
      : { errorCode: null, message: null, fatal: null },
  );
}
