import { Inject, Injectable } from '@nestjs/common';
import { transactionFor, type By } from '../common/actor';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import {
  clearFlagOnFinal,
  raiseAttention,
  resolveAttention,
  watchMayFlag,
  WATCH_ENDED_DETAIL,
  type AttentionReason,
} from '../common/attention';
import { logger } from '../common/logger';
import { KeyRing } from '../common/key-ring';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayError, GatewayService, isOutcomeUnknown, toGatewayId } from '../gateway';
import type { PayoutRecord, WithdrawCreateResult } from '../gateway/gateway.types';
import { ask, recordAnswer, runGatewayOperation, type CallAnswer } from '../jobs/gateway-operation';
import { callLeaseSeconds } from '../jobs/in-flight';
import { INSTANCE_ID } from '../jobs/instance';
import { accountContext } from './account-seal';
import { registerSnapshotLoader, shopEventTypeOf } from '../audit/shop-events';
import { updateWithEvent } from '../audit/event-write';
import { rememberForCommit } from '../audit/shop-event-snapshots';
import { toPayoutView } from './dto/payout.view';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { amountOf } from './payout-quiet-round';

registerSnapshotLoader('payout', async (m, ref) => {
  const p = await m.findOneOrFail(PayoutEntity, {
    where: ref.rowId !== undefined ? { id: ref.rowId } : { shopPaymentId: ref.objectId },
  });
  return { ...toPayoutView(p) };
});
import { payoutWatchStep, readPayoutRecord } from './payout.rules';
import { decideRecreate, decideTransition, isFinal, isPolled, isUnsent } from './payout.state';

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

/** No gateway call in flight for the row. */
export const NO_CALL = { callOwner: null, callLeaseUntil: null } as const;

/**
 * Everything that decides what the gateway's answers about one payout mean and writes them,
 * always on a row the caller has locked inside a short transaction (phase 3). The gateway calls
 * themselves are made by the callers with no transaction and no connection held (phase 2).
 * Used by the create route, the poller and the admin routes.
 *
 * Never paid twice: a create is sent for a new row, or after `withdraw/shop_payment_status` said
 * "absent" — at most PAYOUT_MAX_CREATES times in all, never twice within two gateway time-outs,
 * always with the same `shop_payment_id`, which the gateway's duplicate protection keeps unique.
 */
@Injectable()
export class PayoutProcessor {
  /** Rows whose next poll time this round's answer chose (see keepOrNext). */
  private readonly chosenByAnswer = new WeakSet<PayoutEntity>();
  private readonly log = logger.child({ component: 'payouts' });

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gateway: GatewayService,
    private readonly audit: AuditService,
    private readonly keys: KeyRing,
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

  /**
   * Phase 3 of a create (row locked): the record governs; "duplicate" means it exists (ask its
   * status at once); fatal → failed, but not for a repeated create (an earlier attempt's outcome
   * was not known: it may have been paid, so the payout stays unknown, flagged
   * `unsettled_recreate` and polled); non-fatal → processing; anything else is unknown and the
   * first status question waits at least one poll interval (a create still in flight at the
   * gateway would otherwise look absent and be sent again).
   */
  async applyCreate(
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
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, attempt, current: p.createAttempts },
        'late withdraw/create answer of an earlier attempt',
      );
      if (answer.ok) await this.applyRecord(m, p, answer.value, cause, call);
      else
        await m.update(
          PayoutEntity,
          { id: p.id },
          {
            lastError: `${call} (attempt ${attempt}): ${(answer.err as Error).message}`.slice(
              0,
              500,
            ),
          },
        );
      return;
    }
    await m.update(PayoutEntity, { id: p.id }, NO_CALL);
    Object.assign(p, NO_CALL);
    if (answer.ok) {
      await this.applyRecord(m, p, answer.value, cause, call);
      await this.setNextPoll(m, p, this.intervalFromNow());
      return;
    }
    const err = answer.err;
    const errorInfo =
      err instanceof GatewayError
        ? { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage }
        : { errorCode: null, gatewayMessage: (err as Error).message };
    if (err instanceof GatewayError && err.isDuplicate) {
      // The payout exists on the gateway: look it up, never create another.
      this.log.warn(
        { shopPaymentId: p.shopPaymentId },
        'withdraw/create: shop_payment_id already used',
      );
      await this.write(m, p, 'unknown', cause, { call, duplicate: true }, errorInfo);
      await this.setNextPoll(m, p, new Date());
      return;
    }
    if (err instanceof GatewayError && err.fatal === true && attempt > 1) {
      // The refusal speaks for this attempt only (a duplicate under another code, a balance
      // the first attempt reserved...): the status question settles the payout, never this.
      await this.write(
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
      await this.setNextPoll(m, p, this.intervalFromNow());
      return;
    }
    if (err instanceof GatewayError && err.fatal === true) {
      await this.write(
        m,
        p,
        'failed',
        cause,
        { call, errorCode: err.errorCode, fatal: true },
        errorInfo,
      );
      await this.settleFlag(m, p, call);
      return;
    }
    if (err instanceof GatewayError && err.fatal === false) {
      // Non-fatal: the spec says poll the status (30 s, up to 2 h).
      await this.write(
        m,
        p,
        'processing',
        cause,
        { call, errorCode: err.errorCode, fatal: false },
        errorInfo,
      );
      await this.setNextPoll(m, p, this.intervalFromNow());
      return;
    }
    // Time-out, reset, an unknown code, or no connection: the payout may exist. Ask later, never resend blindly.
    await this.write(
      m,
      p,
      'unknown',
      cause,
      { call, outcomeUnknown: isOutcomeUnknown(err), error: (err as Error).name },
      errorInfo,
    );
    await this.setNextPoll(m, p, this.intervalFromNow());
  }

  /**
   * Phase 3 of a status question (row locked). A record governs (unless it is not ours);
   * "absent" may allow one more create, which this claims (attempt, time, lease) and returns
   * 'create' for the caller to send after commit; past the cap the payout goes to an operator.
   */
  async applyStatus(
    m: EntityManager,
    p: PayoutEntity,
    via: string,
    answer: CallAnswer<PayoutRecord>,
    cause: AuditCause,
    mayCreate: boolean,
  ): Promise<'create' | 'done'> {
    if (answer.ok) {
      await this.applyRecord(m, p, answer.value, cause, via);
      return 'done';
    }
    const err = answer.err;
    if (!(err instanceof GatewayError && err.isAbsent && via === 'withdraw/shop_payment_status')) {
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, via, err: (err as Error).message },
        'payout status failed; asking again later',
      );
      await m.update(
        PayoutEntity,
        { id: p.id },
        { lastError: `${via}: ${(err as Error).message}` },
      );
      return 'done';
    }
    // Locked now: a payout settled, or given a gateway id, since it was read is not created again.
    if (isFinal(p.status) || p.withdrawId !== null) return 'done';
    const decision = decideRecreate({
      now: Date.now(),
      createAttempts: p.createAttempts,
      lastCreateAt: p.lastCreateAt?.getTime() ?? null,
      maxCreates: this.config.payoutMaxCreates,
      gatewayTimeoutMs: this.config.gateway.timeoutMs,
      pollIntervalMs: this.config.payouts.pollIntervalS * 1000,
      pollDeadline: p.pollDeadline.getTime(),
    });
    if (decision === 'cap') {
      await this.raise(m, p, 'create_cap', `absent after ${p.createAttempts} creates`, cause);
      return 'done';
    }
    if (decision === 'late') {
      await this.flagWatch(m, p, 'deadline', 'absent at the poll deadline: not sent again', cause);
      return 'done';
    }
    // A flagged payout (e.g. a repeat refused while an earlier attempt is unknown) is never
    // created again by itself: an operator decides.
    if (decision === 'wait' || !mayCreate || p.needsAttention) return 'done';
    this.log.warn(
      { shopPaymentId: p.shopPaymentId, attempts: p.createAttempts },
      'payout absent on the gateway: repeating the create',
    );
    const claim = {
      createAttempts: p.createAttempts + 1,
      lastCreateAt: new Date(),
      callOwner: INSTANCE_ID,
      callStartedAt: new Date(),
      callLeaseUntil: new Date(Date.now() + callLeaseSeconds(this.config.gateway.timeoutMs) * 1000),
    };
    await m.update(PayoutEntity, { id: p.id }, claim);
    Object.assign(p, claim);
    return 'create';
  }

  /** The gateway's record governs: ids, exact amounts, mapped status — unless it is not ours. */
  private async applyRecord(
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
   * cause gateway in the same transaction (issue #22); a disagreement stays for an operator.
   */
  private async settleFlag(m: EntityManager, p: PayoutEntity, call: string): Promise<void> {
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
  private async flagWatch(
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
   * The payout stays polled: a flag never stops the watch (issue #22).
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
      ...(isFinal(status) ? { finishedAt: new Date(), nextPollAt: null } : {}),
    };
    if (status === from && !gatewayStatusChanged) {
      // Amount's private fields defeat TypeORM's deep-partial type; the transformer writes it.
      await m.update(PayoutEntity, { id: p.id }, all as QueryDeepPartialEntity<PayoutEntity>);
      Object.assign(p, all);
      return;
    }
    // The row and its audit entry / shop event in one statement (issue #23), as for invoices
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

  /**
   * One status round for a payout, in atomic phases: read the row, ask the gateway with nothing
   * held, write the answer under a short lock (recordStatus). `owner`: the poller's lease (a row
   * taken over by another instance is left alone). Returns false when the row was not ours to poll.
   */
  async checkOnce(
    dataSource: DataSource,
    id: string,
    cause: AuditCause,
    /** `by`: who acts (an admin's recheck); undefined for the poller. */
    opts: { owner?: string; mayCreate: boolean; force?: boolean; by: By },
  ): Promise<boolean> {
    const p = await dataSource.getRepository(PayoutEntity).findOneBy({ id });
    if (p === null || (opts.owner !== undefined && p.leaseOwner !== opts.owner)) return false;
    // Awaiting approval: never sent, so nothing to ask about and nothing to create (issue #27).
    const open =
      !isUnsent(p.status) && (isPolled(p.status) || (opts.force === true && !isFinal(p.status)));
    const inFlight = p.callLeaseUntil !== null && p.callLeaseUntil.getTime() > Date.now();
    if (open && !inFlight) {
      // Read before asking: a sealed account that cannot be read fails this poll (recorded), not a create.
      const recipient = p.withdrawId === null && opts.mayCreate ? this.unsealRecipient(p) : null;
      const { via, answer } = await this.askStatus(p);
      await this.recordStatus(dataSource, id, via, answer, cause, {
        owner: opts.owner,
        resend: recipient === null ? null : { payout: p, recipient },
        by: opts.by,
      });
    } else if (opts.owner !== undefined) {
      await transactionFor(dataSource, opts.by, async (m) => {
        const row = await this.lock(m, { id });
        if (row === null || row.leaseOwner !== opts.owner) return;
        await this.finishRound(m, row, cause, true, inFlight ? row.callLeaseUntil : undefined);
      });
    }
    return true;
  }

  /**
   * Phase 3 of a status round: the answer written under a short lock through applyStatus and
   * finishRound; when "absent" allows one more create (only with `resend`: the payout and its
   * unsealed recipient), that create is claimed there, sent with nothing held, and its answer
   * written. `owner`: the poller's lease (a row taken over by another instance is left alone).
   */
  async recordStatus(
    dataSource: DataSource,
    id: string,
    via: string,
    answer: CallAnswer<PayoutRecord>,
    cause: AuditCause,
    opts: {
      owner?: string;
      resend: {
        payout: Parameters<PayoutProcessor['withdraw']>[0];
        recipient: SealedRecipient;
      } | null;
      by: By;
    },
  ): Promise<void> {
    let attempt = 0;
    const step = await recordAnswer(
      dataSource,
      {
        name: 'payout.status',
        by: opts.by,
        lock: (m) => this.lock(m, { id }),
        missing: () => 'done' as const,
        record: async (m, row, reply) => {
          if (opts.owner !== undefined && row.leaseOwner !== opts.owner) return 'done';
          if (row.callLeaseUntil !== null && row.callLeaseUntil.getTime() > Date.now())
            return 'done';
          const r = await this.applyStatus(m, row, via, reply, cause, opts.resend !== null);
          if (r === 'done') await this.finishRound(m, row, cause, opts.owner !== undefined);
          attempt = row.createAttempts;
          return r;
        },
      },
      answer,
    );
    const resend = opts.resend;
    if (step === 'create' && resend !== null) {
      await runGatewayOperation(dataSource, {
        name: 'payout.recreate',
        by: opts.by,
        call: () => this.withdraw(resend.payout, resend.recipient),
        lock: (m) => this.lock(m, { id }),
        // Gone meanwhile: nothing left to record the answer on.
        missing: () => undefined,
        record: async (m, row, created) => {
          await this.applyCreate(m, row, created, cause, attempt);
          // A create just sent gets its status round before any deadline: flagged now, it
          // would never be polled again while the gateway pays it.
          await this.finishRound(m, row, cause, opts.owner !== undefined, undefined, false);
        },
      });
    }
  }

  /**
   * The quiet rounds of a poll batch (payout-quiet-round.ts: the gateway said what the row
   * already says), finished by one statement: poll counted, next poll set, lease released —
   * what finishRound writes for such a round — on each row still leased by `owner` and unchanged
   * since the claim (same `xmin`). Returns the ids it did not finish: the caller writes their
   * answers through recordStatus, which reads the row as it is now.
   */
  async finishQuietRounds(
    dataSource: DataSource,
    owner: string,
    rounds: ReadonlyArray<{ id: string; xmin: string; nextPollAt: Date }>,
  ): Promise<Set<string>> {
    const left = new Set(rounds.map((r) => r.id));
    if (rounds.length === 0) return left;
    const result = (await dataSource.query(
      `UPDATE payouts p
          SET poll_count = p.poll_count + 1, next_poll_at = q.next_poll_at,
              lease_until = NULL, lease_owner = NULL, updated_at = now()
         FROM unnest($2::uuid[], $3::xid[], $4::timestamptz[]) AS q(id, xmin, next_poll_at)
        WHERE p.id = q.id AND p.xmin = q.xmin AND p.lease_owner = $1
       RETURNING p.id`,
      [owner, rounds.map((r) => r.id), rounds.map((r) => r.xmin), rounds.map((r) => r.nextPollAt)],
    )) as [Array<{ id: string }>, number];
    for (const { id } of result[0]) left.delete(id);
    return left;
  }

  /**
   * End of a round: past the deadline flagged and polled every WATCH_INTERVAL_S, past the watch
   * end flagged `watch_ended` and no longer polled; poll count, next poll, lease released.
   */
  private async finishRound(
    m: EntityManager,
    p: PayoutEntity,
    cause: AuditCause,
    counted: boolean,
    nextAt?: Date | null,
    deadlineApplies = true,
  ): Promise<void> {
    let next: Date | null = null;
    if (isPolled(p.status)) {
      const step = this.watchStep(p);
      if (deadlineApplies && step.flag !== null)
        await this.flagWatch(
          m,
          p,
          step.flag,
          step.flag === 'deadline'
            ? 'no final status by the poll deadline; still polled until the watch ends'
            : WATCH_ENDED_DETAIL,
          cause,
        );
      if (nextAt !== undefined && nextAt !== null) next = nextAt;
      else if (!deadlineApplies) next = this.keepOrNext(p);
      else next = this.keepOrNext(p, step.nextAt);
    }
    await m.update(
      PayoutEntity,
      { id: p.id },
      {
        ...(counted ? { pollCount: p.pollCount + 1 } : {}),
        nextPollAt: next,
        leaseUntil: null,
        leaseOwner: null,
      },
    );
    p.nextPollAt = next;
  }

  /**
   * A poll time set sooner by this round's answer (duplicate: ask at once) is kept. The row's
   * own due time is not: it is the time that made this round due, already past, and keeping it
   * would poll the payout again at every tick.
   */
  private keepOrNext(p: PayoutEntity, due: Date | null = this.intervalFromNow()): Date | null {
    if (!isPolled(p.status) || due === null) return null;
    const chosen = this.chosenByAnswer.has(p) ? p.nextPollAt : null;
    return chosen !== null && chosen < due ? chosen : due;
  }

  private watchStep(p: PayoutEntity) {
    return payoutWatchStep({
      now: new Date(),
      sentAt: p.sentAt,
      createdAt: p.createdAt,
      pollDeadline: p.pollDeadline,
      pollIntervalS: this.config.payouts.pollIntervalS,
      watch: this.config.watch,
    });
  }

  /**
   * A round that threw: recorded in a transaction of its own (the failed one rolled back), with
   * the error on the row; past the deadline it is flagged `poll_failing` and still polled every
   * WATCH_INTERVAL_S until the watch ends.
   */
  async recordFailure(
    dataSource: DataSource,
    id: string,
    err: unknown,
    owner?: string,
  ): Promise<void> {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    await dataSource.transaction(async (m) => {
      const p = await this.lock(m, { id });
      if (p === null || (owner !== undefined && p.leaseOwner !== owner)) return;
      await m.update(PayoutEntity, { id }, { lastError: message.slice(0, 500) });
      p.lastError = message;
      const step = isPolled(p.status) ? this.watchStep(p) : null;
      if (step !== null && step.flag !== null)
        await this.flagWatch(
          m,
          p,
          step.flag === 'deadline' ? 'poll_failing' : step.flag,
          step.flag === 'deadline'
            ? `every poll fails: ${message.slice(0, 200)}`
            : WATCH_ENDED_DETAIL,
          'reconciliation',
        );
      const next = step?.nextAt ?? null;
      await m.update(
        PayoutEntity,
        { id },
        { pollCount: p.pollCount + 1, nextPollAt: next, leaseUntil: null, leaseOwner: null },
      );
    });
  }

  /**
   * An operator's verified final status (attention `accept`): allowed moves through write; a
   * final status corrected to another final one is audited with the note.
   */
  async accept(
    m: EntityManager,
    p: PayoutEntity,
    to: PayoutStatus,
    details: Record<string, unknown>,
  ): Promise<void> {
    if (p.status === to) return;
    if (decideTransition(p.status, to).allowed) {
      await this.write(m, p, to, 'admin', details);
      return;
    }
    const from = p.status;
    const all = { status: to, finishedAt: new Date(), nextPollAt: null };
    await m.update(PayoutEntity, { id: p.id }, all);
    Object.assign(p, all);
    await this.audit.record(m, {
      entityType: 'payout',
      entityId: p.shopPaymentId,
      rowId: p.id,
      fromStatus: from,
      toStatus: to,
      cause: 'admin',
      details: { ...details, correction: true },
    });
  }

  /**
   * Admin recheck of a final, flagged payout: its status asked now and applied through the
   * rule (a different final status is a contradiction); the flag is cleared only when the
   * gateway's record is ours and says the same final status.
   */
  async recheckFinal(dataSource: DataSource, id: string, by: By): Promise<void> {
    const p = await dataSource.getRepository(PayoutEntity).findOneBy({ id });
    if (p === null || !isFinal(p.status) || !p.needsAttention) return;
    const { via, answer } = await this.askStatus(p);
    await transactionFor(dataSource, by, async (m) => {
      const row = await this.lock(m, { id });
      if (row === null || !isFinal(row.status)) return;
      const reading = answer.ok
        ? readPayoutRecord(row, answer.value, this.config.payouts.status)
        : null;
      const agrees = reading !== null && reading.ours && reading.mapped.status === row.status;
      await this.applyStatus(m, row, via, answer, 'admin', false);
      if (agrees && row.needsAttention)
        await resolveAttention(
          m,
          { object: 'payout', id: row.id, shopId: row.shopPaymentId, status: row.status },
          { action: 'recheck', gatewayStatus: answer.ok ? answer.value.status : null },
          'admin',
        );
    });
  }

  /** Next poll time for a row still owed an answer; null otherwise. */
  nextPollAt(p: PayoutEntity): Date | null {
    return isPolled(p.status) ? this.intervalFromNow() : null;
  }

  private intervalFromNow(): Date {
    return new Date(Date.now() + this.config.payouts.pollIntervalS * 1000);
  }

  private async setNextPoll(m: EntityManager, p: PayoutEntity, at: Date | null): Promise<void> {
    const next = isPolled(p.status) ? at : null;
    await m.update(PayoutEntity, { id: p.id }, { nextPollAt: next });
    p.nextPollAt = next;
    this.chosenByAnswer.add(p);
  }
}
