import { EntityManager } from 'typeorm';
import type { AuditCause } from '../../audit/audit-event.entity';
import { raiseAttention } from '../../common/attention';
import { GatewayError, isOutcomeUnknown } from '../../gateway';
import type { WithdrawCreateResult } from '../../gateway/gateway.types';
import { type CallAnswer } from '../../jobs/gateway-operation';
import { PayoutEntity } from '../payout.entity';
import { NO_CALL } from '../payout-call';
import {
  applyRecord,
  intervalFromNow,
  setNextPoll,
  settleFlag,
  write,
} from '../payout-transitions';
import { log, type PayoutDeps } from './payout-deps';
import { clock } from '../../common/clock';

/**
 * Sending a payout: phase 3 of `withdraw/create` (the answer written on the locked row). Phase 2,
 * the request itself, is `withdraw` (payout-deps.ts); the create and approval paths claim the call
 * and send it through sendClaimed (operations/create-payout.ts).
 */

/**
 * Phase 3 of a create (row locked): the record governs; "duplicate" means it exists (ask its
 * status at once); fatal → failed, but not for a repeated create (an earlier attempt's outcome
 * was not known: it may have been paid, so the payout stays unknown, flagged
 * `unsettled_recreate` and polled); non-fatal → processing; anything else is unknown and the
 * first status question waits at least one poll interval (a create still in flight at the
 * gateway would otherwise look absent and be sent again).
 */
export async function applyCreate(
  d: PayoutDeps,
  m: EntityManager,
  p: PayoutEntity,
  answer: CallAnswer<WithdrawCreateResult>,
  cause: AuditCause,
  /** The create attempt this answer belongs to (`create_attempts` when it was claimed). */
  attempt: number,
): Promise<void> {
  const call = 'withdraw/create';
  if (p.createAttempts !== attempt) {
    // A late answer: its lease ran out and another create (attempt p.createAttempts) has been
    // claimed since. Its claim is not ours to release, and a refusal or a lost answer of an
    // older attempt says nothing about the newer one; only a gateway record (the truth about
    // this id) is applied.
    log.warn(
      { shopPaymentId: p.shopPaymentId, attempt, current: p.createAttempts },
      'late withdraw/create answer of an earlier attempt',
    );
    if (answer.ok) await applyRecord(d, m, p, answer.value, cause, call);
    else
      await m.update(
        PayoutEntity,
        { id: p.id },
        {
          lastError: `${call} (attempt ${attempt}): ${(answer.err as Error).message}`.slice(0, 500),
        },
      );
    return;
  }
  await m.update(PayoutEntity, { id: p.id }, NO_CALL);
  Object.assign(p, NO_CALL);
  if (answer.ok) {
    await applyRecord(d, m, p, answer.value, cause, call);
    await setNextPoll(d, m, p, intervalFromNow(d));
    return;
  }
  const err = answer.err;
  const errorInfo =
    err instanceof GatewayError
      ? { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage }
      : { errorCode: null, gatewayMessage: (err as Error).message };
  if (err instanceof GatewayError && err.isDuplicate) {
    // The payout exists on the gateway: look it up, never create another.
    log.warn({ shopPaymentId: p.shopPaymentId }, 'withdraw/create: shop_payment_id already used');
    await write(m, p, 'unknown', cause, { call, duplicate: true }, errorInfo);
    await setNextPoll(d, m, p, clock.date());
    return;
  }
  if (err instanceof GatewayError && err.fatal === true && attempt > 1) {
    // The refusal speaks for this attempt only (a duplicate under another code, a balance
    // the first attempt reserved...): the status question settles the payout, never this.
    await write(
      m,
      p,
      'unknown',
      cause,
      { call, errorCode: err.errorCode, fatal: true, attempt },
      errorInfo,
    );
    await raiseAttention(
      m,
      { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
      'unsettled_recreate',
      `withdraw/create attempt ${attempt} refused (error ${err.errorCode}) while an earlier attempt's outcome is unknown`,
      cause,
    );
    p.needsAttention = true;
    await setNextPoll(d, m, p, intervalFromNow(d));
    return;
  }
  if (err instanceof GatewayError && err.fatal === true) {
    await write(m, p, 'failed', cause, { call, errorCode: err.errorCode, fatal: true }, errorInfo);
    await settleFlag(m, p, call);
    return;
  }
  if (err instanceof GatewayError && err.fatal === false) {
    // Non-fatal: the spec says poll the status (30 s, up to 2 h).
    await write(
      m,
      p,
      'processing',
      cause,
      { call, errorCode: err.errorCode, fatal: false },
      errorInfo,
    );
    await setNextPoll(d, m, p, intervalFromNow(d));
    return;
  }
  // Time-out, reset, an unknown code, or no connection: the payout may exist. Ask later, never resend blindly.
  await write(
    m,
    p,
    'unknown',
    cause,
    { call, outcomeUnknown: isOutcomeUnknown(err), error: (err as Error).name },
    errorInfo,
  );
  await setNextPoll(d, m, p, intervalFromNow(d));
}
