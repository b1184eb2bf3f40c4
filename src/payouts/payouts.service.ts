import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { runGatewayOperation } from '../jobs/gateway-operation';
import {
  NotFound,
  RequestInProgress,
  SealedValueUnreadable,
  ValidationFailed,
} from '../common/errors';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { transactionFor, type By } from '../common/actor';
import { amountForApproval, approvalsNeeded } from './payout-approval';
import { callLeaseSeconds, waitForAnswer } from '../jobs/in-flight';
import { INSTANCE_ID } from '../jobs/instance';
import { Amount } from '../common/money';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  type Page,
  toPage,
} from '../common/pagination';
import { KeyRing } from '../common/key-ring';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import type { CheckAccountResult, OutputPayway, WithdrawTryResult } from '../gateway/gateway.types';
import { boundsCheckFor, checkConvertedBounds } from '../payway-config/currency-conversion';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import { maskAccount } from './account-mask';
import { PayoutFingerprints } from './payout-fingerprint';
import { PayoutControls, type Admission } from './payout-controls';
import {
  differingFields,
  differs,
  recordConflict,
  refuseIfLocked,
  secretFieldsEntry,
} from '../common/idempotency';
import { metadataOf } from '../common/metadata';

/** Fields a conflict answer never compares one by one (see secretFieldsEntry). */
const PAYOUT_SECRET_FIELDS = ['account', 'accountDetails'] as const;
import type { CheckAccountDto, CreatePayoutDto, QuotePayoutDto } from './dto/payout-requests.dto';
import { toPayoutView, type PayoutView } from './dto/payout.view';
import {
  ApproverUnknown,
  gatewayFailure,
  NotAwaitingApproval,
  SameApproverTwice,
  SelfApproval,
} from './payout.errors';
import { countingApprovals, mayApprove } from './payout.rules';
import { keyIdOf } from '../common/auth.guard';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { NO_CALL, PayoutProcessor, type SealedRecipient } from './payout-processor';
import { isFinal } from './payout.state';
import { accountProblems, amountProblems } from './payout-validation';

/** The last approval was reached without the send's admission read beforehand: read it, then again. */
class LastApprovalUnprepared extends Error {
  constructor(readonly payout: PayoutEntity) {
    super('the last approval needs its admission read first');
  }
}

export interface StoredResponse {
  code: number;
  body: PayoutView;
  /** Given to a repeat (sent with `Idempotent-Replayed: true`), not made by this request. */
  replayed?: boolean;
}

/** Amount checks without bounds: in another currency the bounds apply after conversion. */
const UNBOUNDED = {} as OutputPayway;

function convertedProblems(r: WithdrawTryResult, payway: OutputPayway) {
  return checkConvertedBounds({ amount: r.payee_receive, currency: r.ps_currency }, payway);
}

@Injectable()
export class PayoutsService {
  private readonly fingerprints: PayoutFingerprints;
  /** The admin keys configured now: only their approvals count (payout.rules.ts). */
  private readonly adminKeyIds: ReadonlySet<string>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
    private readonly processor: PayoutProcessor,
    keys: KeyRing,
    private readonly audit: AuditService,
    private readonly controls: PayoutControls,
  ) {
    // Rows written before the key ring were fingerprinted under the payment shop's secret.
    this.fingerprints = new PayoutFingerprints(keys, config.gateway.shops.payment.secretKey);
    this.adminKeyIds = new Set(config.adminApiKeys.map(keyIdOf));
  }

  /** Payouts are the agent shop's: written and found under its id. */
  private get shopId(): number {
    return this.gateway.shopId('payout');
  }

  async quote(dto: QuotePayoutDto): Promise<Record<string, unknown>> {
    const payway = await this.payways.getPayway('payout', dto.payway);
    const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
    this.reject(amountProblems(dto.amount, local ? payway : UNBOUNDED, dto.amountType));
    const r = await this.tryWithdraw(dto);
    if (!local) this.reject(convertedProblems(r, payway));
    return {
      payeeReceive: String(r.payee_receive),
      shopWriteOff: String(r.shop_write_off),
      psCurrency: r.ps_currency,
      shopCurrency: r.shop_currency,
      accountInfoConfig: r.account_info_config,
    };
  }

  private async tryWithdraw(dto: QuotePayoutDto): Promise<WithdrawTryResult> {
    try {
      return await this.gateway.tryWithdraw({
        amount: dto.amount,
        amount_type: dto.amountType,
        payway: dto.payway,
        shop_currency: dto.shopCurrency,
      });
    } catch (err) {
      throw gatewayFailure('withdraw/try', err);
    }
  }

  /**
   * A payout in another shop currency than its payway's: `withdraw/try` converts it, and the
   * payway's bounds are held against `payee_receive` in `ps_currency`. Skipped for a repeat whose
   * row exists (its stored answer or a conflict follows without another gateway call).
   */
  private async priceInPaywayCurrency(
    dto: CreatePayoutDto,
    payway: OutputPayway,
  ): Promise<{ psCurrency: number; payeeReceive: Amount; shopWriteOff: Amount } | null> {
    const exists = await this.dataSource
      .getRepository(PayoutEntity)
      .existsBy({ shopId: this.shopId, shopPaymentId: dto.shopPaymentId });
    if (exists) return null;
    const r = await this.tryWithdraw(dto);
    this.reject(convertedProblems(r, payway));
    return {
      psCurrency: Number(r.ps_currency),
      payeeReceive: Amount.fromText(String(r.payee_receive)),
      shopWriteOff: Amount.fromText(String(r.shop_write_off)),
    };
  }

  async checkAccount(
    dto: CheckAccountDto,
  ): Promise<{ exists: boolean; accountInfo: Record<string, unknown> | null }> {
    const payway = await this.payways.getPayway('payout', dto.payway);
    this.reject([
      ...amountProblems(dto.amount, payway),
      ...accountProblems(dto.account, dto.accountDetails, payway),
    ]);
    let r: CheckAccountResult;
    try {
      r = await this.gateway.checkAccount({
        account: dto.account,
        amount: dto.amount,
        payway: dto.payway,
        account_details: dto.accountDetails,
      });
    } catch (err) {
      throw gatewayFailure('check_account', err);
    }
    return { exists: r.result === true, accountInfo: r.account_info ?? null };
  }

  /**
   * The idempotent create, in atomic phases: (1) one INSERT commits the row `pending` with its
   * first create attempt claimed (owner, time, lease), so a crash after it leaves a row the
   * poller settles by a status call; (2) `withdraw/create` with nothing held; (3) a short lock
   * writes the answer and the stored response. A repeat finds the row first (configuration only
   * judges new rows) and replays it, waits (bounded) while the first copy is in phase 2, or gets
   * 409 "request in progress"; another body is 409 conflict.
   */
  async create(dto: CreatePayoutDto, by: By): Promise<StoredResponse> {
    const shopId = this.shopId;
    const fingerprint = this.fingerprints.of(dto);
    let priced: Awaited<ReturnType<PayoutsService['priceInPaywayCurrency']>> | null;
    try {
      const payway = await this.payways.getPayway('payout', dto.payway);
      const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
      this.reject([
        ...amountProblems(dto.amount, local ? payway : UNBOUNDED, dto.amountType),
        ...accountProblems(dto.account, dto.accountDetails, payway),
      ]);
      priced = local ? null : await this.priceInPaywayCurrency(dto, payway);
    } catch (err) {
      // A repeat is answered whatever the configuration says now (limits lowered, payway gone).
      const existing = await this.find(dto.shopPaymentId);
      if (existing) return this.answerRepeat(existing, dto, by);
      throw err;
    }
    const { pollMaxS } = this.config.payouts;
    const leaseS = callLeaseSeconds(this.config.gateway.timeoutMs);
    // A pending row is left alone by the poller for this long: the create request is in flight.
    const graceS =
      Math.ceil(this.config.gateway.timeoutMs / 1000) + this.config.payouts.pollIntervalS;
    const facts = {
      shopPaymentId: dto.shopPaymentId,
      amount: Amount.parse(dto.amount),
      amountType: dto.amountType,
      shopCurrency: dto.shopCurrency,
      payway: dto.payway,
      description: dto.description ?? null,
    };
    // Caps and balance (issue #27): the gateway reads now; the sums with the insert, under a lock.
    const { admission, quoted } = await this.controls.prepare(
      shopId,
      { ...facts, account: dto.account },
      priced,
    );
    // The id is chosen here: the sealed account is bound to its row.
    const id = randomUUID();
    const stored = {
      ...facts,
      id,
      shopId,
      requestFingerprint: fingerprint.fingerprint,
      requestFingerprintKey: fingerprint.keyId,
      // Kept apart from `facts`, which the gateway request is built from: never sent.
      metadata: metadataOf(dto.metadata),
      ...(priced ?? {}),
      // The write-off withdraw/try quoted for the balance check (issue #27), when it was asked.
      ...(quoted ?? {}),
      accountMasked: maskAccount(dto.account),
      // The creating key (a batch's rows: the submitting key) never approves it.
      createdByKeyId: by?.keyId ?? null,
      // The recipient's blind index, for the per-recipient daily cap; never the account in clear.
      accountIndex: admission.recipientIndexes[0],
      accountSealed: this.processor.sealRecipient(id, {
        account: dto.account,
        accountDetails: dto.accountDetails,
      }),
    };
    // Issue #27: at or above PAYOUT_APPROVAL_THRESHOLD the row waits for admin keys; nothing is sent.
    const needed = approvalsNeeded(
      this.config.payoutApproval,
      amountForApproval({ amount: facts.amount, shopWriteOff: priced?.shopWriteOff }),
      dto.shopCurrency,
    );
    // An awaiting payout holds no share of the caps and nothing of the balance: the approval
    // that sends it admits it against the caps of that day and the balance then.
    if (needed !== 0) return this.createAwaiting(stored, needed, dto, by);
    // prettier-ignore
    const inserted = await this.controls.admit(admission, dto.shopPaymentId, by, (m) => (m ?? this.dataSource)
      .createQueryBuilder()
      .insert()
      .into(PayoutEntity)
      .values({
        ...stored,
        status: 'pending',
        createAttempts: 1,
        lastCreateAt: () => 'now()',
        // Sent now: the day it counts on and the start of its watch (payout.rules.ts).
        sentAt: () => 'now()',
        callOwner: INSTANCE_ID,
        callStartedAt: () => 'now()',
        callLeaseUntil: () => `now() + make_interval(secs => ${leaseS})`,
        nextPollAt: () => `now() + make_interval(secs => ${graceS})`,
        pollDeadline: () => `now() + make_interval(secs => ${pollMaxS})`,
      })
      .orIgnore()
      .returning(['id'])
      .execute());
    const rows = inserted.raw as Array<{ id: string }>;
    if (rows.length === 1) {
      return this.sendClaimed(
        { id: rows[0].id, ...facts },
        { account: dto.account, accountDetails: dto.accountDetails },
        'api',
        1,
        by,
        (m, p) => this.storeResponse(m, p),
      );
    }
    const existing = await this.find(dto.shopPaymentId);
    if (existing === null)
      throw new Error(`payout ${dto.shopPaymentId} vanished after a conflicting insert`);
    return this.answerRepeat(existing, dto, by);
  }

  /**
   * Phases 2 and 3 of a create whose row is claimed (call owner, lease, attempt): the new
   * payout's and an approved one's alike. `withdraw/create` with nothing held, then a short lock
   * writes the answer through the processor and `finish` builds the caller's answer.
   */
  private async sendClaimed<T>(
    row: Pick<
      PayoutEntity,
      'id' | 'shopPaymentId' | 'amount' | 'amountType' | 'shopCurrency' | 'payway' | 'description'
    >,
    recipient: SealedRecipient,
    cause: AuditCause,
    attempt: number,
    by: By,
    finish: (m: EntityManager, p: PayoutEntity) => Promise<T>,
  ): Promise<T> {
    return runGatewayOperation(this.dataSource, {
      name: 'payout.create',
      by,
      call: () => this.processor.withdraw(row, recipient),
      lock: (m) => this.processor.lock(m, { id: row.id }),
      missing: () => new NotFound('Payout', row.shopPaymentId),
      record: async (m, p, answer) => {
        await this.processor.applyCreate(m, p, answer, cause, attempt);
        return finish(m, p);
      },
    });
  }

  /**
   * A payout at or above the approval threshold: one transaction writes the row
   * `awaiting_approval` (no call claimed, no poll due), its audit entry and event, and the stored
   * 202, so a repeat replays that answer and sends nothing. A repeat of an existing row goes to
   * answerRepeat, whatever status it has.
   */
  private async createAwaiting(
    values: Omit<Partial<PayoutEntity>, 'status'>,
    needed: 1 | 2,
    dto: CreatePayoutDto,
    by: By,
  ): Promise<StoredResponse> {
    const { pollMaxS } = this.config.payouts;
    const write = async (m: EntityManager): Promise<StoredResponse | null> => {
      const inserted = await m
        .createQueryBuilder()
        .insert()
        .into(PayoutEntity)
        .values({
          ...(values as QueryDeepPartialEntity<PayoutEntity>),
          status: 'awaiting_approval',
          approvalsRequired: needed,
          createAttempts: 0,
          nextPollAt: null,
          // Set again when it is approved: the poll window starts with the send.
          pollDeadline: () => `now() + make_interval(secs => ${pollMaxS})`,
        })
        .orIgnore()
        .returning(['id'])
        .execute();
      const rows = inserted.raw as Array<{ id: string }>;
      if (rows.length !== 1) return null;
      const p = await this.processor.lock(m, { id: rows[0].id });
      if (p === null) throw new NotFound('Payout', dto.shopPaymentId);
      await this.audit.record(m, {
        entityType: 'payout',
        entityId: p.shopPaymentId,
        rowId: p.id,
        fromStatus: null,
        toStatus: p.status,
        cause: 'api',
        details: { approvalsRequired: needed },
      });
      return this.storeResponse(m, p);
    };
    const stored = await transactionFor(this.dataSource, by, write);
    if (stored !== null) return stored;
    const existing = await this.find(dto.shopPaymentId);
    if (existing === null)
      throw new Error(`payout ${dto.shopPaymentId} vanished after a conflicting insert`);
    return this.answerRepeat(existing, dto, by);
  }

  /**
   * An admin key approves a payout awaiting approval. Under the row's lock: the creating key
   * never approves (403 `self-approval`); the decision is recorded once per key (the table's
   * primary key: the same key again is 409 `same-approver`); the approvals that count
   * (countingApprovals: keys still configured, never the creator's) are counted; while fewer
   * than the payout needs, it stays awaiting; the last one admits the send against the caps of
   * today and the balance (holdSend: 422 and nothing recorded, it stays awaiting), writes
   * `payout.approved`, moves it to `pending` and claims its create (owner, lease, attempt 1,
   * `sent_at`) conditionally on the status it just read, so concurrent approvals send it once.
   * Then the create's own phases 2 and 3 send it.
   */
  async approve(shopPaymentId: string, by: By, note?: string): Promise<PayoutView> {
    const keyId = this.approverKeyId(by);
    const pre = await this.find(shopPaymentId);
    // The gateway reads the send's admission needs (write-off, balance) are made with nothing
    // held, before the transaction, when this approval looks like the last one.
    let admission =
      pre !== null && pre.status === 'awaiting_approval' && (await this.wouldSend(pre, keyId))
        ? await this.admissionOf(pre)
        : null;
    const run = (a: Admission | null) =>
      transactionFor(this.dataSource, by, (m) =>
        this.approveLocked(m, shopPaymentId, keyId, note, a),
      );
    let claimed: Awaited<ReturnType<PayoutsService['approveLocked']>>;
    try {
      claimed = admission === null ? await run(null) : await this.controls.retryStale(admission, run);
    } catch (err) {
      // The last approval after all (another key approved meanwhile): admitted now, once.
      if (!(err instanceof LastApprovalUnprepared)) throw err;
      admission = await this.admissionOf(err.payout);
      claimed = await this.controls.retryStale(admission, run);
    }
    if (!claimed.send) return toPayoutView(claimed.p);
    return this.sendClaimed(claimed.p, claimed.recipient, 'admin', claimed.attempt, by, (_m, p) =>
      Promise.resolve(toPayoutView(p)),
    );
  }

  private async approveLocked(
    m: EntityManager,
    shopPaymentId: string,
    keyId: string,
    note: string | undefined,
    admission: Admission | null,
  ): Promise<
    | { p: PayoutEntity; send: false }
    | { p: PayoutEntity; send: true; recipient: SealedRecipient; attempt: number }
  > {
    const { pollMaxS } = this.config.payouts;
    const leaseS = callLeaseSeconds(this.config.gateway.timeoutMs);
    const graceS =
      Math.ceil(this.config.gateway.timeoutMs / 1000) + this.config.payouts.pollIntervalS;
    const p = await this.lockAwaiting(m, shopPaymentId, 'approve');
    if (!mayApprove(keyId, p.createdByKeyId)) throw new SelfApproval(shopPaymentId);
    const added = (await m.query(
      `INSERT INTO payout_approvals (payout_id, key_id, decision, note) VALUES ($1, $2, 'approve', $3)
       ON CONFLICT (payout_id, key_id) DO NOTHING RETURNING key_id`,
      [p.id, keyId, note ?? null],
    )) as unknown[];
    if (added.length === 0) throw new SameApproverTwice(shopPaymentId);
    const n = this.countingOf(p, await this.approverKeyIds(m, p.id)).length;
    const required = Math.max(1, p.approvalsRequired);
    const details = { call: 'approve', approval: n, of: required, note: note ?? null };
    if (n < required) {
      await this.audit.record(m, {
        entityType: 'payout',
        entityId: p.shopPaymentId,
        rowId: p.id,
        fromStatus: p.status,
        toStatus: p.status,
        cause: 'admin',
        details,
      });
      return { p, send: false };
    }
    if (admission === null) throw new LastApprovalUnprepared(p);
    // Opened before anything is written: an account that cannot be read leaves it awaiting.
    const recipient = this.recipientOf(p);
    // The caps of the day it is sent and the balance, under the send's lock: 422 rolls back.
    await this.controls.holdSend(m, admission, p.id);
    await this.audit.record(m, {
      entityType: 'payout',
      entityId: p.shopPaymentId,
      rowId: p.id,
      fromStatus: p.status,
      toStatus: p.status,
      cause: 'admin',
      notice: 'approved',
      details,
    });
    await this.processor.write(m, p, 'pending', 'admin', details);
    const claim = (await m.query(
      `UPDATE payouts SET create_attempts = create_attempts + 1, last_create_at = now(), sent_at = now(),
         call_owner = $2, call_started_at = now(),
         call_lease_until = now() + make_interval(secs => $3::float8),
         next_poll_at = now() + make_interval(secs => $4::float8),
         poll_deadline = now() + make_interval(secs => $5::float8), updated_at = now()
       WHERE id = $1 AND status = 'pending' AND create_attempts = 0 AND call_owner IS NULL
       RETURNING create_attempts, sent_at`,
      [p.id, INSTANCE_ID, leaseS, graceS, pollMaxS],
    )) as [Array<{ create_attempts: number; sent_at: Date }>, number];
    if (claim[0].length !== 1) throw new NotAwaitingApproval(shopPaymentId, p.status, 'approve');
    p.sentAt = claim[0][0].sent_at;
    return { p, send: true, recipient, attempt: claim[0][0].create_attempts };
  }

  /** Whether `keyId`'s approval would be the last one `p` needs (read with nothing held). */
  private async wouldSend(p: PayoutEntity, keyId: string): Promise<boolean> {
    const keys = [...(await this.approverKeyIds(this.dataSource, p.id)), keyId];
    return this.countingOf(p, keys).length >= Math.max(1, p.approvalsRequired);
  }

  /** What the send of `p` is admitted with (its recipient opened to find its blind indexes). */
  private admissionOf(p: PayoutEntity): Promise<Admission> {
    return this.controls.prepareSend(p, this.recipientOf(p).account);
  }

  private recipientOf(p: PayoutEntity): SealedRecipient {
    try {
      return this.processor.unsealRecipient(p);
    } catch {
      throw new SealedValueUnreadable('account', 'payout account');
    }
  }

  /** The key ids that approved payout `id` so far, oldest first. */
  private async approverKeyIds(m: EntityManager | DataSource, id: string): Promise<string[]> {
    const rows = (await m.query(
      `SELECT key_id FROM payout_approvals WHERE payout_id = $1 AND decision = 'approve' ORDER BY created_at`,
      [id],
    )) as Array<{ key_id: string }>;
    return rows.map((r) => r.key_id);
  }

  /** Rule "which approvals count" for `p`, against the admin keys configured now. */
  private countingOf(p: Pick<PayoutEntity, 'createdByKeyId'>, keyIds: readonly string[]): string[] {
    return countingApprovals(keyIds, this.adminKeyIds, p.createdByKeyId);
  }

  /**
   * An admin key rejects a payout awaiting approval: `rejected` (final, never sent), the event
   * `payout.rejected` with `rejectedBy: 'operator'` and the reason in its details (a gateway's
   * rejection has `call` and `gatewayStatus` instead).
   */
  async rejectPayout(shopPaymentId: string, reason: string, by: By): Promise<PayoutView> {
    const keyId = this.approverKeyId(by);
    const why = reason.trim();
    if (why === '') throw new ValidationFailed([{ field: 'reason', message: 'must not be blank' }]);
    return transactionFor(this.dataSource, by, async (m) => {
      const p = await this.lockAwaiting(m, shopPaymentId, 'reject');
      await m.query(
        `INSERT INTO payout_approvals (payout_id, key_id, decision, note) VALUES ($1, $2, 'reject', $3)
         ON CONFLICT (payout_id, key_id) DO UPDATE SET decision = 'reject', note = EXCLUDED.note, created_at = now()`,
        [p.id, keyId, why],
      );
      await this.processor.write(m, p, 'rejected', 'admin', {
        call: 'reject',
        rejectedBy: 'operator',
        reason: why,
      });
      return toPayoutView(p);
    });
  }

  /** Payouts awaiting approval, oldest first, with the key ids that approved each so far. */
  async awaitingApproval(
    limit = 500,
  ): Promise<Array<PayoutView & { approvalsRequired: number; approvedBy: string[] }>> {
    const rows = await this.dataSource
      .getRepository(PayoutEntity)
      .createQueryBuilder('p')
      .where('p.shop_id = :shopId', { shopId: this.shopId })
      .andWhere(`p.status = 'awaiting_approval'`)
      .orderBy('p.created_at', 'ASC')
      .addOrderBy('p.id', 'ASC')
      .take(limit)
      .getMany();
    if (rows.length === 0) return [];
    const approvals = (await this.dataSource.query(
      `SELECT payout_id, key_id FROM payout_approvals WHERE payout_id = ANY($1::uuid[]) AND decision = 'approve' ORDER BY created_at`,
      [rows.map((r) => r.id)],
    )) as Array<{ payout_id: string; key_id: string }>;
    return rows.map((p) => ({
      ...toPayoutView(p),
      approvalsRequired: Math.max(1, p.approvalsRequired),
      approvedBy: this.countingOf(
        p,
        approvals.filter((a) => a.payout_id === p.id).map((a) => a.key_id),
      ),
    }));
  }

  /** The acting admin key's id: approvals are recorded under it (never the key itself). */
  private approverKeyId(by: By): string {
    if (by === undefined || by.role !== 'admin') throw new ApproverUnknown();
    return by.keyId;
  }

  private async lockAwaiting(
    m: EntityManager,
    shopPaymentId: string,
    action: 'approve' | 'reject',
  ): Promise<PayoutEntity> {
    const p = await this.processor.lock(m, { shopId: this.shopId, shopPaymentId });
    if (p === null) throw new NotFound('Payout', shopPaymentId);
    if (p.status !== 'awaiting_approval')
      throw new NotAwaitingApproval(shopPaymentId, p.status, action);
    return p;
  }

  private find(shopPaymentId: string): Promise<PayoutEntity | null> {
    return this.dataSource
      .getRepository(PayoutEntity)
      .findOneBy({ shopId: this.shopId, shopPaymentId });
  }

  /** The stored answer, else the payout as it is now (stored as the answer). */
  private async storeResponse(m: EntityManager, p: PayoutEntity): Promise<StoredResponse> {
    if (p.responseCode !== null)
      return { code: p.responseCode, body: p.responseBody as PayoutView };
    const body = toPayoutView(p);
    await m.update(PayoutEntity, { id: p.id }, { responseCode: 202, responseBody: body });
    return { code: 202, body };
  }

  /**
   * A repeat: the stored answer; a bounded wait while the first copy is calling the gateway;
   * a copy whose call was lost (lease over) becomes `unknown` for the poller's status call.
   */
  private async answerRepeat(
    existing: PayoutEntity,
    dto: CreatePayoutDto,
    by: By,
  ): Promise<StoredResponse> {
    await this.sameRequestOrConflict(existing, dto, by);
    let first: PayoutEntity | null = existing;
    const answer = await waitForAnswer(async () => {
      const p = first ?? (await this.find(existing.shopPaymentId));
      first = null;
      if (p === null) throw new NotFound('Payout', existing.shopPaymentId);
      if (p.responseCode !== null)
        return { code: p.responseCode, body: p.responseBody as PayoutView };
      if (p.callLeaseUntil !== null && p.callLeaseUntil.getTime() > Date.now()) return undefined;
      return transactionFor(this.dataSource, by, async (m) => {
        const row = await this.processor.lock(m, { id: p.id });
        if (row === null) throw new NotFound('Payout', existing.shopPaymentId);
        if (row.callLeaseUntil !== null && row.callLeaseUntil.getTime() > Date.now())
          return undefined;
        if (row.status === 'pending') {
          await this.processor.write(m, row, 'unknown', 'api', {
            reason: 'the create call was lost (its lease ran out)',
          });
          const next = this.processor.nextPollAt(row);
          await m.update(PayoutEntity, { id: row.id }, { ...NO_CALL, nextPollAt: next });
          row.nextPollAt = next;
        }
        return this.storeResponse(m, row);
      });
    }, this.config.createWaitMs);
    if (answer === undefined)
      throw new RequestInProgress('shopPaymentId', existing.shopPaymentId, 1);
    return { ...answer, replayed: true };
  }

  /**
   * A repeat is the same request when its keyed fingerprint matches (every field, the account
   * and its details included) and the metadata is the same. Otherwise a conflict naming the
   * non-secret fields that differ (read from the row's own columns, amounts by value) and, in
   * every conflict, one entry for the secret fields whether they differ or not: the answer to a
   * guessed account is the same as to a wrong one (issue #24), and the conflicts are capped.
   */
  private async sameRequestOrConflict(
    existing: PayoutEntity,
    dto: CreatePayoutDto,
    by: By,
  ): Promise<void> {
    const target = {
      object: 'payout' as const,
      id: existing.id,
      key: 'shopPaymentId',
      shopId: existing.shopPaymentId,
      status: existing.status,
      conflicts: existing.idempotencyConflicts,
    };
    const limit = this.config.idempotencyConflictLimit;
    refuseIfLocked(target, limit);
    const fields = differingFields(
      {
        amount: existing.amount.canonicalText(),
        amountType: existing.amountType,
        shopCurrency: existing.shopCurrency,
        payway: existing.payway,
        description: existing.description,
        metadata: existing.metadata ?? {},
      },
      {
        amount: Amount.isValid(dto.amount) ? Amount.parse(dto.amount).canonicalText() : dto.amount,
        amountType: dto.amountType,
        shopCurrency: dto.shopCurrency,
        payway: dto.payway,
        description: dto.description,
        metadata: metadataOf(dto.metadata),
      },
    );
    if (fields.length === 0 && this.fingerprints.matches(existing.requestFingerprint, dto)) return;
    await recordConflict(
      this.dataSource,
      by,
      target,
      limit,
      [...differs(fields), secretFieldsEntry(PAYOUT_SECRET_FIELDS)],
      'api',
    );
  }

  async get(shopPaymentId: string): Promise<PayoutView> {
    const p = await this.dataSource
      .getRepository(PayoutEntity)
      .findOneBy({ shopId: this.shopId, shopPaymentId });
    if (p === null) throw new NotFound('Payout', shopPaymentId);
    return toPayoutView(p);
  }

  async list(q: {
    status?: PayoutStatus;
    metadata?: Record<string, string>;
    limit?: number;
    cursor?: string;
  }): Promise<Page<PayoutView>> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(q.cursor);
    const qb = this.dataSource
      .getRepository(PayoutEntity)
      .createQueryBuilder('p')
      .where('p.shop_id = :shopId', { shopId: this.shopId });
    if (q.status) qb.andWhere('p.status = :status', { status: q.status });
    if (q.metadata)
      qb.andWhere('p.metadata @> CAST(:metadata AS jsonb)', {
        metadata: JSON.stringify(q.metadata),
      });
    if (cursor) qb.andWhere(afterCursorSql('p', 'payouts'), { cursorId: cursor });
    const rows = await qb
      .orderBy('p.created_at', 'DESC')
      .addOrderBy('p.id', 'DESC')
      .take(limit + 1)
      .getMany();
    return toPage(rows, limit, toPayoutView);
  }

  /**
   * Admin (and the attention recheck): ask the gateway now, in the same phases as the poller. A
   * flagged payout is not created again after "absent" (the operator decides that), but a found
   * final status settles it and clears a "not final yet" flag; otherwise it stays flagged and
   * keeps its next poll (issue #22). A final flagged payout is cleared only when the gateway
   * confirms its status.
   */
  async reconcile(shopPaymentId: string, by: By): Promise<PayoutView> {
    const p = await this.find(shopPaymentId);
    if (p === null) throw new NotFound('Payout', shopPaymentId);
    if (!isFinal(p.status)) {
      await this.processor.checkOnce(this.dataSource, p.id, 'admin', {
        mayCreate: !p.needsAttention && p.status !== 'needs_attention',
        force: true,
        by,
      });
    } else {
      await this.processor.recheckFinal(this.dataSource, p.id, by);
    }
    return this.get(shopPaymentId);
  }

  private reject(errors: Array<{ field: string; message: string }>): void {
    if (errors.length > 0) throw new ValidationFailed(errors);
  }
}
