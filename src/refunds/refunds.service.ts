import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { transactionFor, type By } from '../common/actor';
import { InjectDataSource } from '@nestjs/typeorm';
import { sha256Hex } from '../common/sha256';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import {
  DomainError,
  GatewayFailure,
  InvalidState,
  NotFound,
  RequestInProgress,
  ValidationFailed,
} from '../common/errors';
import { runGatewayOperation, type CallAnswer } from '../jobs/gateway-operation';
import { callLeaseSeconds, waitForAnswer } from '../jobs/in-flight';
import { INSTANCE_ID } from '../jobs/instance';
import { logger } from '../common/logger';
import { Amount } from '../common/money';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  Page,
  toPage,
} from '../common/pagination';
import { parseGatewayTime } from '../gateway/gateway-time';
import { APP_CONFIG, type AppConfig } from '../config/config';
import {
  GatewayError,
  GatewayService,
  GatewayTransportError,
  isOutcomeUnknown,
  type RefundRecord,
  toGatewayId,
} from '../gateway';
import { InvoiceEntity } from '../invoices/invoice.entity';
import { lockInvoice } from '../invoices/invoice-transitions';
import { InvoicesService } from '../invoices/invoices.service';
import {
  NotificationAppliers,
  type ApplyOutcome,
  type NotificationApplier,
} from '../notifications/notification-appliers';
import { statusEffectOf } from '../notifications/notification.rules';
import type { CreateRefundDto } from './dto/create-refund.dto';
import type { AdminRefundsQuery, InvoiceRefundsQuery } from './dto/list-refunds.query';
import { RefundView, toRefundView } from './dto/refund.view';
import { RefundEntity } from './refund.entity';
import {
  RefundExceedsPaidAmount,
  replayProblem,
  StoredProblem,
  storeProblem,
} from './refund.errors';
import {
  lockRefundById,
  syncRefundSums,
  transitionRefund,
  type RefundExtra,
} from './refund-transitions';
import {
  nextRefundCheck,
  CreateAnswer,
  fitsPaidAmount,
  isFinalRefund,
  judgeRefund,
  outcomeOfCreate,
  refundStatusFromGateway,
  type RefundEvidence,
  type RefundVerdict,
} from './refund.state';
import { minorUnitsProblem } from '../common/currency';
import {
  canonicalJson,
  differingFields,
  differs,
  recordConflict,
  refuseIfLocked,
} from '../common/idempotency';
import { metadataOf } from '../common/metadata';
import { Coalescer } from '../common/coalesce';
import type { WatchStep } from '../common/watch';
import {
  clearFlagOnFinal,
  raiseAttention,
  resolveAttention,
  watchMayFlag,
  WATCH_ENDED_DETAIL,
} from '../common/attention';

/** Phase 1's result: the refund, and what its gateway call needs when this request claimed it. */
type Reserved =
  | { id: string; claimed: false }
  | {
      id: string;
      claimed: true;
      gatewayInvoiceId: string | null;
      amount: Amount;
      shopRefundId: string;
    };

/** A paid invoice whose gateway id is not known (yet): 409 unless invoice/check brings it. */
class InvoiceIdNotKnown extends InvalidState {
  constructor(shopOrderId: string) {
    super('Invoice', shopOrderId, 'without gateway invoice id', 'refund');
  }
}

/** No gateway call in flight for the row. */
const NO_CALL = { callOwner: null, callLeaseUntil: null } as const;

interface StoredResponse {
  refund?: RefundView;
  problem?: StoredProblem;
}

export interface CreateResult {
  code: number;
  body: RefundView;
  /** Given to a repeat (sent with `Idempotent-Replayed: true`), not made by this request. */
  replayed?: boolean;
}

/** What the reconciler did with one refund. */
export type ReconcileOutcome =
  'settled' | 'waiting' | 'not_created' | 'needs_attention' | 'gateway_error' | 'done';

/**
 * Refunds: creation (idempotent by shopRefundId, guarded by a row lock on the invoice so the
 * refunds that count never exceed the paid amount), the refund notification applier, listing,
 * and settling WAITING refunds through invoice/get-refunds.
 */
@Injectable()
export class RefundsService implements OnModuleInit, NotificationApplier {
  private readonly log = logger.child({ component: 'refunds' });
  /** The payment shop: refunds are written, found and reconciled under its id. */
  readonly shopId: number;
  private readonly refreshes = new Coalescer();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly appliers: NotificationAppliers,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly invoices: InvoicesService,
  ) {
    // Refunds belong to the payment shop, like the invoices they refund.
    this.shopId = gateway.shopId('payment');
  }

  onModuleInit(): void {
    this.appliers.register('refund', this);
  }

  // ------------------------------------------------------------------ create

  async create(
    shopOrderId: string,
    dto: CreateRefundDto,
    cause: Extract<AuditCause, 'api' | 'admin'>,
    by: By,
  ): Promise<CreateResult> {
    const amount = Amount.parse(dto.amount);
    if (!amount.isPositive())
      throw new ValidationFailed([{ field: 'amount', message: 'must be above zero' }]);
    const fingerprint = fingerprintOf(shopOrderId, dto);
    let reserved: Reserved;
    try {
      reserved = await this.reserve(shopOrderId, dto, amount, fingerprint, cause, by);
    } catch (e) {
      if (!(e instanceof InvoiceIdNotKnown)) throw e;
      // The invoice id its create answer lost: the first invoice/check brings it (nothing held
      // during the call); then the refund is reserved as usual, or refused as before.
      await this.invoices.refresh(shopOrderId, by).catch((err: unknown) => {
        if (!(err instanceof DomainError)) throw err;
      });
      reserved = await this.reserve(shopOrderId, dto, amount, fingerprint, cause, by);
    }
    if (reserved.claimed) return this.send(reserved, cause, by);
    await this.sameRequestOrConflict(reserved.id, shopOrderId, dto, cause, by);
    return this.answerRepeat(reserved.id, cause, by);
  }

  /**
   * A repeat is the same request when the invoice, the amount (by value), the currency when
   * given and the metadata match the refund's own columns; otherwise a conflict naming the
   * fields that differ, counted and capped (src/common/idempotency.ts). Outside the reserve
   * transaction: the count must commit though the request is refused.
   */
  private async sameRequestOrConflict(
    id: string,
    shopOrderId: string,
    dto: CreateRefundDto,
    cause: AuditCause,
    by: By,
  ): Promise<void> {
    const r = await this.dataSource.getRepository(RefundEntity).findOneBy({ id });
    if (!r) throw new NotFound('Refund', dto.shopRefundId);
    const target = {
      object: 'refund' as const,
      id: r.id,
      key: 'shopRefundId',
      shopId: r.shopRefundId,
      status: r.status,
      conflicts: r.idempotencyConflicts,
    };
    const limit = this.config.idempotencyConflictLimit;
    refuseIfLocked(target, limit);
    const first: Record<string, unknown> = {
      shopOrderId: r.shopOrderId,
      amount: r.amount.canonicalText(),
      metadata: r.metadata ?? {},
    };
    const repeat: Record<string, unknown> = {
      shopOrderId,
      amount: Amount.parse(dto.amount).canonicalText(),
      metadata: metadataOf(dto.metadata),
    };
    if (dto.currency !== undefined) {
      first.currency = r.currency;
      repeat.currency = dto.currency;
    }
    const fields = differingFields(first, repeat);
    if (fields.length > 0) await recordConflict(this.dataSource, by, target, limit, differs(fields), cause);
  }

  /**
   * First transaction: under the invoice's row lock, check the status and the paid amount and
   * commit the refund as WAITING/pending before the gateway hears of it, so a crash after this
   * leaves a row that reconciliation settles. Phase 1 of the atomic phases: the new row carries
   * the claim on its gateway call (owner, start, lease), and the invoice lock is held only for
   * this short transaction, never across the call. Returns the refund (new or the same request's).
   */
  private reserve(
    shopOrderId: string,
    dto: CreateRefundDto,
    amount: Amount,
    fingerprint: string,
    cause: AuditCause,
    by: By,
  ): Promise<Reserved> {
    return transactionFor(this.dataSource, by, async (m) => {
      const invoice = await lockInvoice(m, { shopId: this.shopId, shopOrderId });
      if (!invoice) throw new NotFound('Invoice', shopOrderId);
      const existing = await m.findOne(RefundEntity, {
        where: { shopId: this.shopId, shopRefundId: dto.shopRefundId },
      });
      if (existing) return { id: existing.id, claimed: false };
      if (invoice.status !== 'succeeded')
        throw new InvalidState('Invoice', shopOrderId, invoice.status, 'refund');
      if (dto.currency !== undefined && dto.currency !== invoice.currency) {
        throw new ValidationFailed([
          { field: 'currency', message: `must be the invoice currency ${invoice.currency}` },
        ]);
      }
      const tooFine = minorUnitsProblem(dto.amount, invoice.currency);
      if (tooFine) throw new ValidationFailed([{ field: 'amount', message: tooFine }]);
      if (invoice.invoiceId === null) throw new InvoiceIdNotKnown(shopOrderId);
      const counted = (
        (await m.query(
          `SELECT amount::text AS amount FROM refunds WHERE invoice_pk = $1 AND status <> 'FAILED'`,
          [invoice.id],
        )) as Array<{
          amount: string;
        }>
      ).map((r) => Amount.fromText(r.amount));
      if (!fitsPaidAmount(invoice.amount, counted, amount)) {
        throw new RefundExceedsPaidAmount(shopOrderId, invoice.amount, Amount.sum(counted), amount);
      }
      const { reconcileGraceS, reconcileMaxS } = this.config.refunds;
      const inserted = (await m.query(
        `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, gateway_invoice_id, request_fingerprint,
                              amount, currency, status, submit_state, next_check_at, check_deadline,
                              call_owner, call_started_at, call_lease_until, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'WAITING', 'pending',
                 now() + make_interval(secs => $9), now() + make_interval(secs => $10),
                 $11, now(), now() + make_interval(secs => $12), $13)
         ON CONFLICT (shop_id, shop_refund_id) DO NOTHING
         RETURNING id`,
        [
          this.shopId,
          dto.shopRefundId,
          invoice.id,
          shopOrderId,
          invoice.invoiceId,
          fingerprint,
          amount.toString(),
          invoice.currency,
          reconcileGraceS,
          reconcileMaxS,
          INSTANCE_ID,
          callLeaseSeconds(this.config.gateway.timeoutMs),
          JSON.stringify(metadataOf(dto.metadata)),
        ],
      )) as Array<{ id: string }>;
      if (inserted.length === 0) {
        // The same shopRefundId was committed for another invoice while we held this one's lock.
        const raced = await m.findOneOrFail(RefundEntity, {
          where: { shopId: this.shopId, shopRefundId: dto.shopRefundId },
        });
        return { id: raced.id, claimed: false };
      }
      await this.audit.record(m, {
        entityType: 'refund',
        entityId: dto.shopRefundId,
        rowId: inserted[0].id,
        fromStatus: null,
        toStatus: 'WAITING',
        cause,
        details: { shopOrderId, amount: amount.toString(), submitState: 'pending' },
      });
      // The new WAITING refund is pending money on the invoice from this commit on.
      await syncRefundSums(
        m,
        { invoicePk: invoice.id, shopRefundId: dto.shopRefundId, status: 'WAITING' },
        null,
        cause,
      );
      return {
        id: inserted[0].id,
        claimed: true,
        gatewayInvoiceId: invoice.invoiceId,
        amount,
        shopRefundId: dto.shopRefundId,
      };
    });
  }

  /**
   * A repeat (or a race lost at the insert): the stored answer; while the first copy waits for
   * the gateway, a bounded wait then 409 "request in progress"; a copy that never reached the
   * gateway is sent by this one; one whose call was lost (lease over) is settled by reconciliation.
   */
  private async answerRepeat(id: string, cause: AuditCause, by: By): Promise<CreateResult> {
    let shopRefundId = id;
    const next = await waitForAnswer(async () => {
      const r = await this.dataSource.getRepository(RefundEntity).findOneBy({ id });
      if (!r) throw new NotFound('Refund', id);
      shopRefundId = r.shopRefundId;
      if (r.responseCode !== null) return replay(r);
      if (r.callLeaseUntil !== null && r.callLeaseUntil.getTime() > Date.now()) return undefined;
      return this.takeOver(id, cause, by);
    }, this.config.createWaitMs);
    if (next === undefined) throw new RequestInProgress('shopRefundId', shopRefundId, 1);
    if (next === 'wait') return this.answerRepeat(id, cause, by);
    if ('claimed' in next)
      return next.claimed ? this.send(next, cause, by) : this.answerRepeat(id, cause, by);
    return { ...next, replayed: true };
  }

  /** Under the locks, with no call in flight: send it (never sent), or answer what we know. */
  private takeOver(
    id: string,
    cause: AuditCause,
    by: By,
  ): Promise<CreateResult | Reserved | 'wait'> {
    return transactionFor(this.dataSource, by, async (m): Promise<CreateResult | Reserved | 'wait'> => {
      const refund = await lockRefundById(m, id);
      if (!refund) throw new NotFound('Refund', id);
      if (refund.responseCode !== null) return replay(refund);
      if (refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > Date.now())
        return 'wait';
      if (refund.submitState === 'pending' && refund.callStartedAt === null) {
        // Absences counted while nothing was sent say nothing about the call made now.
        await m.update(
          RefundEntity,
          { id },
          { ...this.claim(), absentCount: 0, firstAbsentAt: null },
        );
        return {
          id,
          claimed: true,
          gatewayInvoiceId: refund.gatewayInvoiceId,
          amount: refund.amount,
          shopRefundId: refund.shopRefundId,
        };
      }
      if (refund.submitState === 'pending') {
        // The call went out and its answer was lost with its process: ask, never re-send.
        await transitionRefund(
          m,
          refund,
          refund.status,
          cause,
          { reason: 'the create call was lost (its lease ran out)' },
          { submitState: 'unknown', nextCheckAt: new Date() },
        );
        await m.update(RefundEntity, { id }, NO_CALL);
      }
      return this.storeCreated(m, refund);
    });
  }

  private claim(): Pick<RefundEntity, 'callOwner' | 'callStartedAt' | 'callLeaseUntil'> {
    return {
      callOwner: INSTANCE_ID,
      callStartedAt: new Date(),
      callLeaseUntil: new Date(Date.now() + callLeaseSeconds(this.config.gateway.timeoutMs) * 1000),
    };
  }

  /**
   * Phases 2 and 3 for a refund this request has claimed: the gateway call with nothing held,
   * then, under the invoice and refund locks, the answer through the state machine.
   */
  private async send(
    claim: Reserved & { claimed: true },
    cause: AuditCause,
    by: By,
  ): Promise<CreateResult> {
    return runGatewayOperation(this.dataSource, {
      name: 'refund.create',
      by,
      call: () =>
        this.gateway.createRefund({
          invoice_id: toGatewayId(claim.gatewayInvoiceId),
          amount: claim.amount.toString(),
          shop_refund_id: claim.shopRefundId,
          callback_url: `${this.config.publicBaseUrl}/webhooks/gateway`,
        }),
      lock: (m) => lockRefundById(m, claim.id),
      missing: () => new NotFound('Refund', claim.id),
      record: (m, refund, reply) => this.createAnswered(m, refund, reply, cause),
    });
  }

  /**
   * Phase 3 of a refund create (the invoice and refund locked): what the answer means
   * (accepted, refused, not known, never sent), through the state machine; a refusal is
   * returned so that the FAILED row commits before the shop hears of it.
   */
  private async createAnswered(
    m: EntityManager,
    refund: RefundEntity,
    reply: CallAnswer<RefundRecord>,
    cause: AuditCause,
  ): Promise<CreateResult | GatewayFailure> {
    let answer: CreateAnswer;
    let record: RefundRecord | null = null;
    let failure: GatewayError | null = null;
    let notSent: GatewayTransportError | null = null;
    if (reply.ok) {
      record = reply.value;
      answer = { kind: 'accepted', status: refundStatusFromGateway(record.status) };
    } else {
      const err = reply.err;
      if (err instanceof GatewayError && err.fatal === true) {
        failure = err;
        record = asRefundRecord(err.data);
        answer = {
          kind: 'fatal',
          recordStatus: record ? (refundStatusFromGateway(record.status) ?? 'FAILED') : null,
        };
      } else if (isOutcomeUnknown(err)) {
        answer = { kind: 'unknown' };
        failure = err instanceof GatewayError ? err : null;
        this.log.warn(
          { shopRefundId: refund.shopRefundId, err: (err as Error).message },
          'refund creation outcome unknown: left to reconciliation',
        );
      } else if (err instanceof GatewayTransportError) {
        answer = { kind: 'unknown' };
        notSent = err;
      } else {
        throw err;
      }
    }
    if (notSent) {
      // Never reached the gateway: stay pending with no claim, so a repeat sends it.
      await m.update(RefundEntity, { id: refund.id }, { ...NO_CALL, callStartedAt: null });
      return new GatewayFailure(
        `gateway not reachable: ${notSent.kind}`,
        null,
        null,
        null,
        503,
      );
    }
    await m.update(RefundEntity, { id: refund.id }, NO_CALL);
    const outcome = outcomeOfCreate(answer);
    const details = { call: 'invoice/create-refund', errorCode: failure?.errorCode ?? null };
    const extra = {
      // An accepted answer is proof the gateway has it, whatever a repeat or the reconciler
      // made of the call meanwhile; otherwise a notification may have settled it first.
      submitState:
        answer.kind === 'accepted' || refund.submitState === 'pending'
          ? outcome.submitState
          : refund.submitState,
      errorCode: failure?.errorCode ?? (record ? record.error_code : null),
      gatewayMessage: failure?.gatewayMessage ?? null,
      ...settlementOf(record),
    };
    if (outcome.rejected && failure && refund.responseCode === null) {
      const problem = new GatewayFailure(
        `the gateway refused refund ${refund.shopRefundId}: ${failure.gatewayMessage}`,
        failure.errorCode,
        failure.gatewayMessage,
        failure.fatal,
        422,
      );
      await transitionRefund(m, refund, outcome.status, cause, details, {
        ...extra,
        responseCode: problem.status,
      });
      await this.storeResponse(m, refund.id, problem.status, {
        problem: storeProblem(problem),
      });
      // Returned, not thrown: the FAILED/rejected row must commit before the shop hears of it.
      return problem;
    }
    // The gateway has it, yet the refund was already settled FAILED (e.g. absent over the
    // window while this call hung): the money may move; an operator must look.
    if (answer.kind === 'accepted' && refund.status === 'FAILED' && outcome.status !== 'FAILED')
      await raiseAttention(
        m,
        { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
        'contradiction',
        `the gateway accepted the refund (${outcome.status}), the refund is FAILED`,
        cause,
      );
    await transitionRefund(m, refund, outcome.status, cause, details, extra);
    if (refund.responseCode !== null) return replay(refund);
    return this.storeCreated(m, refund);
  }

  private async storeCreated(m: EntityManager, refund: RefundEntity): Promise<CreateResult> {
    const fresh = await m.findOneOrFail(RefundEntity, { where: { id: refund.id } });
    const body = toRefundView(fresh);
    await this.storeResponse(m, refund.id, 201, { refund: body });
    return { code: 201, body };
  }

  /** The answer replayed to a repeated request (same status code, same body). */
  private async storeResponse(
    m: EntityManager,
    id: string,
    code: number,
    body: StoredResponse,
  ): Promise<void> {
    await m.query(`UPDATE refunds SET response_code = $2, response_body = $3 WHERE id = $1`, [
      id,
      code,
      JSON.stringify(body),
    ]);
  }

  // ------------------------------------------------------------------ notifications

  /** Applies a verified `type=refund` notification inside the webhook's transaction. */
  async apply(manager: EntityManager, fields: Record<string, string>): Promise<ApplyOutcome> {
    const shopRefundId = fields.shop_refund_id;
    const base = { shopRefundId, shopOrderId: fields.shop_order_id };
    const rejected = (shopOrderId: string | undefined, outcome: string): ApplyOutcome => ({
      shopRefundId,
      shopOrderId,
      status: 'rejected',
      outcome,
      statusEffect: 'not_applied',
    });
    if (!shopRefundId) return rejected(base.shopOrderId, 'no shop_refund_id');
    if (fields.shop_id !== String(this.shopId))
      return rejected(base.shopOrderId, `shop_id ${fields.shop_id} is not ours`);
    const found = await manager.findOne(RefundEntity, {
      where: { shopId: this.shopId, shopRefundId },
    });
    if (!found) return rejected(base.shopOrderId, `unknown refund ${shopRefundId}`);
    const refund = await lockRefundById(manager, found.id);
    if (!refund) return rejected(base.shopOrderId, `unknown refund ${shopRefundId}`);
    const result = { shopRefundId, shopOrderId: refund.shopOrderId };
    if (fields.shop_order_id !== undefined && fields.shop_order_id !== refund.shopOrderId)
      return rejected(
        refund.shopOrderId,
        `does not match the stored refund: shop_order_id ${fields.shop_order_id} is not ${refund.shopOrderId}`,
      );
    const from = refund.status;
    const status = refundStatusFromGateway(fields.status);
    const verdict = await this.applyEvidence(
      manager,
      refund,
      {
        kind: 'record',
        status,
        statusText: String(fields.status),
        reported: { shopId: fields.shop_id, amount: fields.amount, invoiceId: fields.invoice_id },
      },
      'notification',
      { errorCode: fields.error_code ?? null },
      { errorCode: intOrNull(fields.error_code) },
    );
    const changed =
      verdict.kind === 'apply' && (from !== refund.status || verdict.changed === true);
    const statusEffect = statusEffectOf(
      verdict.kind === 'apply' ? { kind: 'apply', changed } : verdict,
      status !== null,
    );
    switch (verdict.kind) {
      case 'attention':
        return verdict.reason === 'mismatch'
          ? rejected(refund.shopOrderId, `does not match the stored refund: ${verdict.detail}`)
          : {
              ...result,
              status: 'stale',
              outcome: `not applied, needs attention: ${verdict.detail}`,
              statusEffect,
            };
      case 'apply':
        return changed
          ? {
              ...result,
              status: 'applied',
              outcome: `refund ${from} -> ${verdict.to}`,
              statusEffect,
            }
          : {
              ...result,
              status: 'stale',
              outcome: `refund already ${from}: ${verdict.to} changes nothing`,
              statusEffect,
            };
      case 'ignore':
        // An unknown word cannot be applied (kept for an operator); a late status is stale.
        return {
          ...result,
          status: status === null ? 'rejected' : 'stale',
          outcome: verdict.reason,
          statusEffect,
        };
      default:
        return { ...result, status: 'stale', outcome: 'nothing to change', statusEffect };
    }
  }

  /**
   * Runs the refund rule on evidence about a locked refund and does what it says in the caller's
   * transaction: status through the state machine, attention, or evidence of absence.
   */
  private async applyEvidence(
    m: EntityManager,
    refund: RefundEntity,
    ev: RefundEvidence,
    cause: AuditCause,
    details: Record<string, unknown>,
    extra: RefundExtra = {},
  ): Promise<RefundVerdict & { changed?: boolean }> {
    const verdict = judgeRefund(refund, ev, {
      checks: this.config.absentChecks,
      windowS: this.config.absentWindowS,
      now: new Date(),
    });
    switch (verdict.kind) {
      case 'apply': {
        const changed = await transitionRefund(m, refund, verdict.to, cause, details, {
          submitState: acceptedState(refund),
          ...extra,
        });
        if (refund.absentCount > 0) {
          await m.update(RefundEntity, { id: refund.id }, { absentCount: 0, firstAbsentAt: null });
          Object.assign(refund, { absentCount: 0, firstAbsentAt: null });
        }
        await this.settleFlag(m, refund, details);
        return { ...verdict, changed };
      }
      case 'attention':
        await raiseAttention(
          m,
          { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
          verdict.reason,
          verdict.detail,
          cause,
        );
        refund.needsAttention = true;
        refund.attentionReason = `${verdict.reason}: ${verdict.detail}`;
        return verdict;
      case 'absent':
        await m.update(
          RefundEntity,
          { id: refund.id },
          { absentCount: verdict.count, firstAbsentAt: verdict.firstAt },
        );
        Object.assign(refund, { absentCount: verdict.count, firstAbsentAt: verdict.firstAt });
        return verdict;
      case 'never_created':
        await transitionRefund(
          m,
          refund,
          'FAILED',
          cause,
          { ...details, reason: 'not listed by invoice/get-refunds', absentChecks: verdict.count },
          { submitState: 'rejected' },
        );
        await this.settleFlag(m, refund, details);
        return verdict;
      default:
        return verdict;
    }
  }

  /** A final status applied by the rule clears a "not final yet" flag (cause gateway, #22). */
  private async settleFlag(
    m: EntityManager,
    refund: RefundEntity,
    details: Record<string, unknown>,
  ): Promise<void> {
    if (!isFinalRefund(refund.status)) return;
    await clearFlagOnFinal(
      m,
      { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
      refund,
      typeof details.call === 'string' ? { call: details.call } : {},
    );
  }

  // ------------------------------------------------------------------ reading

  async listForInvoice(
    shopOrderId: string,
    q: InvoiceRefundsQuery,
    by: By,
  ): Promise<Page<RefundView>> {
    const invoice = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOne({ where: { shopId: this.shopId, shopOrderId } });
    if (!invoice) throw new NotFound('Invoice', shopOrderId);
    // Concurrent refreshes of one invoice's refunds share one invoice/get-refunds call.
    if (q.refresh) await this.refreshes.run(invoice.id, () => this.refreshInvoice(invoice, by));
    return this.page({ shopOrderId, metadata: q.metadata }, q.limit, q.cursor);
  }

  listAll(q: AdminRefundsQuery): Promise<Page<RefundView>> {
    return this.page(
      { shopOrderId: q.shopOrderId, status: q.status, metadata: q.metadata },
      q.limit,
      q.cursor,
    );
  }

  private async page(
    filter: { shopOrderId?: string; status?: string; metadata?: Record<string, string> },
    limit = DEFAULT_PAGE_SIZE,
    cursor?: string,
  ): Promise<Page<RefundView>> {
    const pos = decodeCursor(cursor);
    const qb = this.dataSource
      .getRepository(RefundEntity)
      .createQueryBuilder('r')
      .where('r.shop_id = :shopId', { shopId: this.shopId })
      .orderBy('r.created_at', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .take(limit + 1);
    if (filter.shopOrderId !== undefined)
      qb.andWhere('r.shop_order_id = :so', { so: filter.shopOrderId });
    if (filter.status !== undefined) qb.andWhere('r.status = :st', { st: filter.status });
    if (filter.metadata !== undefined)
      qb.andWhere('r.metadata @> CAST(:md AS jsonb)', { md: JSON.stringify(filter.metadata) });
    if (pos) qb.andWhere(afterCursorSql('r', 'refunds'), { cursorId: pos });
    return toPage(await qb.getMany(), limit, toRefundView);
  }

  // ------------------------------------------------------------------ settling

  /** `?refresh=true`: asks invoice/get-refunds and applies every listed refund we know. */
  private async refreshInvoice(invoice: InvoiceEntity, by: By): Promise<void> {
    if (invoice.invoiceId === null) return;
    // Asked with nothing held; applied under the locks in one short transaction.
    const askedAt = new Date();
    const records = await this.getRefundsOrFail(toGatewayId(invoice.invoiceId));
    await transactionFor(this.dataSource, by, async (m) => {
      await lockInvoice(m, { shopId: this.shopId, shopOrderId: invoice.shopOrderId });
      const refunds = await m.find(RefundEntity, {
        where: { invoicePk: invoice.id },
        lock: { mode: 'pessimistic_write' },
      });
      for (const refund of refunds) {
        const inFlight =
          refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > Date.now();
        if (!isFinalRefund(refund.status) && !inFlight)
          await this.applyListing(m, refund, records, askedAt);
      }
    });
  }

  /**
   * Admin recheck: invoice/get-refunds now (nothing held), the listing applied to this refund
   * through its rule (a final status clears a "not final yet" flag itself). It never
   * unschedules: a WAITING refund keeps (or gets) its next check while its watch lasts. The
   * flag is cleared here only when the refund is final already and the listing says the same.
   */
  async recheck(shopRefundId: string, by: By): Promise<RefundView> {
    const pre = await this.dataSource
      .getRepository(RefundEntity)
      .findOneBy({ shopId: this.shopId, shopRefundId });
    if (!pre) throw new NotFound('Refund', shopRefundId);
    const askedAt = new Date();
    const records = await this.getRefundsOrFail(toGatewayId(pre.gatewayInvoiceId));
    return transactionFor(this.dataSource, by, async (m) => {
      const refund = await lockRefundById(m, pre.id);
      if (!refund) throw new NotFound('Refund', shopRefundId);
      // A create call still in flight is its own evidence: its answer, not this listing, settles it.
      const inFlight =
        refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > Date.now();
      const wasFinal = isFinalRefund(refund.status);
      const outcome = inFlight ? null : await this.applyListing(m, refund, records, askedAt);
      const listed = records.find((r) => r.shop_refund_id === refund.shopRefundId);
      const agrees =
        wasFinal &&
        outcome !== null &&
        outcome !== 'needs_attention' &&
        listed !== undefined &&
        refundStatusFromGateway(listed.status) === refund.status;
      if (agrees && refund.needsAttention)
        await resolveAttention(
          m,
          { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
          { action: 'recheck', gatewayStatus: listed.status },
          'admin',
        );
      else await this.keepWatched(m, refund);
      return toRefundView(await m.findOneByOrFail(RefundEntity, { id: refund.id }));
    });
  }

  private async getRefundsOrFail(invoiceId: number): Promise<RefundRecord[]> {
    try {
      return await this.gateway.getRefunds(invoiceId);
    } catch (err) {
      if (err instanceof GatewayError)
        throw new GatewayFailure(
          'invoice/get-refunds failed',
          err.errorCode,
          err.gatewayMessage,
          err.fatal,
        );
      if (err instanceof GatewayTransportError)
        throw new GatewayFailure(`invoice/get-refunds failed: ${err.kind}`, null, null, null);
      throw err;
    }
  }

  /**
   * Settles one claimed refund through invoice/get-refunds in atomic phases: read it, ask with
   * nothing held, then apply the listing under the invoice and refund locks. A submit still in
   * flight is left to finish; one whose lease ran out is settled by this listing, never re-sent.
   */
  async reconcile(id: string): Promise<ReconcileOutcome> {
    const pre = await this.dataSource.getRepository(RefundEntity).findOneBy({ id });
    if (!pre) return 'done';
    if (isFinalRefund(pre.status)) {
      await this.dataSource.manager.update(
        RefundEntity,
        { id },
        { nextCheckAt: null, leaseUntil: null },
      );
      return 'done';
    }
    if (pre.callLeaseUntil !== null && pre.callLeaseUntil.getTime() > Date.now()) {
      await this.dataSource.manager.update(
        RefundEntity,
        { id },
        { nextCheckAt: pre.callLeaseUntil, leaseUntil: null },
      );
      return 'waiting';
    }
    const askedAt = new Date();
    return runGatewayOperation(this.dataSource, {
      name: 'refund.reconcile',
      // The reconciler's job: its writes record no key.
      by: undefined,
      call: () => this.gateway.getRefunds(toGatewayId(pre.gatewayInvoiceId)),
      lock: (m) => lockRefundById(m, id),
      missing: (): ReconcileOutcome => 'done',
      record: (m, refund, answer) => this.listed(m, refund, answer, askedAt),
    });
  }

  /** Phase 3 of a reconciliation (the refund locked): the listing through the refund rule. */
  private async listed(
    m: EntityManager,
    refund: RefundEntity,
    answer: CallAnswer<RefundRecord[]>,
    askedAt: Date,
  ): Promise<ReconcileOutcome> {
    const id = refund.id;
    if (isFinalRefund(refund.status)) {
      await m.update(RefundEntity, { id }, { nextCheckAt: null, leaseUntil: null });
      return 'done';
    }
    if (refund.callLeaseUntil !== null && refund.callLeaseUntil.getTime() > Date.now())
      return (await this.reschedule(m, refund)) ? 'needs_attention' : 'waiting';
    if (refund.callLeaseUntil !== null) {
      // The submit's owner died: the row is free; this listing settles what happened.
      await m.update(RefundEntity, { id }, NO_CALL);
      if (refund.submitState === 'pending')
        await transitionRefund(
          m,
          refund,
          refund.status,
          'reconciliation',
          { reason: 'the create call was lost (its lease ran out)' },
          { submitState: 'unknown' },
        );
    }
    if (!answer.ok) {
      this.log.warn(
        { shopRefundId: refund.shopRefundId, err: (answer.err as Error).message },
        'invoice/get-refunds failed; will retry',
      );
      return (await this.reschedule(m, refund)) ? 'needs_attention' : 'gateway_error';
    }
    const outcome = await this.applyListing(m, refund, answer.value, askedAt);
    if (isFinalRefund(refund.status)) return outcome;
    // Flagged or not, a WAITING refund stays watched: the flag is beside the status.
    const flagged = await this.reschedule(m, refund);
    return flagged || refund.needsAttention ? 'needs_attention' : outcome;
  }

  /** Applies what the gateway lists for one refund (locked by the caller), cause reconciliation. */
  private async applyListing(
    m: EntityManager,
    refund: RefundEntity,
    records: RefundRecord[],
    /** When the listing was asked for: a list asked before (or just after) the send proves nothing. */
    askedAt: Date,
  ): Promise<ReconcileOutcome> {
    const record = records.find((r) => r.shop_refund_id === refund.shopRefundId);
    if (!record) {
      const sentAt = (refund.callStartedAt ?? refund.createdAt).getTime();
      const graceOver = sentAt + this.config.refunds.reconcileGraceS * 1000 <= askedAt.getTime();
      if (!graceOver) return 'waiting';
      const v = await this.applyEvidence(m, refund, { kind: 'absent' }, 'reconciliation', {
        call: 'invoice/get-refunds',
      });
      return v.kind === 'never_created' ? 'not_created' : 'waiting';
    }
    const v = await this.applyEvidence(
      m,
      refund,
      {
        kind: 'record',
        status: refundStatusFromGateway(record.status),
        statusText: String(record.status),
        reported: { amount: record.amount, invoiceId: String(record.invoice_id) },
      },
      'reconciliation',
      { call: 'invoice/get-refunds' },
      {
        errorCode: record.error_code ?? null,
        ...settlementOf(record),
        // The gateway's processed_at (offset-less times in its +03:00), not our clock's.
        ...processedAtOf(record, this.config.gateway.nowOffset),
      },
    );
    if (v.kind === 'attention') return 'needs_attention';
    return isFinalRefund(refund.status) ? 'settled' : 'waiting';
  }

  /**
   * Next check with backoff; past the deadline flagged and checked every WATCH_INTERVAL_S; past
   * the watch end flagged `watch_ended` and no longer checked. Returns true when the watch
   * flagged it.
   */
  private async reschedule(m: EntityManager, refund: RefundEntity): Promise<boolean> {
    const attempts = refund.checkAttempts + 1;
    const next = this.nextCheck(refund, attempts);
    await m.update(
      RefundEntity,
      { id: refund.id },
      { checkAttempts: attempts, nextCheckAt: next.nextAt, leaseUntil: null },
    );
    refund.nextCheckAt = next.nextAt;
    if (next.flag === null || !watchMayFlag(refund, next.flag)) return false;
    await raiseAttention(
      m,
      { object: 'refund', id: refund.id, shopId: refund.shopRefundId, status: refund.status },
      next.flag,
      next.flag === 'deadline'
        ? 'still WAITING past its check deadline; still checked until the watch ends'
        : WATCH_ENDED_DETAIL,
      'reconciliation',
    );
    return true;
  }

  private nextCheck(refund: RefundEntity, attempts: number): WatchStep {
    return nextRefundCheck({
      now: new Date(),
      attempts,
      graceS: this.config.refunds.reconcileGraceS,
      deadline: refund.checkDeadline,
      createdAt: refund.createdAt,
      watch: this.config.watch,
    });
  }

  /** A WAITING refund within its watch always has a next check (a recheck never drops it). */
  private async keepWatched(m: EntityManager, refund: RefundEntity): Promise<void> {
    if (isFinalRefund(refund.status) || refund.nextCheckAt !== null) return;
    const next = this.nextCheck(refund, refund.checkAttempts);
    if (next.nextAt === null) return;
    await m.update(RefundEntity, { id: refund.id }, { nextCheckAt: next.nextAt });
    refund.nextCheckAt = next.nextAt;
  }
}

/** SHA-256 of the request as the shop sent it, keys in a fixed order. */
/** Kept with the row: the request as compared (amount by value, metadata, currency when given). */
function fingerprintOf(shopOrderId: string, dto: CreateRefundDto): string {
  const canonical = canonicalJson({
    v: 2,
    shopOrderId,
    shopRefundId: dto.shopRefundId,
    amount: Amount.parse(dto.amount).canonicalText(),
    currency: dto.currency ?? null,
    metadata: metadataOf(dto.metadata),
  });
  return sha256Hex(canonical);
}

/**
 * A repeat's answer: the refund as it is now, with the first answer's status code (a refund
 * that was WAITING then may be SUCCESS now); a stored problem is given again as it was.
 */
function replay(refund: RefundEntity): CreateResult {
  const body = refund.responseBody as StoredResponse;
  if (body.problem) {
    const problem = replayProblem(body.problem);
    problem.replayed = true;
    throw problem;
  }
  return { code: refund.responseCode ?? 201, body: toRefundView(refund), replayed: true };
}

/** Once the gateway reports a refund, it exists there: pending/unknown become accepted. */
function acceptedState(refund: RefundEntity): RefundEntity['submitState'] {
  return refund.submitState === 'rejected' ? 'rejected' : 'accepted';
}

function settlementOf(
  record: RefundRecord | null,
): Partial<Pick<RefundEntity, 'settlementAmount' | 'settlementCurrency'>> {
  if (!record || typeof record.settlement_amount !== 'string') return {};
  try {
    return {
      settlementAmount: Amount.fromText(record.settlement_amount),
      settlementCurrency: record.settlement_currency ?? null,
    };
  } catch {
    return {};
  }
}

function asRefundRecord(data: unknown): RefundRecord | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const rec = data as Partial<RefundRecord>;
  return typeof rec.shop_refund_id === 'string' && typeof rec.status === 'string'
    ? (rec as RefundRecord)
    : null;
}

function intOrNull(text: string | undefined): number | null {
  return text !== undefined && /^-?\d+$/.test(text) ? Number(text) : null;
}

function processedAtOf(record: RefundRecord, gatewayOffset: string): { processedAt?: Date } {
  const processedAt = parseGatewayTime(record.processed_at, gatewayOffset);
  return processedAt === null ? {} : { processedAt };
}
