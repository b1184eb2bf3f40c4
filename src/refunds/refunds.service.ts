import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import {
  GatewayFailure,
  IdempotencyConflict,
  InvalidState,
  NotFound,
  ValidationFailed,
} from '../common/errors';
import { logger } from '../common/logger';
import { Amount } from '../common/money';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
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
import {
  NotificationAppliers,
  type ApplyOutcome,
  type NotificationApplier,
} from '../notifications/notification-appliers';
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
import { lockRefundById, transitionRefund } from './refund-transitions';
import {
  backoffSeconds,
  CreateAnswer,
  fitsPaidAmount,
  isFinalRefund,
  mismatchOf,
  outcomeOfCreate,
  refundStatusFromGateway,
} from './refund.state';

interface StoredResponse {
  refund?: RefundView;
  problem?: StoredProblem;
}

export interface CreateResult {
  code: number;
  body: RefundView;
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
  private readonly shopId: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly appliers: NotificationAppliers,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.shopId = config.gateway.shopId;
  }

  onModuleInit(): void {
    this.appliers.register('refund', this);
  }

  // ------------------------------------------------------------------ create

  async create(
    shopOrderId: string,
    dto: CreateRefundDto,
    cause: Extract<AuditCause, 'api' | 'admin'>,
  ): Promise<CreateResult> {
    const amount = Amount.parse(dto.amount);
    if (!amount.isPositive())
      throw new ValidationFailed([{ field: 'amount', message: 'must be above zero' }]);
    const fingerprint = fingerprintOf(shopOrderId, dto);
    const id = await this.reserve(shopOrderId, dto, amount, fingerprint, cause);
    return this.submit(id, cause);
  }

  /**
   * First transaction: under the invoice's row lock, check the status and the paid amount and
   * commit the refund as WAITING/pending before the gateway hears of it, so a crash after this
   * leaves a row that reconciliation settles. Returns the refund's id (new or the same request's).
   */
  private reserve(
    shopOrderId: string,
    dto: CreateRefundDto,
    amount: Amount,
    fingerprint: string,
    cause: AuditCause,
  ): Promise<string> {
    return this.dataSource.transaction(async (m) => {
      const invoice = await lockInvoice(m, { shopId: this.shopId, shopOrderId });
      if (!invoice) throw new NotFound('Invoice', shopOrderId);
      const existing = await m.findOne(RefundEntity, {
        where: { shopId: this.shopId, shopRefundId: dto.shopRefundId },
      });
      if (existing) return sameRequest(existing, fingerprint);
      if (invoice.status !== 'succeeded')
        throw new InvalidState('Invoice', shopOrderId, invoice.status, 'refund');
      if (dto.currency !== undefined && dto.currency !== invoice.currency) {
        throw new ValidationFailed([
          { field: 'currency', message: `must be the invoice currency ${invoice.currency}` },
        ]);
      }
      if (invoice.invoiceId === null)
        throw new InvalidState('Invoice', shopOrderId, 'without gateway invoice id', 'refund');
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
                              amount, currency, status, submit_state, next_check_at, check_deadline)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'WAITING', 'pending',
                 now() + make_interval(secs => $9), now() + make_interval(secs => $10))
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
        ],
      )) as Array<{ id: string }>;
      if (inserted.length === 0) {
        // The same shopRefundId was committed for another invoice while we held this one's lock.
        const raced = await m.findOneOrFail(RefundEntity, {
          where: { shopId: this.shopId, shopRefundId: dto.shopRefundId },
        });
        return sameRequest(raced, fingerprint);
      }
      await this.audit.record(m, {
        entityType: 'refund',
        entityId: dto.shopRefundId,
        fromStatus: null,
        toStatus: 'WAITING',
        cause,
        details: { shopOrderId, amount: amount.toString(), submitState: 'pending' },
      });
      return inserted[0].id;
    });
  }

  /**
   * Second transaction: with the invoice and refund locked, a refund still pending with no stored
   * answer is sent to the gateway once; every other request (a repeat, a concurrent duplicate)
   * waits on the lock and replays the stored answer.
   */
  private async submit(id: string, cause: AuditCause): Promise<CreateResult> {
    const result = await this.dataSource.transaction(
      async (m): Promise<CreateResult | GatewayFailure> => {
        const refund = await lockRefundById(m, id);
        if (!refund) throw new NotFound('Refund', id);
        if (refund.responseCode !== null) return replay(refund);
        if (refund.submitState !== 'pending') {
          // Settled by reconciliation before any answer was stored (e.g. after a crash): report it as it is now.
          return this.storeCreated(m, refund);
        }
        let answer: CreateAnswer;
        let record: RefundRecord | null = null;
        let failure: GatewayError | null = null;
        try {
          record = await this.gateway.createRefund({
            invoice_id: toGatewayId(refund.gatewayInvoiceId),
            amount: refund.amount.toString(),
            shop_refund_id: refund.shopRefundId,
            callback_url: `${this.config.publicBaseUrl}/webhooks/gateway`,
          });
          answer = { kind: 'accepted', status: refundStatusFromGateway(record.status) };
        } catch (err) {
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
            // Never reached the gateway: stay pending, so a repeat of the request sends it.
            throw new GatewayFailure(`gateway not reachable: ${err.kind}`, null, null, null, 503);
          } else {
            throw err;
          }
        }
        const outcome = outcomeOfCreate(answer);
        const details = { call: 'invoice/create-refund', errorCode: failure?.errorCode ?? null };
        const extra = {
          submitState: outcome.submitState,
          errorCode: failure?.errorCode ?? (record ? record.error_code : null),
          gatewayMessage: failure?.gatewayMessage ?? null,
          ...settlementOf(record),
        };
        if (outcome.rejected && failure) {
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
        await transitionRefund(m, refund, outcome.status, cause, details, extra);
        return this.storeCreated(m, refund);
      },
    );
    if (result instanceof GatewayFailure) throw result;
    return result;
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
    if (!shopRefundId) return { ...base, status: 'rejected', outcome: 'no shop_refund_id' };
    if (fields.shop_id !== String(this.shopId))
      return { ...base, status: 'rejected', outcome: `shop_id ${fields.shop_id} is not ours` };
    const found = await manager.findOne(RefundEntity, {
      where: { shopId: this.shopId, shopRefundId },
    });
    if (!found) return { ...base, status: 'rejected', outcome: `unknown refund ${shopRefundId}` };
    const refund = await lockRefundById(manager, found.id);
    if (!refund) return { ...base, status: 'rejected', outcome: `unknown refund ${shopRefundId}` };
    const result = { shopRefundId, shopOrderId: refund.shopOrderId };
    const mismatch =
      mismatchOf(refund, {
        shopId: fields.shop_id,
        amount: fields.amount,
        invoiceId: fields.invoice_id,
      }) ??
      (fields.shop_order_id !== undefined && fields.shop_order_id !== refund.shopOrderId
        ? `shop_order_id ${fields.shop_order_id} is not ${refund.shopOrderId}`
        : null);
    if (mismatch)
      return {
        ...result,
        status: 'rejected',
        outcome: `does not match the stored refund: ${mismatch}`,
      };
    const to = refundStatusFromGateway(fields.status);
    if (!to)
      return { ...result, status: 'rejected', outcome: `unknown refund status ${fields.status}` };
    const from = refund.status;
    const changed = await transitionRefund(
      manager,
      refund,
      to,
      'notification',
      { errorCode: fields.error_code ?? null },
      {
        submitState: acceptedState(refund),
        errorCode: intOrNull(fields.error_code),
      },
    );
    return changed
      ? { ...result, status: 'applied', outcome: `refund ${from} -> ${to}` }
      : { ...result, status: 'stale', outcome: `refund already ${from}: ${to} changes nothing` };
  }

  // ------------------------------------------------------------------ reading

  async listForInvoice(shopOrderId: string, q: InvoiceRefundsQuery): Promise<Page<RefundView>> {
    const invoice = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOne({ where: { shopId: this.shopId, shopOrderId } });
    if (!invoice) throw new NotFound('Invoice', shopOrderId);
    if (q.refresh) await this.refreshInvoice(invoice);
    return this.page({ shopOrderId }, q.limit, q.cursor);
  }

  listAll(q: AdminRefundsQuery): Promise<Page<RefundView>> {
    return this.page({ shopOrderId: q.shopOrderId, status: q.status }, q.limit, q.cursor);
  }

  private async page(
    filter: { shopOrderId?: string; status?: string },
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
    if (pos) qb.andWhere('(r.created_at, r.id) < (:ca, :cid)', { ca: pos.createdAt, cid: pos.id });
    return toPage(await qb.getMany(), limit, toRefundView);
  }

  // ------------------------------------------------------------------ settling

  /** `?refresh=true`: asks invoice/get-refunds and applies every listed refund we know. */
  private async refreshInvoice(invoice: InvoiceEntity): Promise<void> {
    if (invoice.invoiceId === null) return;
    await this.dataSource.transaction(async (m) => {
      await lockInvoice(m, { shopId: this.shopId, shopOrderId: invoice.shopOrderId });
      const records = await this.getRefundsOrFail(toGatewayId(invoice.invoiceId));
      const refunds = await m.find(RefundEntity, {
        where: { invoicePk: invoice.id },
        lock: { mode: 'pessimistic_write' },
      });
      for (const refund of refunds) {
        if (!isFinalRefund(refund.status)) await this.applyListing(m, refund, records);
      }
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
   * Settles one claimed refund through invoice/get-refunds, holding the invoice and refund locks
   * during the (read-only) call so that a creation in flight finishes first and the listing is
   * never older than the refund's own state. Clears the lease and sets the next check.
   */
  reconcile(id: string): Promise<ReconcileOutcome> {
    return this.dataSource.transaction(async (m) => {
      const refund = await lockRefundById(m, id);
      if (!refund) return 'done';
      if (isFinalRefund(refund.status)) {
        await m.update(RefundEntity, { id }, { nextCheckAt: null, leaseUntil: null });
        return 'done';
      }
      let records: RefundRecord[];
      try {
        records = await this.gateway.getRefunds(toGatewayId(refund.gatewayInvoiceId));
      } catch (err) {
        this.log.warn(
          { shopRefundId: refund.shopRefundId, err: (err as Error).message },
          'invoice/get-refunds failed; will retry',
        );
        return (await this.reschedule(m, refund)) ? 'needs_attention' : 'gateway_error';
      }
      const outcome = await this.applyListing(m, refund, records);
      if (isFinalRefund(refund.status)) return outcome;
      return (await this.reschedule(m, refund)) ? 'needs_attention' : outcome;
    });
  }

  /** Applies what the gateway lists for one refund (locked by the caller), cause reconciliation. */
  private async applyListing(
    m: EntityManager,
    refund: RefundEntity,
    records: RefundRecord[],
  ): Promise<ReconcileOutcome> {
    const record = records.find((r) => r.shop_refund_id === refund.shopRefundId);
    if (!record) {
      const graceOver =
        refund.createdAt.getTime() + this.config.refunds.reconcileGraceS * 1000 <= Date.now();
      if ((refund.submitState === 'pending' || refund.submitState === 'unknown') && graceOver) {
        // Not listed after the grace period: the creation never reached the gateway.
        await transitionRefund(
          m,
          refund,
          'FAILED',
          'reconciliation',
          { reason: 'not listed by invoice/get-refunds' },
          { submitState: 'rejected' },
        );
        return 'not_created';
      }
      return 'waiting';
    }
    const mismatch = mismatchOf(refund, {
      amount: record.amount,
      invoiceId: String(record.invoice_id),
    });
    if (mismatch) {
      this.log.error(
        { shopRefundId: refund.shopRefundId, mismatch },
        'gateway refund record does not match the stored refund',
      );
      await m.update(RefundEntity, { id: refund.id }, { needsAttention: true });
      return 'needs_attention';
    }
    const to = refundStatusFromGateway(record.status);
    if (!to) return 'waiting';
    await transitionRefund(
      m,
      refund,
      to,
      'reconciliation',
      { call: 'invoice/get-refunds' },
      {
        submitState: acceptedState(refund),
        errorCode: record.error_code ?? null,
        ...settlementOf(record),
      },
    );
    return isFinalRefund(refund.status) ? 'settled' : 'waiting';
  }

  /** Next check with backoff; past the deadline the refund is flagged for an operator. Returns true when flagged. */
  private async reschedule(m: EntityManager, refund: RefundEntity): Promise<boolean> {
    const attempts = refund.checkAttempts + 1;
    if (refund.checkDeadline && refund.checkDeadline.getTime() <= Date.now()) {
      await m.update(
        RefundEntity,
        { id: refund.id },
        { checkAttempts: attempts, nextCheckAt: null, leaseUntil: null, needsAttention: true },
      );
      this.log.error(
        { shopRefundId: refund.shopRefundId },
        'refund still WAITING past its check deadline: needs attention',
      );
      return true;
    }
    const next = new Date(
      Date.now() + backoffSeconds(this.config.refunds.reconcileGraceS, attempts) * 1000,
    );
    await m.update(
      RefundEntity,
      { id: refund.id },
      { checkAttempts: attempts, nextCheckAt: next, leaseUntil: null },
    );
    return false;
  }
}

/** SHA-256 of the request as the shop sent it, keys in a fixed order. */
function fingerprintOf(shopOrderId: string, dto: CreateRefundDto): string {
  const canonical = JSON.stringify({
    shopOrderId,
    shopRefundId: dto.shopRefundId,
    amount: dto.amount,
    currency: dto.currency ?? null,
  });
  return createHash('sha256').update(canonical).digest('hex');
}

function sameRequest(existing: RefundEntity, fingerprint: string): string {
  if (existing.requestFingerprint !== fingerprint)
    throw new IdempotencyConflict('shopRefundId', existing.shopRefundId);
  return existing.id;
}

function replay(refund: RefundEntity): CreateResult {
  const body = refund.responseBody as StoredResponse;
  if (body.problem) throw replayProblem(body.problem);
  return { code: refund.responseCode ?? 201, body: body.refund ?? toRefundView(refund) };
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
