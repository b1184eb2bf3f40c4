import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import {
  clearFlagOnFinal,
  raiseAttention,
  watchMayFlag,
  type AttentionReason,
} from '../common/attention';
import { logger } from '../common/logger';
import { KeyRing } from '../common/key-ring';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService, toGatewayId } from '../gateway';
import type { PayoutRecord, WithdrawCreateResult } from '../gateway/gateway.types';
import { ask, type CallAnswer } from '../jobs/gateway-operation';
import { accountContext } from './account-seal';
import { registerSnapshotLoader, shopEventTypeOf } from '../audit/shop-events';
import { updateWithEvent } from '../audit/event-write';
import { rememberForCommit } from '../audit/shop-event-snapshots';
import { toPayoutView } from './dto/payout.view';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { amountOf } from './payout-quiet-round';
import * as acceptOp from './operations/accept-payout';
import * as pollOp from './operations/poll-payout';
import * as recheckOp from './operations/recheck-payout';
import * as sendOp from './operations/send-payout';
import { clock } from '../common/clock';

registerSnapshotLoader('payout', async (m, ref) => {
  const p = await m.findOneOrFail(PayoutEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { shopPaymentId: ref.objectId },
  });
  return { ...toPayoutView(p) };
});
import { payoutWatchStep, readPayoutRecord } from './payout.rules';
import { decideTransition, isFinal, isPolled } from './payout.state';

/** What is sealed in `account_sealed`: enough to repeat the create after "absent". */
export interface SealedRecipient {
  account: string;
  accountDetails?: Record<string, string>;
}

type PayoutChanges = Partial<
  Pick<
    PayoutEntity,
    | 'withdrawId'
    | 'gatewayStatus'
    | 'psCurrency'
    | 'payeeReceive'
    | 'shopWriteOff'
    | 'errorCode'
    | 'gatewayMessage'
  >
>;

export { NO_CALL } from './payout-call';

/** A method's parameters after the processor it is given (operations/*.ts take it first). */
type Rest<F> = F extends (core: never, ...a: infer A) => unknown ? A : never;

/**
 * Everything that decides what the gateway's answers about one payout mean and writes them,
 * always on a row the caller has locked inside a short transaction (phase 3). The gateway calls
 * themselves are made by the callers with no transaction and no connection held (phase 2).
 * Used by the create route, the poller and the admin routes. Each operation lives in its own
 * file under operations/ (send, poll, accept, recheck); the methods here hand over to them.
 *
 * Never paid twice: a create is sent for a new row, or after `withdraw/shop_payment_status` said
 * "absent" — at most PAYOUT_MAX_CREATES times in all, never twice within two gateway time-outs,
 * always with the same `shop_payment_id`, which the gateway's duplicate protection keeps unique.
 */
@Injectable()
export class PayoutProcessor {
  /** Rows whose next poll time this round's answer chose (see keepOrNext). */
  readonly chosenByAnswer = new WeakSet<PayoutEntity>();
  readonly log = logger.child({ component: 'payouts' });

  constructor(
    @Inject(APP_CONFIG) readonly config: AppConfig,
    readonly gateway: GatewayService,
    readonly audit: AuditService,
    readonly keys: KeyRing,
  ) {}

  /** Sealed for one row: the ciphertext opens only as `account_sealed` of payout `payoutId`. */
  sealRecipient(payoutId: string, recipient: SealedRecipient): string {
    return this.keys.seal(JSON.stringify(recipient), accountContext(payoutId));
  }

  unsealRecipient(p: PayoutEntity): SealedRecipient {
    return JSON.parse(this.keys.unseal(p.accountSealed, accountContext(p.id))) as SealedRecipient;
  }

  /** The row and its lock, for the rest of the caller's (short) transaction. */
  lock(
    manager: EntityManager,
    where: { id: string } | { shopId: number; shopPaymentId: string },
  ): Promise<PayoutEntity | null> {
    return manager.findOne(PayoutEntity, { where, lock: { mode: 'pessimistic_write' } });
  }

  /** Phase 2 of a create: the `withdraw/create` request of the row and its recipient. */
  withdraw(
    p: Pick<
      PayoutEntity,
      'shopPaymentId' | 'amount' | 'amountType' | 'shopCurrency' | 'payway' | 'description'
    >,
    recipient: SealedRecipient,
  ): Promise<WithdrawCreateResult> {
    return this.gateway.createWithdraw({
      shop_payment_id: p.shopPaymentId,
      amount: p.amount.toString(),
      amount_type: p.amountType,
      shop_currency: p.shopCurrency,
      payway: p.payway,
      account: recipient.account,
      account_details: recipient.accountDetails,
      description: p.description ?? undefined,
    });
  }

  /** Phase 2 of a poll: by withdraw id when known, else by shop_payment_id. */
  async askStatus(
    p: Pick<PayoutEntity, 'withdrawId' | 'shopPaymentId'>,
  ): Promise<{ via: string; answer: CallAnswer<PayoutRecord> }> {
    const via = p.withdrawId === null ? 'withdraw/shop_payment_status' : 'withdraw/status';
    const answer = await ask(() =>
      p.withdrawId === null
        ? this.gateway.withdrawShopPaymentStatus(p.shopPaymentId)
        : this.gateway.withdrawStatus(toGatewayId(p.withdrawId)),
    );
    return { via, answer };
  }

  /** applyCreate: operations/send-payout.ts. */
  applyCreate(...a: Rest<typeof sendOp.applyCreate>): ReturnType<typeof sendOp.applyCreate> {
    return sendOp.applyCreate(this, ...a);
  }

  /** applyStatus: operations/poll-payout.ts. */
  applyStatus(...a: Rest<typeof pollOp.applyStatus>): ReturnType<typeof pollOp.applyStatus> {
    return pollOp.applyStatus(this, ...a);
  }

  /** The gateway's record governs: ids, exact amounts, mapped status — unless it is not ours. */
  async applyRecord(
    m: EntityManager,
    p: PayoutEntity,
    record: PayoutRecord | WithdrawCreateResult,
    cause: AuditCause,
    call: string,
  ): Promise<void> {
    const reading = readPayoutRecord(p, record, this.config.payouts.status);
    if (!reading.ours) {
      // After a restore or a reused id the gateway may hold another payout under our id: adopting
      // its status could report money that never moved. Nothing changes; an operator decides.
      await this.raise(m, p, 'mismatch', `${call} record is not ours: ${reading.reason}`, cause);
      return;
    }
    const mapped = reading.mapped;
    if (!mapped.known) {
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, gatewayStatus: record.status },
        'unknown payout status number: treated as not final',
      );
    }
    const errorCode =
      'error_code' in record && typeof record.error_code === 'number' && record.error_code > 0
        ? record.error_code
        : null;
    await this.write(
      m,
      p,
      mapped.status,
      cause,
      { call, gatewayStatus: record.status },
      {
        withdrawId: String(record.id),
        gatewayStatus: record.status,
        psCurrency: record.ps_currency ?? p.psCurrency,
        payeeReceive: amountOf(record.payee_receive) ?? p.payeeReceive,
        shopWriteOff: amountOf(record.shop_write_off) ?? p.shopWriteOff,
        // The record governs: an earlier create error no longer describes the payout.
        errorCode,
        ...(errorCode === null ? { gatewayMessage: null } : {}),
      },
    );
    if (p.lastError !== null) await m.update(PayoutEntity, { id: p.id }, { lastError: null });
    await this.settleFlag(m, p, call);
  }

  /**
   * A final gateway status clears a "not final yet" flag (deadline, absent, ...), audited with
   * cause gateway in the same transaction; a disagreement stays for an operator.
   */
  async settleFlag(m: EntityManager, p: PayoutEntity, call: string): Promise<void> {
    if (!isFinal(p.status)) return;
    await clearFlagOnFinal(
      m,
      { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
      p,
      { call },
    );
  }

  /**
   * The watch's own flag: past the poll deadline the status is `needs_attention` (the
   * contract's word) and the payout is still polled; past the watch end it is no longer polled.
   * Never hides a flag that says more (see watchMayFlag).
   */
  async flagWatch(
    m: EntityManager,
    p: PayoutEntity,
    flag: 'deadline' | 'watch_ended' | 'poll_failing',
    detail: string,
    cause: AuditCause,
  ): Promise<void> {
    await this.write(m, p, 'needs_attention', cause, { reason: detail });
    if (!watchMayFlag(p, flag)) return;
    await raiseAttention(
      m,
      { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
      flag,
      detail,
      cause,
    );
    p.needsAttention = true;
    p.attentionReason = `${flag}: ${detail}`;
  }

  /**
   * Attention for a payout: the flag and reason (audited), and the status `needs_attention`.
   * The payout stays polled: a flag never stops the watch.
   */
  async raise(
    m: EntityManager,
    p: PayoutEntity,
    reason: AttentionReason,
    detail: string,
    cause: AuditCause,
  ): Promise<void> {
    await this.write(m, p, 'needs_attention', cause, { reason: detail });
    await raiseAttention(
      m,
      { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: p.status },
      reason,
      detail,
      cause,
    );
    p.needsAttention = true;
    p.attentionReason = `${reason}: ${detail}`;
  }

  /**
   * Writes the status (if the state machine allows it) and the data, audits the change, and
   * stops polling at a final status. A final payout is never changed.
   */
  async write(
    m: EntityManager,
    p: PayoutEntity,
    to: PayoutStatus,
    cause: AuditCause,
    details: Record<string, unknown>,
    changes: PayoutChanges = {},
  ): Promise<void> {
    const from = p.status;
    const decision = decideTransition(from, to);
    if (!decision.allowed && decision.reason === 'final') {
      if (to !== from && to !== 'needs_attention' && isFinal(to)) {
        // A final answer that contradicts ours: money state kept, an operator told.
        await raiseAttention(
          m,
          { object: 'payout', id: p.id, shopId: p.shopPaymentId, status: from },
          'contradiction',
          `${String(details.call ?? 'gateway')} says ${to}, the payout is ${from}`,
          cause,
        );
      }
      return;
    }
    // needs_attention -> processing is expected (a reconcile still finds it open): not worth a warning.
    if (!decision.allowed && decision.reason === 'not_allowed' && from !== 'needs_attention') {
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, from, to },
        'payout transition not allowed; status kept',
      );
    }
    const status = decision.allowed ? to : from;
    const gatewayStatusChanged =
      changes.gatewayStatus !== undefined && changes.gatewayStatus !== p.gatewayStatus;
    const all: Partial<PayoutEntity> = {
      ...changes,
      status,
      ...(isFinal(status) ? { finishedAt: clock.date(), nextPollAt: null } : {}),
    };
    if (status === from && !gatewayStatusChanged) {
      // Amount's private fields defeat TypeORM's deep-partial type; the transformer writes it.
      await m.update(PayoutEntity, { id: p.id }, all as QueryDeepPartialEntity<PayoutEntity>);
      Object.assign(p, all);
      return;
    }
    // The row and its audit entry / shop event in one statement, as for invoices
    // and refunds; the event carries the payout as this change leaves it (the row is locked),
    // and ShopEventSnapshots reads it again just before commit.
    Object.assign(p, all);
    const type = shopEventTypeOf({ entityType: 'payout', fromStatus: from, toStatus: status });
    const data = type === null ? null : { ...toPayoutView(p) };
    const { eventId } = await updateWithEvent(m, {
      table: 'payouts',
      target: PayoutEntity,
      rowId: p.id,
      changes: all,
      // Nothing of the written row is read back.
      returning: [],
      event: {
        entityType: 'payout',
        entityId: p.shopPaymentId,
        fromStatus: from,
        toStatus: status,
        cause,
        details,
        type,
        data,
      },
    });
    if (data !== null)
      rememberForCommit(m, {
        eventId,
        objectType: 'payout',
        ref: { rowId: p.id, objectId: p.shopPaymentId },
        data,
      });
  }

  /** checkOnce: operations/poll-payout.ts. */
  checkOnce(...a: Rest<typeof pollOp.checkOnce>): ReturnType<typeof pollOp.checkOnce> {
    return pollOp.checkOnce(this, ...a);
  }

  /** recordStatus: operations/poll-payout.ts. */
  recordStatus(...a: Rest<typeof pollOp.recordStatus>): ReturnType<typeof pollOp.recordStatus> {
    return pollOp.recordStatus(this, ...a);
  }

  /** finishQuietRounds: operations/poll-payout.ts. */
  finishQuietRounds(
    ...a: Rest<typeof pollOp.finishQuietRounds>
  ): ReturnType<typeof pollOp.finishQuietRounds> {
    return pollOp.finishQuietRounds(this, ...a);
  }

  /** finishRound: operations/poll-payout.ts. */
  finishRound(...a: Rest<typeof pollOp.finishRound>): ReturnType<typeof pollOp.finishRound> {
    return pollOp.finishRound(this, ...a);
  }

  /**
   * A poll time set sooner by this round's answer (duplicate: ask at once) is kept. The row's
   * own due time is not: it is the time that made this round due, already past, and keeping it
   * would poll the payout again at every tick.
   */
  keepOrNext(p: PayoutEntity, due: Date | null = this.intervalFromNow()): Date | null {
    if (!isPolled(p.status) || due === null) return null;
    const chosen = this.chosenByAnswer.has(p) ? p.nextPollAt : null;
    return chosen !== null && chosen < due ? chosen : due;
  }

  watchStep(p: PayoutEntity) {
    return payoutWatchStep({
      now: clock.date(),
      sentAt: p.sentAt,
      createdAt: p.createdAt,
      pollDeadline: p.pollDeadline,
      pollIntervalS: this.config.payouts.pollIntervalS,
      watch: this.config.watch,
    });
  }

  /** recordFailure: operations/poll-payout.ts. */
  recordFailure(...a: Rest<typeof pollOp.recordFailure>): ReturnType<typeof pollOp.recordFailure> {
    return pollOp.recordFailure(this, ...a);
  }

  /** accept: operations/accept-payout.ts. */
  accept(...a: Rest<typeof acceptOp.accept>): ReturnType<typeof acceptOp.accept> {
    return acceptOp.accept(this, ...a);
  }

  /** recheckFinal: operations/recheck-payout.ts. */
  recheckFinal(
    ...a: Rest<typeof recheckOp.recheckFinal>
  ): ReturnType<typeof recheckOp.recheckFinal> {
    return recheckOp.recheckFinal(this, ...a);
  }

  /** Next poll time for a row still owed an answer; null otherwise. */
  nextPollAt(p: PayoutEntity): Date | null {
    return isPolled(p.status) ? this.intervalFromNow() : null;
  }

  intervalFromNow(): Date {
    return new Date(clock.now() + this.config.payouts.pollIntervalS * 1000);
  }

  async setNextPoll(m: EntityManager, p: PayoutEntity, at: Date | null): Promise<void> {
    const next = isPolled(p.status) ? at : null;
    await m.update(PayoutEntity, { id: p.id }, { nextPollAt: next });
    p.nextPollAt = next;
    this.chosenByAnswer.add(p);
  }
}
