import { managerFor, transactionFor, type By } from '../common/actor';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { sameSecret } from '../common/sha256';
import { DataSource, EntityManager, In } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { RowChanged } from '../audit/event-write';
import { byColumn, clientOf, entityFromRow, jsonb, poolOf, run } from '../common/sql';
import {
  BY_SHOP_ORDER_ID,
  INSERT_CLAIMED,
  INSERT_CLAIMED_MANY,
  VIEWS_BY_SHOP_ORDER_IDS,
} from './invoice-sql';
import { BatchedRead } from '../common/batched-read';
import { BatchedWrite } from '../common/batched-write';
import type { AuditCause } from '../audit/audit-event.entity';
import {
  DomainError,
  GatewayFailure,
  InvalidState,
  NotFound,
  RequestInProgress,
  SealedValueUnreadable,
  TokenRevoked,
  ValidationFailed,
} from '../common/errors';
import { raiseAttention, resolveAttention } from '../common/attention';
import { Coalescer } from '../common/coalesce';
import { runGatewayOperation, type CallAnswer } from '../jobs/gateway-operation';
import { callLeaseSeconds, waitForAnswer } from '../jobs/in-flight';
import { INSTANCE_ID } from '../jobs/instance';
import { logger } from '../common/logger';
import { Amount } from '../common/money';
import { currencyCodeOf, currencyName } from '../common/currency';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  Page,
  toPage,
} from '../common/pagination';
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
import { boundsCheckFor, checkConvertedBounds } from '../payway-config/currency-conversion';
import { checkPaymentAgainstPayway } from '../payway-config/payway-validation';
import type { CreateInvoiceDto, QuoteInvoiceDto } from './dto/create-invoice.dto';
import type { ListInvoicesQuery } from './dto/invoice-queries.dto';
import { InvoiceEntity, type PaymentTokenInfo, type RedirectData } from './invoice.entity';
import {
  gatewayCreateRequest,
  invoiceRequestFacts,
  requestFingerprint,
  requestFingerprintV2,
  sentSecretFields,
} from './invoice-request';
import {
  differingFields,
  differs,
  recordConflict,
  refuseIfLocked,
  secretFieldsEntry,
} from '../common/idempotency';
import { metadataOf } from '../common/metadata';
import {
  canCaptureOrRelease,
  decideTransition,
  holdActionDone,
  gatewayNumberOf,
  isFinal,
  type InvoiceStatus,
} from './invoice.state';
import { lockInvoice, transitionInvoice } from './invoice-transitions';
import { nextInvoiceCheck } from './invoice-reconciler.schedule';
import { payerStep, redirectParams, statusPage, type PayerStep } from './redirect-page';
import {
  isTokenRevoked,
  markTokenUsed,
  PAYMENT_TOKEN_INDEX,
  revealPaymentToken,
  storePaymentToken,
  tokenInfoFromCheck,
} from './payment-token';
import { KeyRing, SealError } from '../common/key-ring';
import { applyGatewayFacts, priceFactsOf, takePriceFacts } from './invoice-gateway-facts';
import { randomToken } from '../common/random-token';
import { toInvoiceView, type InvoiceView, type InvoiceViewSource } from './invoice.view';
import { absencePolicy, applyInvoiceEvidence, evidenceOfCheck } from './invoice-evidence';
import type { AbsencePolicy, InvoiceVerdict } from './invoice.rules';

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
  /** Given to a repeat (sent with `Idempotent-Replayed: true`), not made by this request. */
  replayed?: boolean;
}

const CREATE_PATH = '/api/v1/invoices';

/** No gateway call in flight for the row. */
const NO_CALL = { callOwner: null, callLeaseUntil: null } as const;

/** A create request's idempotency fingerprint and the canonical facts it was made of. */
interface RequestIdentity {
  fingerprint: string;
  facts: Record<string, unknown>;
}

/** A row this request inserted and claimed (phase 1), with its version for phase 3. */
interface Claimed {
  inv: InvoiceEntity;
  /** The row's `xmin` as phase 1 wrote it. */
  version: string;
}

/** What a create's answer makes of the invoice: the payer's redirect, if any, and the status. */
function createOutcome(result: InvoiceCreateResult): {
  redirect: RedirectData | null;
  to: InvoiceStatus;
} {
  const redirect: RedirectData | null =
    (result.method === 'POST' || result.method === 'GET') &&
    typeof result.url === 'string' &&
    result.url !== ''
      ? { method: result.method, url: result.url, params: redirectParams(result.data) }
      : null;
  // With redirect data the payer acts next; without (token charge, payer-less payway) the
  // notification brings the outcome.
  return { redirect, to: redirect ? 'awaiting_payer' : 'created' };
}

/** The facts a create's answer writes on the row, its call claim released. */
function createFacts(result: InvoiceCreateResult) {
  return { invoiceId: String(result.id), redirect: createOutcome(result).redirect, ...NO_CALL };
}

/**
 * Payments: quote, idempotent create (single- and two-step), charge/unhold of a hold, status
 * refresh, listing, and the payer's redirect step. Every status change goes through the invoice
 * state machine (transitionInvoice) and is audited in the transaction that makes it.
 */
@Injectable()
export class InvoicesService {
  private readonly log = logger.child({ component: 'invoices' });
  private readonly audit = new AuditService();
  private readonly refreshes = new Coalescer();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
    private readonly keys: KeyRing,
  ) {}

  /** A plain row of `invoices` as the entity (the hot paths' reads, src/common/sql.ts). */
  private fromRow(row: Record<string, unknown>): InvoiceEntity {
    return entityFromRow(this.dataSource, InvoiceEntity, row);
  }

  /** Invoices are the payment shop's: written and found under its id. */
  private get shopId(): number {
    return this.gateway.shopId('payment');
  }

  private get webhookUrl(): string {
    return `${this.config.publicBaseUrl}/webhooks/gateway`;
  }

  view(inv: InvoiceViewSource, admin = false): InvoiceView {
    return toInvoiceView(inv, this.config.publicBaseUrl, {
      admin,
      revealToken: () => {
        try {
          return revealPaymentToken(this.keys, inv);
        } catch (e) {
          // The invoice is still shown; only the token that does not open is left out.
          if (!(e instanceof SealError)) throw e;
          this.log.error({ invoiceRowId: inv.id }, 'stored payment token cannot be opened');
          return null;
        }
      },
    });
  }

  // ------------------------------------------------------------------ quote

  async quote(dto: QuoteInvoiceDto): Promise<QuoteView> {
    const payway = await this.validateAgainstPayway(dto, false);
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
      throw pricingFailure(err, dto, payway);
    }
    if (boundsCheckFor(dto.currency, payway.currency) === 'gateway') {
      const errors = checkConvertedBounds(
        { amount: r.payer_price, currency: r.ps_currency },
        payway,
      );
      if (errors.length > 0) throw new ValidationFailed(errors);
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

  /** Payway known and active, amount bounds (exact, same currency) and, on create, the extras. */
  private async validateAgainstPayway(
    dto: QuoteInvoiceDto & { extras?: Record<string, unknown> },
    withExtras: boolean,
  ): Promise<InputPayway> {
    const payway = (await this.payways.findPayway('payment', dto.payway)) as
      InputPayway | undefined;
    const errors = checkPaymentAgainstPayway(
      {
        payway: dto.payway,
        amount: Amount.parse(dto.amount),
        currency: dto.currency,
        extras: dto.extras,
        checkExtras: withExtras,
        suggestions:
          payway === undefined ? await this.payways.closestAliases('payment', dto.payway) : undefined,
      },
      payway,
    );
    if (errors.length > 0) throw new ValidationFailed(errors);
    return payway as InputPayway;
  }

  /**
   * An order in another currency than its payway's: `invoice/try` prices it in the payway's
   * currency and the payway's bounds are held against that `payer_price` (400 on `amount`, no row
   * written). Null for an order in the payway's own currency, and for a repeat of a create whose
   * row exists (its stored answer or a conflict follows, without another gateway call).
   */
  private async priceInPaywayCurrency(
    dto: CreateInvoiceDto,
    payway: InputPayway,
  ): Promise<{ payerPrice: Amount; psCurrency: number } | null> {
    if (boundsCheckFor(dto.currency, payway.currency) === 'local') return null;
    const exists = await this.dataSource
      .getRepository(InvoiceEntity)
      .existsBy({ shopId: this.shopId, shopOrderId: dto.shopOrderId });
    if (exists) return null;
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
      throw pricingFailure(err, dto, payway);
    }
    const errors = checkConvertedBounds({ amount: r.payer_price, currency: r.ps_currency }, payway);
    if (errors.length > 0) throw new ValidationFailed(errors);
    return {
      payerPrice: Amount.fromText(String(r.payer_price)),
      psCurrency: Number(r.ps_currency),
    };
  }

  // ------------------------------------------------------------------ create

  /**
   * Idempotent by shopOrderId, in atomic phases: (1) one INSERT commits the row `pending` with a
   * claim on the gateway call (owner, start, lease); (2) invoice/create or invoice/hold runs with
   * no transaction and no connection held; (3) a short row lock writes the answer through the
   * state machine and stores the response. A repeat finds the row first and replays it, waits
   * (bounded) while the first copy is in phase 2, or gets 409 "request in progress". A crash
   * between phases leaves a claim whose lease runs out; the repeat or the reconciler then asks
   * invoice/check, never sends the create again.
   */
  async create(dto: CreateInvoiceDto, by: By): Promise<StoredResponse> {
    // The request's facts, once: its fingerprint and the row's stored facts are both made of them.
    const facts = invoiceRequestFacts(dto);
    const fingerprint = requestFingerprintV2(dto, facts);
    // Look-up first in effect: configuration only judges a new row. Checking the (cached)
    // configuration before the look-up saves a round trip on the hot path; a refusal is only
    // answered once we know no earlier copy of this request exists.
    let priced: Awaited<ReturnType<InvoicesService['priceInPaywayCurrency']>>;
    try {
      const payway = await this.validateAgainstPayway(dto, true);
      // Before any gateway call (invoice/try included); a repeat of an earlier create replays.
      if (dto.paymentToken !== undefined)
        await this.refuseRevokedToken(this.dataSource.manager, dto);
      priced = await this.priceInPaywayCurrency(dto, payway);
    } catch (err) {
      const existing = await this.findInvoice(dto.shopOrderId);
      if (existing) return this.answerRepeat(existing, dto, fingerprint, by);
      throw err;
    }
    const tokenInfo = dto.paymentToken ? await this.shownInfoOfToken(dto.paymentToken) : null;
    const claimed = await this.insertClaimed(dto, { fingerprint, facts }, tokenInfo, priced);
    if (claimed === null) {
      const existing = await this.findInvoice(dto.shopOrderId);
      if (!existing) throw new NotFound('Invoice', dto.shopOrderId);
      return this.answerRepeat(existing, dto, fingerprint, by);
    }
    return this.sendCreate(claimed.inv.id, dto, by, claimed);
  }

  /** Phase 1: the row and the claim on its gateway call, one statement. Null: the id exists. */
  private async insertClaimed(
    dto: CreateInvoiceDto,
    request: RequestIdentity,
    tokenInfo: PaymentTokenInfo | null,
    priced: Awaited<ReturnType<InvoicesService['priceInPaywayCurrency']>>,
  ): Promise<Claimed | null> {
    if (dto.paymentToken === undefined)
      return this.insertClaimedIn(this.dataSource.manager, dto, request, tokenInfo, priced);
    // The token's registry entry stays locked until the row is in: a revocation committed first
    // refuses this invoice, one committed after it finds the invoice already accepted.
    const token = dto.paymentToken;
    return this.dataSource.transaction(async (m) => {
      await this.refuseRevokedToken(m, dto, true);
      const claimed = await this.insertClaimedIn(m, dto, request, tokenInfo, priced);
      if (claimed !== null)
        await markTokenUsed(m, this.shopId, this.keys.blindIndexes(token, PAYMENT_TOKEN_INDEX));
      return claimed;
    });
  }

  /** A `409 token-revoked` when the invoice names a token revoked in the registry. */
  private async refuseRevokedToken(
    m: EntityManager,
    dto: CreateInvoiceDto,
    lock = false,
  ): Promise<void> {
    const indexes = this.keys.blindIndexes(dto.paymentToken!, PAYMENT_TOKEN_INDEX);
    const { revoked } = await isTokenRevoked(m, this.shopId, indexes, lock);
    if (revoked)
      throw new TokenRevoked(
        dto.paymentTokenFrom !== undefined ? 'paymentTokenFrom' : 'paymentToken',
      );
  }

  private async insertClaimedIn(
    m: EntityManager,
    dto: CreateInvoiceDto,
    request: RequestIdentity,
    tokenInfo: PaymentTokenInfo | null,
    priced: Awaited<ReturnType<InvoicesService['priceInPaywayCurrency']>>,
  ): Promise<Claimed | null> {
    const params = this.claimParams(dto, request, tokenInfo, priced);
    // Outside a transaction the turn's claims share one statement (BatchedWrite).
    const row = m.queryRunner
      ? ((await run(await clientOf(m), INSERT_CLAIMED, params))[0] ?? null)
      : await this.claims.write(params);
    if (row === null) return null;
    return { inv: this.fromRow(row), version: row.row_version as string };
  }

  /** INSERT_CLAIMED's parameters for one create. */
  private claimParams(
    dto: CreateInvoiceDto,
    { fingerprint, facts }: RequestIdentity,
    tokenInfo: PaymentTokenInfo | null,
    priced: Awaited<ReturnType<InvoicesService['priceInPaywayCurrency']>>,
  ): unknown[] {
    return [
      this.shopId,
      dto.shopOrderId,
      fingerprint,
      jsonb(facts),
      jsonb(metadataOf(dto.metadata)),
      Amount.parse(dto.amount).toString(),
      dto.currency,
      dto.payway,
      priced ? priced.payerPrice.toString() : null,
      priced ? priced.psCurrency : null,
      dto.description ?? null,
      dto.twoStep ?? false,
      randomToken(32),
      dto.savePaymentToken ?? false,
      dto.paymentToken !== undefined,
      jsonb(tokenInfo),
      jsonb(dto.extras && Object.keys(dto.extras).length > 0 ? dto.extras : null),
      dto.clientIp ?? null,
      dto.successUrl ?? null,
      dto.failedUrl ?? null,
      INSTANCE_ID,
      callLeaseSeconds(this.config.gateway.timeoutMs),
      // Should the answer be lost (crash, time-out), reconciliation settles it with invoice/check.
      this.secondsFromNow(this.config.invoices.reconcileGraceS),
      this.secondsFromNow(this.config.invoices.reconcileMaxS),
    ];
  }

  /**
   * Phase 1 of the creates of one turn in one statement (issue #23): each row claimed as
   * INSERT_CLAIMED claims it alone; null for a row whose shop id exists already.
   */
  private readonly claims = new BatchedWrite<unknown[], Record<string, unknown> | null>({
    name: 'invoice_claim',
    key: (params) => params[1] as string,
    one: async (params) => (await run(poolOf(this.dataSource), INSERT_CLAIMED, params))[0] ?? null,
    many: async (rows) => {
      const inserted = await run(poolOf(this.dataSource), INSERT_CLAIMED_MANY, byColumn(rows));
      const byId = new Map(inserted.map((r) => [r.shop_order_id as string, r]));
      return rows.map((r) => byId.get(r[1] as string) ?? null);
    },
  });

  /**
   * Phases 2 and 3 for a row this request has claimed. `claimed`: the row as phase 1 inserted it;
   * an answer then costs one statement when nothing touched the row meanwhile (the usual case),
   * else it takes the locked path below.
   */
  private async sendCreate(
    id: string,
    dto: CreateInvoiceDto,
    by: By,
    claimed?: Claimed,
  ): Promise<StoredResponse> {
    const call = dto.twoStep ? 'invoice/hold' : 'invoice/create';
    const req = gatewayCreateRequest(dto, this.webhookUrl);
    return runGatewayOperation(this.dataSource, {
      name: 'invoice.create',
      by,
      call: () => (dto.twoStep ? this.gateway.holdInvoice(req) : this.gateway.createInvoice(req)),
      ...(claimed !== undefined
        ? {
            recordUnchanged: async (answer: CallAnswer<InvoiceCreateResult>) =>
              answer.ok ? this.answerUnchanged(claimed, call, answer.value, by) : null,
          }
        : {}),
      lock: (m) => m.findOne(InvoiceEntity, { where: { id }, lock: { mode: 'pessimistic_write' } }),
      missing: () => new NotFound('Invoice', dto.shopOrderId),
      record: (m, inv, answer) =>
        answer.ok
          ? this.createAnswered(m, inv, call, answer.value)
          : this.createFailed(m, inv, call, answer.err),
    });
  }

  /**
   * Phase 3 without the row lock: the usual answer (answerUsual) written only if the row is still
   * the version phase 1 inserted. Null when it changed since (a notification, a repeat, an
   * operator) or its event's sequence was taken meanwhile (the unique index refused it): nothing
   * was written, and the caller writes the answer under the row lock.
   */
  private async answerUnchanged(
    claimed: Claimed,
    call: string,
    result: InvoiceCreateResult,
    by: By,
  ): Promise<StoredResponse | null> {
    try {
      return await this.answerUsual(
        managerFor(this.dataSource, by),
        claimed.inv,
        call,
        result,
        claimed.version,
      );
    } catch (err) {
      if (err instanceof RowChanged || (err as { code?: string }).code === '23505') return null;
      throw err;
    }
  }

  /**
   * A repeat of a create (or a race lost at the insert): the stored answer; or, while the first
   * copy still waits for the gateway, a bounded wait; a copy that never reached the gateway is
   * sent by this one; a copy whose call was lost (lease over) is `unknown`, settled by a check.
   */
  private async answerRepeat(
    existing: InvoiceEntity,
    dto: CreateInvoiceDto,
    fingerprint: string,
    by: By,
  ): Promise<StoredResponse> {
    await this.sameRequestOrConflict(existing, dto, fingerprint, by);
    let row: InvoiceEntity | null = existing;
    const next = await waitForAnswer(async () => {
      row ??= await this.findInvoice(dto.shopOrderId);
      const r = row;
      row = null;
      if (!r) throw new NotFound('Invoice', dto.shopOrderId);
      if (r.responseCode !== null) return { code: r.responseCode, body: r.responseBody };
      if (r.callLeaseUntil !== null && r.callLeaseUntil.getTime() > Date.now()) return undefined;
      return this.takeOver(r.id, by);
    }, this.config.createWaitMs);
    if (next === undefined) throw new RequestInProgress('shopOrderId', dto.shopOrderId, 1);
    if (next === 'send') return this.sendCreate(existing.id, dto, by);
    if (next === 'wait') return this.answerRepeat(existing, dto, fingerprint, by);
    return { ...next, replayed: true };
  }

  /**
   * A repeat is the same request when every field matches (amounts by value, secrets included);
   * otherwise a conflict naming the non-secret fields that differ, counted and capped
   * (src/common/idempotency.ts). Rows written before issue #25 keep their older fingerprint and
   * no facts: their conflicts name the body as a whole.
   */
  private async sameRequestOrConflict(
    existing: InvoiceEntity,
    dto: CreateInvoiceDto,
    fingerprint: string,
    by: By,
  ): Promise<void> {
    const target = {
      object: 'invoice' as const,
      id: existing.id,
      key: 'shopOrderId',
      shopId: existing.shopOrderId,
      status: existing.status,
      conflicts: existing.idempotencyConflicts,
    };
    const limit = this.config.idempotencyConflictLimit;
    refuseIfLocked(target, limit);
    const facts = existing.requestFacts;
    const same =
      facts !== null
        ? existing.requestFingerprint === fingerprint
        : existing.requestFingerprint === requestFingerprint(dto);
    if (same) return;
    const named =
      facts !== null
        ? differs(differingFields(facts, invoiceRequestFacts(dto)))
        : [{ field: 'body', message: 'differs from the first request' }];
    await recordConflict(
      this.dataSource,
      by,
      target,
      limit,
      [...named, ...secretEntries(sentSecretFields(dto))],
      'api',
    );
  }

  /**
   * Under the row lock: nobody is calling the gateway for this row (no claim, or its lease is
   * over). Never sent → this request claims and sends it; lost in flight → `unknown`, checked
   * now; settled meanwhile → what we know now is the answer.
   */
  private async takeOver(id: string, by: By): Promise<StoredResponse | 'send' | 'wait'> {
    const outcome = await transactionFor(
      this.dataSource,
      by,
      async (m): Promise<StoredResponse | 'send' | 'wait'> => {
        const inv = await m.findOne(InvoiceEntity, {
          where: { id },
          lock: { mode: 'pessimistic_write' },
        });
        if (!inv) throw new NotFound('Invoice', id);
        if (inv.responseCode !== null) return { code: inv.responseCode, body: inv.responseBody };
        if (inv.callLeaseUntil !== null && inv.callLeaseUntil.getTime() > Date.now()) return 'wait';
        if (inv.status === 'pending' && inv.callStartedAt === null) {
          // Absences counted while nothing was sent say nothing about the call made now.
          await m.update(
            InvoiceEntity,
            { id },
            { ...this.claim(), absentCount: 0, firstAbsentAt: null },
          );
          return 'send';
        }
        if (inv.status === 'pending') {
          await transitionInvoice(m, inv, 'unknown', 'api', {
            reason: 'the create call was lost (its lease ran out)',
          });
          await m.update(InvoiceEntity, { id }, { ...NO_CALL, nextCheckAt: new Date() });
        }
        return this.storeResponse(m, inv, 201, this.view(await this.reload(m, inv)));
      },
    );
    return outcome;
  }

  /**
   * A call whose outcome is not known yet: the claim is kept with its lease already over, so no
   * new charge/unhold can claim the row (they answer 409 request-in-progress) until a status
   * call (reconciliation, or a refresh) has settled what the first one did and freed it.
   */
  private settleFirst(): Pick<InvoiceEntity, 'callOwner' | 'callLeaseUntil'> {
    return { callOwner: INSTANCE_ID, callLeaseUntil: new Date() };
  }

  /** The claim on a gateway call: who, since when, until when it is presumed alive. */
  private claim(): Pick<InvoiceEntity, 'callOwner' | 'callStartedAt' | 'callLeaseUntil'> {
    return {
      callOwner: INSTANCE_ID,
      callStartedAt: new Date(),
      callLeaseUntil: this.secondsFromNow(callLeaseSeconds(this.config.gateway.timeoutMs)),
    };
  }

  private async findInvoice(shopOrderId: string): Promise<InvoiceEntity | null> {
    const rows = await run(poolOf(this.dataSource), BY_SHOP_ORDER_ID, [this.shopId, shopOrderId]);
    return rows.length > 0 ? this.fromRow(rows[0]) : null;
  }

  /**
   * The usual answer in one statement: status, facts, released claim, the stored answer and its
   * event, built from what is written (updated_at included) instead of read back; the answer is
   * also the view the event carries. Null when it is not the usual case (an answer stored
   * already, a status the state machine does not allow from here). `version`: see answerUnchanged.
   */
  private async answerUsual(
    m: EntityManager,
    inv: InvoiceEntity,
    call: string,
    result: InvoiceCreateResult,
    version?: string,
  ): Promise<StoredResponse | null> {
    const { to } = createOutcome(result);
    if (inv.responseCode !== null || !decideTransition(inv.status, to).allowed) return null;
    const facts = createFacts(result);
    const updatedAt = new Date();
    const gatewayStatus = gatewayNumberOf(to) ?? inv.gatewayStatus;
    // A plain copy: the view reads fields only (a spread copies a row's 50-odd fields several
    // times faster than Object.assign onto an entity prototype; profiled under P1).
    const after: InvoiceViewSource = { ...inv, ...facts, status: to, gatewayStatus, updatedAt };
    const body = this.view(after);
    await transitionInvoice(
      m,
      inv,
      to,
      'gateway',
      { call, invoiceId: facts.invoiceId },
      { ...facts, gatewayStatus, responseCode: 201, responseBody: body, updatedAt },
      { ...body },
      version,
    );
    return { code: 201, body };
  }

  /** Phase 3 of a create the gateway answered (the row is locked by the caller). */
  private async createAnswered(
    m: EntityManager,
    inv: InvoiceEntity,
    call: string,
    result: InvoiceCreateResult,
  ): Promise<StoredResponse> {
    const usual = await this.answerUsual(m, inv, call, result);
    if (usual !== null) return usual;
    const { to } = createOutcome(result);
    const details = { call, invoiceId: String(result.id) };
    const facts = createFacts(result);
    await m.update(InvoiceEntity, { id: inv.id }, facts);
    Object.assign(inv, facts);
    await transitionInvoice(m, inv, to, 'gateway', details);
    return this.finishCreate(m, inv);
  }

  /** The answer of a create: the one stored first, else the invoice as it is now. */
  private async finishCreate(m: EntityManager, inv: InvoiceEntity): Promise<StoredResponse> {
    if (inv.responseCode !== null) return { code: inv.responseCode, body: inv.responseBody };
    return this.storeResponse(m, inv, 201, this.view(await this.reload(m, inv)));
  }

  /**
   * Fatal: rejected, 502. Non-fatal: the gateway took it and will notify, 201 `created`.
   * Unknown outcome (time-out, unclassified code): `unknown`, checked soon, never re-sent.
   * Not sent at all (connection refused): the claim is dropped, a repeat may call again.
   */
  private async createFailed(
    m: EntityManager,
    inv: InvoiceEntity,
    call: string,
    err: unknown,
  ): Promise<StoredResponse | DomainError> {
    await m.update(InvoiceEntity, { id: inv.id }, NO_CALL);
    if (err instanceof GatewayError && err.fatal === true) {
      await transitionInvoice(
        m,
        inv,
        'rejected',
        'gateway',
        { call, errorCode: err.errorCode },
        { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage },
      );
      if (inv.responseCode !== null) return { code: inv.responseCode, body: inv.responseBody };
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
      return this.finishCreate(m, inv);
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
      return this.finishCreate(m, inv);
    }
    // Never sent: no claim left behind, so a repeat sends it (callStartedAt null marks "never sent").
    if (inv.status === 'pending')
      await m.update(InvoiceEntity, { id: inv.id }, { callStartedAt: null });
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

  /**
   * `paymentTokenFrom`: the token the named earlier invoice of this shop was issued, taken from
   * that invoice's row (the caller never sees it). A separate step before create, so create sees
   * a request with `paymentToken` as before; the fingerprint keeps `paymentTokenFrom`.
   */
  async resolvePaymentTokenFrom(dto: CreateInvoiceDto): Promise<CreateInvoiceDto> {
    if (dto.paymentTokenFrom === undefined) return dto;
    const field = 'paymentTokenFrom';
    if (dto.paymentToken !== undefined) {
      throw new ValidationFailed([{ field, message: 'cannot be combined with paymentToken' }]);
    }
    const source = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOneBy({ shopId: this.shopId, shopOrderId: dto.paymentTokenFrom });
    let token: string | null;
    try {
      token = source ? revealPaymentToken(this.keys, source) : null;
    } catch (e) {
      if (!(e instanceof SealError)) throw e;
      this.log.error({ invoiceRowId: source?.id }, 'stored payment token cannot be opened');
      throw new SealedValueUnreadable(field, 'payment token of that invoice');
    }
    if (!token) {
      throw new ValidationFailed([
        { field, message: 'names no invoice of this shop that was issued a payment token' },
      ]);
    }
    return Object.assign(
      Object.create(Object.getPrototypeOf(dto) as object) as CreateInvoiceDto,
      dto,
      {
        paymentToken: token,
      },
    );
  }

  /** The shown facts (masked account, expiry) of a token an earlier invoice of ours received. */
  private async shownInfoOfToken(token: string): Promise<PaymentTokenInfo | null> {
    // By blind index under every key of the ring: a rotation in progress holds both.
    const source = await this.dataSource.getRepository(InvoiceEntity).findOne({
      where: {
        shopId: this.shopId,
        paymentTokenHash: In(this.keys.blindIndexes(token, PAYMENT_TOKEN_INDEX)),
      },
      order: { createdAt: 'DESC' },
    });
    return source?.paymentTokenInfo ?? null;
  }

  // ------------------------------------------------------------------ read

  async get(shopOrderId: string, refresh: boolean, admin: boolean, by: By): Promise<InvoiceView> {
    if (refresh) await this.refresh(shopOrderId, by);
    const row = await this.viewReads.get(shopOrderId);
    if (row === undefined) throw new NotFound('Invoice', shopOrderId);
    return this.view(this.fromRow(row), admin);
  }

  /** The view's columns of invoices by the shop's id, the turn's reads in one statement. */
  private readonly viewReads = new BatchedRead<string, Record<string, unknown>>(async (ids) => {
    const rows = await run(poolOf(this.dataSource), VIEWS_BY_SHOP_ORDER_IDS, [this.shopId, ids]);
    return new Map(rows.map((r) => [r.shop_order_id as string, r]));
  });

  /**
   * invoice/check, applied through the state machine (cause reconciliation), token kept.
   * Concurrent refreshes of one invoice share one call.
   */
  refresh(shopOrderId: string, by: By): Promise<void> {
    return this.refreshes.run(shopOrderId, () => this.checkAndApply(shopOrderId, by));
  }

  /**
   * Admin recheck (issue #22): invoice/check now, applied through the invoice rule (a final
   * status clears a "not final yet" flag itself). It never unschedules anything: an open invoice
   * keeps (or gets) its next check while its watch lasts. The flag is cleared here only when the
   * invoice is final already and the gateway's fresh record says the same.
   */
  async recheck(shopOrderId: string, by: By): Promise<InvoiceView> {
    await this.checkAndApply(shopOrderId, by, true);
    return this.get(shopOrderId, false, true, by);
  }

  /**
   * `invoice/check` said "no such invoice". For a create whose answer we never had, absence is
   * evidence over time, counted by reconciliation only (spaced checks). For an invoice the
   * gateway answered, the rule raises attention: a refresh never keeps such a state silently.
   */
  /**
   * invoice/check and what it says, through the invoice rule: the one status question of a
   * refresh (GET ?refresh=true), a recheck and the payer's return; the reconciler's batch asks
   * the same way. An absent answer is one more piece of evidence of absence.
   */
  private async checkAndApply(shopOrderId: string, by: By, recheck = false): Promise<void> {
    const exists = await this.dataSource
      .getRepository(InvoiceEntity)
      .existsBy({ shopId: this.shopId, shopOrderId });
    if (!exists) throw new NotFound('Invoice', shopOrderId);
    await runGatewayOperation(this.dataSource, {
      name: 'invoice.check',
      by,
      call: () => this.gateway.checkInvoice(shopOrderId),
      lock: (m) => lockInvoice(m, { shopId: this.shopId, shopOrderId }),
      missing: () => undefined,
      record: (m, inv, answer) =>
        answer.ok
          ? this.checkAnswered(m, inv, answer.value, recheck)
          : this.checkFailed(m, inv, answer.err),
    });
  }

  /** invoice/check refused: absent is evidence (a pending or unknown row has its own path), else the refusal. */
  private async checkFailed(
    m: EntityManager,
    inv: InvoiceEntity,
    err: unknown,
  ): Promise<DomainError | undefined> {
    if (!(err instanceof GatewayError && err.isAbsent)) return gatewayFailure(err, 'invoice/check');
    if (inv.status === 'pending' || inv.status === 'unknown') return undefined;
    await applyInvoiceEvidence(
      m,
      inv,
      { kind: 'absent' },
      'reconciliation',
      { call: 'invoice/check', reason: 'absent' },
      absencePolicy(this.config),
    );
    return undefined;
  }

  /** invoice/check answered (the row locked): the record through the invoice rule. */
  private async checkAnswered(
    m: EntityManager,
    inv: InvoiceEntity,
    record: InvoiceCheckRecord,
    recheck: boolean,
  ): Promise<undefined> {
    // A call whose lease is over is settled by this check: the row is free for the next call.
    if (inv.callLeaseUntil !== null && inv.callLeaseUntil.getTime() <= Date.now()) {
      await m.update(InvoiceEntity, { id: inv.id }, { callOwner: null, callLeaseUntil: null });
      Object.assign(inv, { callOwner: null, callLeaseUntil: null });
    }
    const wasFinal = isFinal(inv.status);
    const verdict = await applyCheckRecord(
      m,
      inv,
      record,
      'reconciliation',
      absencePolicy(this.config),
      this.keys,
      this.config.gateway.nowOffset,
    );
    if (!recheck) return undefined;
    const ev = evidenceOfCheck(record);
    const agrees =
      wasFinal && verdict.kind !== 'attention' && ev.kind === 'record' && ev.status === inv.status;
    if (agrees && inv.needsAttention) {
      await resolveAttention(
        m,
        { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
        { action: 'recheck', gatewayStatus: record.status },
        'admin',
      );
      return undefined;
    }
    await this.keepWatched(m, inv);
    return undefined;
  }

  /** An open invoice within its watch always has a next check (a recheck never drops it). */
  private async keepWatched(m: EntityManager, inv: InvoiceEntity): Promise<void> {
    if (isFinal(inv.status) || inv.nextCheckAt !== null) return;
    const next = nextInvoiceCheck({
      now: new Date(),
      attempts: inv.checkAttempts,
      deadline: inv.checkDeadline,
      graceS: this.config.invoices.reconcileGraceS,
      createdAt: inv.createdAt,
      watch: this.config.watch,
    });
    if (next.nextAt === null) return;
    await m.update(InvoiceEntity, { id: inv.id }, { nextCheckAt: next.nextAt });
    inv.nextCheckAt = next.nextAt;
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
    if (q.metadata)
      qb.andWhere('i.metadata @> CAST(:metadata AS jsonb)', {
        metadata: JSON.stringify(q.metadata),
      });
    if (q.createdFrom) qb.andWhere('i.created_at >= :from', { from: new Date(q.createdFrom) });
    if (q.createdTo) qb.andWhere('i.created_at < :to', { to: new Date(q.createdTo) });
    if (cursor) qb.andWhere(afterCursorSql('i', 'invoices'), { cursorId: cursor });
    const rows = await qb
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .take(limit + 1)
      .getMany();
    return toPage(rows, limit, (r) => this.view(r, admin));
  }

  // ------------------------------------------------------------------ two-step

  charge(shopOrderId: string, by: By): Promise<InvoiceView> {
    return this.settleHold(shopOrderId, 'charge', by);
  }

  unhold(shopOrderId: string, by: By): Promise<InvoiceView> {
    return this.settleHold(shopOrderId, 'unhold', by);
  }

  /**
   * Charge or release a hold in atomic phases: a claim committed on the held row (so two
   * requests cannot both act), the call with nothing held, then a short lock to write the
   * answer through the invoice rule (for an unhold a 6 is the released hold, an 8 is settled
   * later by invoice/check, a 4 is a charge and flagged). A hold whose gateway id is not known
   * yet is first asked about (invoice/check, nothing held). A repeat of what already happened
   * answers the invoice as it is.
   */
  private async settleHold(
    shopOrderId: string,
    action: 'charge' | 'unhold',
    by: By,
  ): Promise<InvoiceView> {
    let row = await this.claimHold(shopOrderId, action);
    if (row === undefined) {
      const inv = await this.findInvoice(shopOrderId);
      if (inv?.status === 'held' && inv.invoiceId === null && inv.callLeaseUntil === null) {
        // The id its create answer lost: the first invoice/check brings it.
        await this.refresh(shopOrderId, by).catch((e: unknown) => {
          if (!(e instanceof DomainError)) throw e;
        });
        row = await this.claimHold(shopOrderId, action);
      }
    }
    if (row === undefined) return this.holdNotClaimed(shopOrderId, action);
    const claimed = row;
    return runGatewayOperation(this.dataSource, {
      name: `invoice.${action}`,
      by,
      call: () => {
        const id = toGatewayId(claimed.invoice_id);
        return action === 'charge'
          ? this.gateway.chargeInvoice(id)
          : this.gateway.unholdInvoice(id);
      },
      lock: (m) =>
        m.findOne(InvoiceEntity, {
          where: { id: claimed.id },
          lock: { mode: 'pessimistic_write' },
        }),
      missing: () => new NotFound('Invoice', shopOrderId),
      record: (m, inv, answer) => this.holdAnswered(m, inv, action, answer),
    });
  }

  /**
   * Phase 3 of a charge or unhold (the row locked): the claim released, the answer through the
   * invoice rule; a failure is returned so that what it leaves commits first.
   */
  private async holdAnswered(
    m: EntityManager,
    inv: InvoiceEntity,
    action: 'charge' | 'unhold',
    answer: CallAnswer<InvoiceRecord>,
  ): Promise<InvoiceView | DomainError> {
    const call = action === 'charge' ? 'invoice/charge' : 'invoice/unhold';
    // The call is audited even when the status stays (a failure, a non-final answer).
    const auditCall = (details: Record<string, unknown>): Promise<void> =>
      this.audit.record(m, {
        entityType: 'invoice',
        entityId: inv.shopOrderId,
        fromStatus: inv.status,
        toStatus: inv.status,
        cause: 'api',
        details: { call, ...details },
      });
    await m.update(InvoiceEntity, { id: inv.id }, NO_CALL);
    if (!answer.ok) {
      const err = answer.err;
      if (!isOutcomeUnknown(err) && action === 'unhold') {
        // Not done: a 6 reported later is not the release of our request.
        await m.update(InvoiceEntity, { id: inv.id }, { unholdRequestedAt: null });
      }
      if (isOutcomeUnknown(err)) {
        // It may have happened: invoice/check settles it (reconciliation, now), and until
        // then no second charge or unhold is sent: the claim stays, its lease already over.
        await m.update(
          InvoiceEntity,
          { id: inv.id },
          { ...this.settleFirst(), nextCheckAt: new Date() },
        );
      }
      await auditCall({ failed: describe(err) });
      return gatewayFailure(err, call);
    }
    const record = answer.value;
    const gatewayStatus = typeof record.status === 'number' ? record.status : null;
    // The answer is a gateway record like any other: the invoice rule judges it (the row
    // says an unhold was sent, so a 6 is the released hold).
    const verdict = await applyInvoiceEvidence(
      m,
      inv,
      evidenceOfCheck(record),
      'api',
      { call },
      absencePolicy(this.config),
      { gatewayStatus, ...priceFactsOf(record) },
    );
    if (!(verdict.kind === 'attention' && verdict.reason === 'mismatch'))
      await applyRecordFacts(m, inv, record);
    const applied = verdict.kind === 'apply';
    await applyGatewayFacts(m, inv, record, this.config.gateway.nowOffset, 'api');
    if (!applied) {
      // Accepted, status unchanged (non-final answer): recorded, the notification follows.
      await auditCall({ gatewayStatus });
      // The gateway took it without a final status: the notification (or invoice/check)
      // settles it; meanwhile no second charge or unhold.
      if (!isFinal(inv.status))
        await m.update(
          InvoiceEntity,
          { id: inv.id },
          {
            ...(inv.status === 'held' ? this.settleFirst() : {}),
            nextCheckAt: this.secondsFromNow(this.config.invoices.reconcileGraceS),
          },
        );
    }
    return this.view(await this.reload(m, inv));
  }

  /**
   * Phase 1 of a charge or unhold: the claim on a held row whose gateway id is known, one
   * statement; an unhold also records that it was asked for. Undefined: not claimed.
   */
  private async claimHold(
    shopOrderId: string,
    action: 'charge' | 'unhold',
  ): Promise<{ id: string; invoice_id: string } | undefined> {
    const leaseS = callLeaseSeconds(this.config.gateway.timeoutMs);
    const claimed = (await this.dataSource.query(
      `UPDATE invoices SET call_owner = $3, call_started_at = now(),
              call_lease_until = now() + make_interval(secs => $4), updated_at = now(),
              unhold_requested_at = CASE WHEN $5::boolean THEN now() ELSE unhold_requested_at END
        WHERE shop_id = $1 AND shop_order_id = $2 AND status = 'held' AND invoice_id IS NOT NULL
          AND call_lease_until IS NULL
        RETURNING id, invoice_id::text AS invoice_id`,
      [this.shopId, shopOrderId, INSTANCE_ID, leaseS, action === 'unhold'],
    )) as [Array<{ id: string; invoice_id: string }>, number];
    return claimed[0][0];
  }

  /** A charge or unhold that could not claim the row: done already (200), in flight, or 409. */
  private async holdNotClaimed(
    shopOrderId: string,
    action: 'charge' | 'unhold',
  ): Promise<InvoiceView> {
    const inv = await this.findInvoice(shopOrderId);
    if (!inv) throw new NotFound('Invoice', shopOrderId);
    if (holdActionDone(inv, action)) return this.view(inv);
    if (canCaptureOrRelease(inv.status) && inv.callLeaseUntil !== null)
      throw new RequestInProgress('shopOrderId', shopOrderId, 1);
    if (canCaptureOrRelease(inv.status) && inv.invoiceId === null)
      throw new InvalidState('Invoice', shopOrderId, 'held without gateway invoice id', action);
    throw new InvalidState('Invoice', shopOrderId, inv.status, action);
  }

  // ------------------------------------------------------------------ payer

  /**
   * The step of `/pay/{shopOrderId}?t=`: 404 for a wrong token, no invoice or no redirect; a
   * status page once the invoice is final (or held); the redirect otherwise. A redirect address
   * that is not http(s) is never sent to the browser: the invoice is flagged for an operator.
   */
  async payerStep(
    shopOrderId: string,
    token: string | undefined,
    nonce: string,
  ): Promise<PayerStep> {
    const inv = await this.dataSource
      .getRepository(InvoiceEntity)
      .findOneBy({ shopId: this.shopId, shopOrderId });
    // The same answer for every miss, so the page says nothing about which invoices exist.
    const notFound = new NotFound('Payment page', shopOrderId);
    if (!inv || token === undefined || !sameSecret(token, inv.payToken)) throw notFound;
    if (isFinal(inv.status) || inv.status === 'held') {
      return {
        kind: 'status',
        html: statusPage(inv.status === 'succeeded' || inv.status === 'held'),
      };
    }
    if (!inv.redirect) throw notFound;
    const step = payerStep(inv.redirect, nonce);
    if (step.kind === 'blocked') await this.flagUnsafeRedirect(inv);
    return step;
  }

  private async flagUnsafeRedirect(inv: InvoiceEntity): Promise<void> {
    const scheme = inv.redirect?.url.split(':')[0].slice(0, 20) ?? '';
    await this.dataSource.transaction((m) =>
      raiseAttention(
        m,
        { object: 'invoice', id: inv.id, shopId: inv.shopOrderId, status: inv.status },
        'unsafe_redirect',
        `the payer redirect address is not http(s) (scheme ${scheme})`,
        'gateway',
        { scheme },
      ),
    );
  }

  private secondsFromNow(s: number): Date {
    return new Date(Date.now() + s * 1000);
  }
}

/** Facts of an invoice record (check, charge) that fill what we did not know yet. */
async function applyRecordFacts(
  m: EntityManager,
  inv: InvoiceEntity,
  r: InvoiceRecord,
): Promise<void> {
  const changes: {
    paymentId?: string;
    shopAmount?: Amount;
  } = {};
  if (r.payment_id !== undefined && r.payment_id !== null) changes.paymentId = String(r.payment_id);
  if (typeof r.shop_amount === 'string') changes.shopAmount = Amount.fromText(r.shop_amount);
  if (Object.keys(changes).length > 0) {
    await m.update(InvoiceEntity, { id: inv.id }, changes);
    Object.assign(inv, changes);
  }
  await takePriceFacts(m, inv, priceFactsOf(r));
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
  policy: AbsencePolicy,
  keys: KeyRing,
  gatewayOffset: string,
): Promise<InvoiceVerdict> {
  const n = typeof record.status === 'number' ? record.status : Number(record.status);
  const verdict = await applyInvoiceEvidence(
    m,
    inv,
    evidenceOfCheck(record),
    cause,
    { call: 'invoice/check', gatewayStatus: n },
    policy,
    // The price goes with the status change, so the change's event carries it.
    { gatewayStatus: n, ...priceFactsOf(record) },
  );
  // A record that is not ours teaches nothing about our invoice.
  if (verdict.kind === 'attention' && verdict.reason === 'mismatch') return verdict;
  await applyRecordFacts(m, inv, record);
  await applyGatewayFacts(m, inv, record, gatewayOffset, cause);
  const token = record.payment_token;
  if (
    token &&
    typeof token.token === 'string' &&
    token.token !== '' &&
    (token.status === undefined || token.status === 'SUCCESS')
  ) {
    await storePaymentToken(m, inv, token.token, tokenInfoFromCheck(token), keys);
  }
  return verdict;
}

/**
 * invoice/try refused an order in another currency than its payway's: the gateway cannot price
 * it in the payway's currency (no rate, or the price falls outside the payway's bounds). That is
 * the caller's currency choice, answered as a 400 naming `currency`, never a gateway 5xx; a
 * transport failure or an unclassified code stays a gateway failure.
 */
export function pricingFailure(
  err: unknown,
  dto: QuoteInvoiceDto,
  payway: InputPayway,
): DomainError {
  if (
    err instanceof GatewayError &&
    err.fatal === true &&
    boundsCheckFor(dto.currency, payway.currency) === 'gateway'
  ) {
    const paywayCurrency = currencyCodeOf(payway.currency);
    const theirs = paywayCurrency === null ? 'its own currency' : currencyName(paywayCurrency);
    return new ValidationFailed([
      {
        field: 'currency',
        message:
          `${currencyName(dto.currency)}: the gateway would not price this order in the currency of payway ` +
          `${dto.payway}, ${theirs} (gateway error ${err.errorCode}: no rate, or a price outside the payway's ` +
          `limits); send the amount in ${theirs}, or check it first with POST /api/v1/invoices/quote`,
      },
    ], { gatewayErrorCode: err.errorCode, fatal: true });
  }
  return gatewayFailure(err, 'invoice/try');
}

/** The group entry for the secret fields a repeat sent; none when it sent none. */
function secretEntries(sent: readonly string[]) {
  return sent.length > 0 ? [secretFieldsEntry(sent)] : [];
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
