import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DataSource, EntityManager, type QueryDeepPartialEntity } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import {
  DomainError,
  GatewayFailure,
  IdempotencyConflict,
  InvalidState,
  NotFound,
  ValidationFailed,
} from '../common/errors';
import { logger } from '../common/logger';
import { Amount } from '../common/money';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { toProblem } from '../common/problem.filter';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayError, GatewayTransportError, isOutcomeUnknown } from '../gateway/gateway.errors';
import { GatewayService } from '../gateway/gateway.service';
import { toGatewayId } from '../gateway/ids';
import type {
  InputPayway,
  InvoiceCheckRecord,
  InvoiceCreateResult,
  InvoiceRecord,
} from '../gateway/gateway.types';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import { checkPaymentAgainstPayway } from '../payway-config/payway-validation';
import type { CreateInvoiceDto, QuoteInvoiceDto } from './dto/create-invoice.dto';
import type { ListInvoicesQuery } from './dto/invoice-queries.dto';
import { InvoiceEntity, type PaymentTokenInfo, type RedirectData } from './invoice.entity';
import { gatewayCreateRequest, requestFingerprint } from './invoice-request';
import {
  canCaptureOrRelease,
  isFinal,
  statusFromGatewayNumber,
  type InvoiceStatus,
} from './invoice.state';
import { lockInvoice, transitionInvoice } from './invoice-transitions';
import { payerStep, redirectParams, type PayerStep } from './redirect-page';
import { storePaymentToken, tokenInfoFromCheck } from './payment-token';
import { toInvoiceView, type InvoiceView } from './invoice.view';

export interface QuoteField {
  name: string;
  label: Record<string, string> | null;
  hint: Record<string, string> | null;
  example: string | null;
  regex: string | null;
  prefix: string | null;
}

export interface QuoteView {
  payerPrice: string;
  psCurrency: number;
  paymethodId: number;
  paymethodName: string;
  fields: QuoteField[];
  manual: Record<string, string>;
  warning: Record<string, string>;
  info: Record<string, unknown>;
}

/** A create's answer: replayed as is (code and body) for an identical repeat. */
export interface StoredResponse {
  code: number;
  body: unknown;
}

const CREATE_PATH = '/api/v1/invoices';

/**
 * Payments: quote, idempotent create (single- and two-step), charge/unhold of a hold, status
 * refresh, listing, and the payer's redirect step. Every status change goes through the invoice
 * state machine (transitionInvoice) and is audited in the transaction that makes it.
 */
@Injectable()
export class InvoicesService {
  private readonly log = logger.child({ component: 'invoices' });
  private readonly audit = new AuditService();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
  ) {}

  private get shopId(): number {
    return this.config.gateway.shopId;
  }

  private get webhookUrl(): string {
    return `${this.config.publicBaseUrl}/webhooks/gateway`;
  }

  view(inv: InvoiceEntity, admin = false): InvoiceView {
    return toInvoiceView(inv, this.config.publicBaseUrl, { admin });
  }

  // ------------------------------------------------------------------ quote

  async quote(dto: QuoteInvoiceDto): Promise<QuoteView> {
    await this.validateAgainstPayway(dto, false);
    let r;
    try {
      r = await this.gateway.tryInvoice({
        shop_order_id: dto.shopOrderId,
        amount: dto.amount,
        currency: dto.currency,
        payway: dto.payway,
        description: dto.description,
      });
    } catch (err) {
      throw gatewayFailure(err, 'invoice/try');
    }
    return {
      payerPrice: String(r.payer_price),
      psCurrency: r.ps_currency,
      paymethodId: r.paymethod_id,
      paymethodName: r.paymethod_name,
      fields: Object.entries(r.add_ons_config ?? {}).map(([name, f]) => ({
        name,
        label: f.label ?? null,
        hint: f.comment ?? null,
        example: f.example ?? null,
        regex: f.regex ?? null,
        prefix: f.prefix ?? null,
      })),
      manual: r.manual ?? {},
      warning: r.warning ?? {},
      info: r.info ?? {},
    };
  }

  /** Payway known and active, currency, amount bounds (exact) and, on create, the extras. */
  private async validateAgainstPayway(
    dto: QuoteInvoiceDto & { extras?: Record<string, unknown> },
    withExtras: boolean,
  ): Promise<void> {
    const payway = (await this.payways.findPayway('payment', dto.payway)) as
      InputPayway | undefined;
    const errors = checkPaymentAgainstPayway(
      {
        payway: dto.payway,
        amount: Amount.parse(dto.amount),
        currency: dto.currency,
        extras: dto.extras,
        checkExtras: withExtras,
      },
      payway,
    );
    if (errors.length > 0) throw new ValidationFailed(errors);
  }

  // ------------------------------------------------------------------ create

  /**
   * Idempotent by shopOrderId: the row is written `pending` and committed before the gateway is
   * called; the call runs under the row lock, so concurrent identical requests wait and replay
   * the stored answer (one gateway call). A different body for the same id is a conflict.
   */
  async create(dto: CreateInvoiceDto): Promise<StoredResponse> {
    await this.validateAgainstPayway(dto, true);
    const fingerprint = requestFingerprint(dto);
    const tokenInfo = dto.paymentToken ? await this.shownInfoOfToken(dto.paymentToken) : null;

    const inserted = await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(InvoiceEntity)
      .values({
        shopId: this.shopId,
        shopOrderId: dto.shopOrderId,
        requestFingerprint: fingerprint,
        status: 'pending',
        amount: Amount.parse(dto.amount),
        currency: dto.currency,
        payway: dto.payway,
        description: dto.description ?? null,
        twoStep: dto.twoStep ?? false,
        payToken: randomBytes(32).toString('base64url'),
        savePaymentToken: dto.savePaymentToken ?? false,
        usedPaymentToken: dto.paymentToken !== undefined,
        // jsonb column: TypeORM's deep-partial type cannot see through Record<string, unknown>.
        paymentTokenInfo: tokenInfo as QueryDeepPartialEntity<PaymentTokenInfo> | null,
        extras: dto.extras && Object.keys(dto.extras).length > 0 ? dto.extras : null,
        clientIp: dto.clientIp ?? null,
        successUrl: dto.successUrl ?? null,
        failedUrl: dto.failedUrl ?? null,
        // Should the answer be lost (crash, time-out), reconciliation settles it with invoice/check.
        nextCheckAt: this.secondsFromNow(this.config.invoices.reconcileGraceS),
        checkDeadline: this.secondsFromNow(this.config.invoices.reconcileMaxS),
      })
      .orIgnore()
      .returning(['id'])
      .execute();
    const isNew = (inserted.raw as unknown[]).length > 0;
    if (!isNew) {
      const existing = await this.dataSource
        .getRepository(InvoiceEntity)
        .findOneBy({ shopId: this.shopId, shopOrderId: dto.shopOrderId });
      if (existing && existing.requestFingerprint !== fingerprint)
        throw new IdempotencyConflict('shopOrderId', dto.shopOrderId);
    }

    const outcome = await this.dataSource.transaction(async (m) => {
      const inv = await lockInvoice(m, { shopId: this.shopId, shopOrderId: dto.shopOrderId });
      if (!inv) throw new NotFound('Invoice', dto.shopOrderId);
      if (inv.requestFingerprint !== fingerprint)
        throw new IdempotencyConflict('shopOrderId', dto.shopOrderId);
      if (inv.responseCode !== null) return { code: inv.responseCode, body: inv.responseBody };
      if (inv.status !== 'pending') {
        // Settled by reconciliation after a lost answer: what we know now is the answer.
        return this.storeResponse(m, inv, 201, this.view(await this.reload(m, inv)));
      }
      return this.callCreate(m, inv, dto);
    });
    if (outcome instanceof DomainError) throw outcome;
    return outcome;
  }

  private async callCreate(
    m: EntityManager,
    inv: InvoiceEntity,
    dto: CreateInvoiceDto,
  ): Promise<StoredResponse | DomainError> {
    const call = dto.twoStep ? 'invoice/hold' : 'invoice/create';
    const req = gatewayCreateRequest(dto, this.webhookUrl);
    let result: InvoiceCreateResult;
    try {
      result = dto.twoStep
        ? await this.gateway.holdInvoice(req)
        : await this.gateway.createInvoice(req);
    } catch (err) {
      return this.createFailed(m, inv, call, err);
    }
    const redirect: RedirectData | null =
      (result.method === 'POST' || result.method === 'GET') &&
      typeof result.url === 'string' &&
      result.url !== ''
        ? { method: result.method, url: result.url, params: redirectParams(result.data) }
        : null;
    await m.update(InvoiceEntity, { id: inv.id }, { invoiceId: String(result.id), redirect });
    Object.assign(inv, { invoiceId: String(result.id), redirect });
    // With redirect data the payer acts next; without (token charge, payer-less payway) the
    // notification brings the outcome.
    await transitionInvoice(m, inv, redirect ? 'awaiting_payer' : 'created', 'gateway', {
      call,
      invoiceId: String(result.id),
    });
    return this.storeResponse(m, inv, 201, this.view(await this.reload(m, inv)));
  }

  /**
   * Fatal: rejected, 502. Non-fatal: the gateway took it and will notify, 201 `created`.
   * Unknown outcome (time-out, unclassified code): `unknown`, checked soon, never re-sent.
   * Not sent at all (connection refused): nothing changes, a repeat may call again.
   */
  private async createFailed(
    m: EntityManager,
    inv: InvoiceEntity,
    call: string,
    err: unknown,
  ): Promise<StoredResponse | DomainError> {
    if (err instanceof GatewayError && err.fatal === true) {
      await transitionInvoice(
        m,
        inv,
        'rejected',
        'gateway',
        { call, errorCode: err.errorCode },
        { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage },
      );
      const problem = { ...toProblem(gatewayFailure(err, call)), instance: CREATE_PATH };
      return this.storeResponse(m, inv, problem.status, problem);
    }
    if (err instanceof GatewayError && err.fatal === false) {
      await transitionInvoice(
        m,
        inv,
        'created',
        'gateway',
        { call, errorCode: err.errorCode, nonFatal: true },
        { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage, gatewayStatus: null },
      );
      return this.storeResponse(m, inv, 201, this.view(await this.reload(m, inv)));
    }
    if (isOutcomeUnknown(err)) {
      const errorCode = err instanceof GatewayError ? err.errorCode : null;
      await transitionInvoice(
        m,
        inv,
        'unknown',
        'gateway',
        { call, reason: describe(err) },
        errorCode !== null ? { errorCode } : {},
      );
      await m.update(InvoiceEntity, { id: inv.id }, { nextCheckAt: new Date() });
      this.log.warn(
        { shopOrderId: inv.shopOrderId, call, reason: describe(err) },
        'invoice outcome unknown; reconciliation will check it',
      );
      return this.storeResponse(m, inv, 201, this.view(await this.reload(m, inv)));
    }
    return gatewayFailure(err, call);
  }

  private async storeResponse(
    m: EntityManager,
    inv: InvoiceEntity,
    code: number,
    body: unknown,
  ): Promise<StoredResponse> {
    await m.update(
      InvoiceEntity,
      { id: inv.id },
      { responseCode: code, responseBody: body as object },
    );
    return { code, body };
  }

  private reload(m: EntityManager, inv: InvoiceEntity): Promise<InvoiceEntity> {
    return m.findOneByOrFail(InvoiceEntity, { id: inv.id });
  }

  /** The shown facts (masked account, expiry) of a token an earlier invoice of ours received. */
  private async shownInfoOfToken(token: string): Promise<PaymentTokenInfo | null> {
    const source = await this.dataSource.getRepository(InvoiceEntity).findOne({
      where: { shopId: this.shopId, paymentToken: token },
      order: { createdAt: 'DESC' },
    });
    return source?.paymentTokenInfo ?? null;
  }

  // ------------------------------------------------------------------ read

  async get(shopOrderId: string, refresh: boolean, admin: boolean): Promise<InvoiceView> {
    if (refresh) await this.refresh(shopOrderId);
    const inv = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOneBy({ shopId: this.shopId, shopOrderId });
    if (!inv) throw new NotFound('Invoice', shopOrderId);
    return this.view(inv, admin);
  }

  /** invoice/check, applied through the state machine (cause reconciliation), token kept. */
  async refresh(shopOrderId: string): Promise<void> {
    const exists = await this.dataSource
      .getRepository(InvoiceEntity)
      .existsBy({ shopId: this.shopId, shopOrderId });
    if (!exists) throw new NotFound('Invoice', shopOrderId);
    let record: InvoiceCheckRecord;
    try {
      record = await this.gateway.checkInvoice(shopOrderId);
    } catch (err) {
      // The gateway never saw it: nothing to apply; reconciliation decides what absence means.
      if (err instanceof GatewayError && err.isAbsent) return;
      throw gatewayFailure(err, 'invoice/check');
    }
    await this.dataSource.transaction(async (m) => {
      const inv = await lockInvoice(m, { shopId: this.shopId, shopOrderId });
      if (inv) await applyCheckRecord(m, inv, record, 'reconciliation');
    });
  }

  async list(q: ListInvoicesQuery, admin: boolean): Promise<Page<InvoiceView>> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(q.cursor);
    const qb = this.dataSource
      .getRepository(InvoiceEntity)
      .createQueryBuilder('i')
      .where('i.shop_id = :shopId', { shopId: this.shopId });
    if (q.status) qb.andWhere('i.status = :status', { status: q.status });
    if (q.payway) qb.andWhere('i.payway = :payway', { payway: q.payway });
    if (q.createdFrom) qb.andWhere('i.created_at >= :from', { from: new Date(q.createdFrom) });
    if (q.createdTo) qb.andWhere('i.created_at < :to', { to: new Date(q.createdTo) });
    if (cursor)
      qb.andWhere('(i.created_at, i.id) < (:cAt, :cId)', { cAt: cursor.createdAt, cId: cursor.id });
    const rows = await qb
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .take(limit + 1)
      .getMany();
    return toPage(rows, limit, (r) => this.view(r, admin));
  }

  // ------------------------------------------------------------------ two-step

  charge(shopOrderId: string): Promise<InvoiceView> {
    return this.settleHold(shopOrderId, 'charge');
  }

  unhold(shopOrderId: string): Promise<InvoiceView> {
    return this.settleHold(shopOrderId, 'unhold');
  }

  /**
   * Charge or release a hold, under the row lock so two requests cannot both act. Charge: the
   * answer's status may be non-final (the notification follows). Unhold success: `unheld`.
   */
  private async settleHold(shopOrderId: string, action: 'charge' | 'unhold'): Promise<InvoiceView> {
    const call = action === 'charge' ? 'invoice/charge' : 'invoice/unhold';
    const outcome = await this.dataSource.transaction(
      async (m): Promise<InvoiceView | DomainError> => {
        const inv = await lockInvoice(m, { shopId: this.shopId, shopOrderId });
        if (!inv) throw new NotFound('Invoice', shopOrderId);
        if (!canCaptureOrRelease(inv.status) || inv.invoiceId === null)
          throw new InvalidState('Invoice', shopOrderId, inv.status, action);
        let record: InvoiceRecord;
        try {
          const id = toGatewayId(inv.invoiceId);
          record =
            action === 'charge'
              ? await this.gateway.chargeInvoice(id)
              : await this.gateway.unholdInvoice(id);
        } catch (err) {
          if (isOutcomeUnknown(err)) {
            // It may have happened: have reconciliation ask invoice/check now rather than retry.
            await m.update(InvoiceEntity, { id: inv.id }, { nextCheckAt: new Date() });
          }
          await this.audit.record(m, {
            entityType: 'invoice',
            entityId: shopOrderId,
            fromStatus: inv.status,
            toStatus: inv.status,
            cause: 'api',
            details: { call, failed: describe(err) },
          });
          return gatewayFailure(err, call);
        }
        await applyRecordFacts(m, inv, record);
        const reported = statusFromGatewayNumber(
          typeof record.status === 'number' ? record.status : Number(record.status),
        );
        const to: InvoiceStatus | null = action === 'unhold' ? 'unheld' : reported;
        const gatewayStatus = typeof record.status === 'number' ? record.status : null;
        const decision = to
          ? await transitionInvoice(m, inv, to, 'api', { call }, { gatewayStatus })
          : { allowed: false };
        if (!decision.allowed) {
          // Accepted, status unchanged (non-final answer): recorded, the notification follows.
          await this.audit.record(m, {
            entityType: 'invoice',
            entityId: shopOrderId,
            fromStatus: inv.status,
            toStatus: inv.status,
            cause: 'api',
            details: { call, gatewayStatus },
          });
          if (!isFinal(inv.status))
            await m.update(
              InvoiceEntity,
              { id: inv.id },
              { nextCheckAt: this.secondsFromNow(this.config.invoices.reconcileGraceS) },
            );
        }
        return this.view(await this.reload(m, inv));
      },
    );
    if (outcome instanceof DomainError) throw outcome;
    return outcome;
  }

  // ------------------------------------------------------------------ payer

  /** The redirect step of `/pay/{shopOrderId}?t=`; 404 for a wrong token, no invoice or no redirect. */
  async payerStep(shopOrderId: string, token: string | undefined): Promise<PayerStep> {
    const inv = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOneBy({ shopId: this.shopId, shopOrderId });
    // The same answer for every miss, so the page says nothing about which invoices exist.
    const notFound = new NotFound('Payment page', shopOrderId);
    if (!inv || token === undefined || !sameSecret(token, inv.payToken) || !inv.redirect)
      throw notFound;
    return payerStep(inv.redirect);
  }

  private secondsFromNow(s: number): Date {
    return new Date(Date.now() + s * 1000);
  }
}

/** Constant-time comparison of two secrets of any length (compared as SHA-256 digests). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Facts of an invoice record (check, charge) that fill what we did not know yet. */
async function applyRecordFacts(
  m: EntityManager,
  inv: InvoiceEntity,
  r: InvoiceRecord,
): Promise<void> {
  const changes: {
    paymentId?: string;
    psCurrency?: number;
    shopAmount?: Amount;
    clientPrice?: Amount;
  } = {};
  if (r.payment_id !== undefined && r.payment_id !== null) changes.paymentId = String(r.payment_id);
  if (typeof r.ps_currency === 'number') changes.psCurrency = r.ps_currency;
  if (typeof r.shop_amount === 'string') changes.shopAmount = Amount.fromText(r.shop_amount);
  if (typeof r.client_price === 'string') changes.clientPrice = Amount.fromText(r.client_price);
  if (Object.keys(changes).length === 0) return;
  await m.update(InvoiceEntity, { id: inv.id }, changes);
  Object.assign(inv, changes);
}

/**
 * Applies an invoice/check record to a locked invoice: its facts, its status through the state
 * machine, and the payment token when one was issued. Exported for reconciliation.
 */
export async function applyCheckRecord(
  m: EntityManager,
  inv: InvoiceEntity,
  record: InvoiceCheckRecord,
  cause: AuditCause,
): Promise<void> {
  await applyRecordFacts(m, inv, record);
  const n = typeof record.status === 'number' ? record.status : Number(record.status);
  const to = statusFromGatewayNumber(n);
  if (to)
    await transitionInvoice(
      m,
      inv,
      to,
      cause,
      { call: 'invoice/check', gatewayStatus: n },
      { gatewayStatus: n },
    );
  const token = record.payment_token;
  if (
    token &&
    typeof token.token === 'string' &&
    token.token !== '' &&
    (token.status === undefined || token.status === 'SUCCESS')
  ) {
    await storePaymentToken(m, inv, token.token, tokenInfoFromCheck(token));
  }
}

function describe(err: unknown): string {
  if (err instanceof GatewayError) return `gateway error ${err.errorCode}`;
  if (err instanceof GatewayTransportError) return `transport ${err.kind}`;
  return err instanceof Error ? err.name : 'error';
}

/** A gateway failure as the shop sees it: 502 with the gateway's code, message and fatality. */
export function gatewayFailure(err: unknown, call: string): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof GatewayError) {
    return new GatewayFailure(
      `${call} failed: ${err.gatewayMessage}`,
      err.errorCode,
      err.gatewayMessage,
      err.fatal,
    );
  }
  if (err instanceof GatewayTransportError) {
    const status = err.kind === 'timeout' ? 504 : 502;
    return new GatewayFailure(
      `${call}: no answer from the gateway (${err.kind})`,
      null,
      null,
      null,
      status,
    );
  }
  throw err;
}
