import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { crashPoint } from '../common/crash-point';
import {
  NotFound,
  RequestInProgress,
  ValidationFailed,
} from '../common/errors';
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
import { PayoutControls } from './payout-controls';
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
import { gatewayFailure } from './payout.errors';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { NO_CALL, PayoutProcessor } from './payout-processor';
import { isFinal } from './payout.state';
import { accountProblems, amountProblems } from './payout-validation';

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

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
    private readonly processor: PayoutProcessor,
    keys: KeyRing,
    private readonly controls: PayoutControls,
  ) {
    // Rows written before the key ring were fingerprinted under the payment shop's secret.
    this.fingerprints = new PayoutFingerprints(keys, config.gateway.shops.payment.secretKey);
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
  async create(dto: CreatePayoutDto): Promise<StoredResponse> {
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
      if (existing) return this.answerRepeat(existing, dto);
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
    // prettier-ignore
    const inserted = await this.controls.admit(admission, dto.shopPaymentId, (m) => (m ?? this.dataSource)
      .createQueryBuilder()
      .insert()
      .into(PayoutEntity)
      .values({
        ...facts,
        id,
        shopId,
        requestFingerprint: fingerprint.fingerprint,
        requestFingerprintKey: fingerprint.keyId,
        // Kept apart from `facts`, which the gateway request is built from: never sent.
        metadata: metadataOf(dto.metadata),
        status: 'pending',
        ...(quoted ?? {}),
        accountMasked: maskAccount(dto.account),
        accountIndex: admission.recipientIndexes[0],
        accountSealed: this.processor.sealRecipient(id, {
          account: dto.account,
          accountDetails: dto.accountDetails,
        }),
        createAttempts: 1,
        lastCreateAt: () => 'now()',
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
      crashPoint('payout.create.after_claim');
      const answer = await this.processor.sendCreate(facts, {
        account: dto.account,
        accountDetails: dto.accountDetails,
      });
      crashPoint('payout.create.after_answer');
      const stored = await this.dataSource.transaction(async (m) => {
        const p = await this.processor.lock(m, { id: rows[0].id });
        if (p === null) throw new NotFound('Payout', dto.shopPaymentId);
        await this.processor.applyCreate(m, p, answer, 'api', 1);
        return this.storeResponse(m, p);
      });
      crashPoint('payout.create.after_result');
      return stored;
    }
    const existing = await this.find(dto.shopPaymentId);
    if (existing === null)
      throw new Error(`payout ${dto.shopPaymentId} vanished after a conflicting insert`);
    return this.answerRepeat(existing, dto);
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
  ): Promise<StoredResponse> {
    await this.sameRequestOrConflict(existing, dto);
    let first: PayoutEntity | null = existing;
    const answer = await waitForAnswer(async () => {
      const p = first ?? (await this.find(existing.shopPaymentId));
      first = null;
      if (p === null) throw new NotFound('Payout', existing.shopPaymentId);
      if (p.responseCode !== null)
        return { code: p.responseCode, body: p.responseBody as PayoutView };
      if (p.callLeaseUntil !== null && p.callLeaseUntil.getTime() > Date.now()) return undefined;
      return this.dataSource.transaction(async (m) => {
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
  private async sameRequestOrConflict(existing: PayoutEntity, dto: CreatePayoutDto): Promise<void> {
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
    if (q.metadata) qb.andWhere('p.metadata @> CAST(:metadata AS jsonb)', { metadata: JSON.stringify(q.metadata) });
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
  async reconcile(shopPaymentId: string): Promise<PayoutView> {
    const p = await this.find(shopPaymentId);
    if (p === null) throw new NotFound('Payout', shopPaymentId);
    if (!isFinal(p.status)) {
      await this.processor.checkOnce(this.dataSource, p.id, 'admin', {
        mayCreate: !p.needsAttention && p.status !== 'needs_attention',
        force: true,
      });
    } else {
      await this.processor.recheckFinal(this.dataSource, p.id);
    }
    return this.get(shopPaymentId);
  }

  private reject(errors: Array<{ field: string; message: string }>): void {
    if (errors.length > 0) throw new ValidationFailed(errors);
  }
}
