import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuditCause } from '../audit/audit-event.entity';
import type { PayoutEntity, PayoutStatus } from './payout.entity';
import { write } from './payout-transitions';
import * as acceptOp from './operations/accept-payout';
import { askStatus, lockPayout, PAYOUT_DEPS, type PayoutDeps } from './operations/payout-deps';
import * as pollOp from './operations/poll-payout';
import * as recheckOp from './operations/recheck-payout';
import * as sendOp from './operations/send-payout';

/** A function's parameters after the dependencies it is given (operations/*.ts take them first). */
type Rest<F> = F extends (d: never, ...a: infer A) => unknown ? A : never;

/**
 * The payout rounds other paths drive (the poller, the attention actions, batch cancels): what
 * decides what the gateway's answers about one payout mean and writes them, always on a row the
 * caller has locked inside a short transaction (phase 3). The gateway calls themselves are made
 * with no transaction and no connection held (phase 2). Each operation lives in its own file
 * under operations/ (send, poll, accept, recheck) and takes the module's PayoutDeps; the
 * methods here hand it over.
 *
 * Never paid twice: a create is sent for a new row, or after `withdraw/shop_payment_status` said
 * "absent" — at most PAYOUT_MAX_CREATES times in all, never twice within two gateway time-outs,
 * always with the same `shop_payment_id`, which the gateway's duplicate protection keeps unique.
 */
@Injectable()
export class PayoutProcessor {
  constructor(@Inject(PAYOUT_DEPS) private readonly d: PayoutDeps) {}

  /** The row and its lock, for the rest of the caller's (short) transaction. */
  lock(
    manager: EntityManager,
    where: { id: string } | { shopId: number; shopPaymentId: string },
  ): Promise<PayoutEntity | null> {
    return lockPayout(manager, where);
  }

  /** The payout's one write path: payout-transitions.ts. */
  write(
    m: EntityManager,
    p: PayoutEntity,
    to: PayoutStatus,
    cause: AuditCause,
    details: Record<string, unknown>,
  ): Promise<void> {
    return write(m, p, to, cause, details);
  }

  /** askStatus: operations/payout-deps.ts. */
  askStatus(...a: Rest<typeof askStatus>): ReturnType<typeof askStatus> {
    return askStatus(this.d, ...a);
  }

  /** applyCreate: operations/send-payout.ts. */
  applyCreate(...a: Rest<typeof sendOp.applyCreate>): ReturnType<typeof sendOp.applyCreate> {
    return sendOp.applyCreate(this.d, ...a);
  }

  /** applyStatus: operations/poll-payout.ts. */
  applyStatus(...a: Rest<typeof pollOp.applyStatus>): ReturnType<typeof pollOp.applyStatus> {
    return pollOp.applyStatus(this.d, ...a);
  }

  /** checkOnce: operations/poll-payout.ts. */
  checkOnce(
    dataSource: Parameters<typeof pollOp.checkOnce>[1],
    id: string,
    cause: AuditCause,
    opts: Parameters<typeof pollOp.checkOnce>[4],
  ): ReturnType<typeof pollOp.checkOnce> {
    return pollOp.checkOnce(this.d, dataSource, id, cause, opts, (...r) => this.recordStatus(...r));
  }

  /** recordStatus: operations/poll-payout.ts. */
  recordStatus(...a: Rest<typeof pollOp.recordStatus>): ReturnType<typeof pollOp.recordStatus> {
    return pollOp.recordStatus(this.d, ...a);
  }

  /** finishQuietRounds: operations/poll-payout.ts. */
  finishQuietRounds(
    ...a: Rest<typeof pollOp.finishQuietRounds>
  ): ReturnType<typeof pollOp.finishQuietRounds> {
    return pollOp.finishQuietRounds(this.d, ...a);
  }

  /** recordFailure: operations/poll-payout.ts. */
  recordFailure(...a: Rest<typeof pollOp.recordFailure>): ReturnType<typeof pollOp.recordFailure> {
    return pollOp.recordFailure(this.d, ...a);
  }

  /** accept: operations/accept-payout.ts. */
  accept(...a: Rest<typeof acceptOp.accept>): ReturnType<typeof acceptOp.accept> {
    return acceptOp.accept(this.d, ...a);
  }

  /** recheckFinal: operations/recheck-payout.ts. */
  recheckFinal(
    ...a: Rest<typeof recheckOp.recheckFinal>
  ): ReturnType<typeof recheckOp.recheckFinal> {
    return recheckOp.recheckFinal(this.d, ...a);
  }
}
