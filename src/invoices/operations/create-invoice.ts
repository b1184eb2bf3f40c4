import type { EntityManager } from 'typeorm';
import { transactionFor, type By } from '../../common/actor';
import { BatchedWrite } from '../../common/batched-write';
import { DomainError, NotFound, RequestInProgress, TokenRevoked } from '../../common/errors';
import {
  differingFields,
  differs,
  recordConflict,
  refuseIfLocked,
  secretFieldsSent,
} from '../../common/idempotency';
import { metadataOf } from '../../common/metadata';
import { Amount } from '../../common/money';
import { byColumn, clientOf, jsonb, poolOf, run } from '../../common/sql';
import type { InvoiceCreateResult } from '../../gateway/gateway.types';
import { runGatewayOperation, type CallAnswer } from '../../jobs/gateway-operation';
import { callLeaseSeconds, waitForAnswer } from '../../jobs/in-flight';
import { INSTANCE_ID } from '../../jobs/instance';
import { randomToken } from '../../common/random-token';
import { replayedAnswer, storedAnswerOf } from '../../common/stored-answer';
import type { CreateInvoiceDto } from '../dto/create-invoice.dto';
import { InvoiceEntity, type PaymentTokenInfo } from '../invoice.entity';
import {
  gatewayCreateRequest,
  invoiceRequestFacts,
  requestFingerprint,
  invoiceRequestIdentity,
  INVOICE_SECRET_FIELDS,
  invoiceSecretFieldsSent,
} from '../invoice-request';
import { clock } from '../../common/clock';
import { INSERT_CLAIMED, INSERT_CLAIMED_MANY } from '../invoice-sql';
import { transitionInvoice } from '../invoice-transitions';
import { isTokenRevoked, markTokenUsed, PAYMENT_TOKEN_INDEX } from '../payment-token';
import {
  answerUnchanged,
  createAnswered,
  createFailed,
  storeResponse,
  type Claimed,
} from './create-invoice-answer';
import {
  NO_CALL,
  type InvoiceDeps,
  type StoredResponse,
  findInvoice,
  invoiceFromRow,
  invoiceView,
  claimCall,
  reloadInvoice,
  secondsFromNow,
} from './invoice-deps';
import { shownInfoOfToken } from './resolve-payment-token';
import { priceInPaywayCurrency, validateAgainstPayway, type PaywayPrice } from './quote-invoice';

/**
 * `POST /invoices`: invoice/create, or invoice/hold for `twoStep`. Its request builder is
 * gatewayCreateRequest (invoice-request.ts); the rules it obeys: the payway's
 * (checkPaymentAgainstPayway, checkConvertedBounds), the idempotency rules (one row per shop id
 * by the unique constraint; same fingerprint → the stored answer, else recordConflict), the
 * revoked-token check, and every status through the invoice state machine (transitionInvoice).
 * The call runs in the one runner (runGatewayOperation); phase 3 is create-invoice-answer.ts.
 */

/**
 * Where an invoice comes from when it is not the shop's own create: a payment link's payer page
 * (its row id). A single-use link's invoice takes the link's one slot (a unique column), so while
 * one of its invoices may still be paid, another attempt's row is not written.
 */
export interface InvoiceOrigin {
  paymentLinkId: string;
  singleUse: boolean;
}

/** A single-use link already has an invoice that may still be paid (or was paid). */
export class PaymentLinkSlotTaken extends DomainError {
  constructor() {
    super(
      'payment-link-in-progress',
      409,
      'Payment link in use',
      'another payment of this single-use link is in progress or done',
    );
  }
}

/** A create request's idempotency fingerprint and the canonical facts it was made of. */
interface RequestIdentity {
  fingerprint: string;
  /** The request's facts as canonical JSON text (invoiceRequestIdentity). */
  factsJson: string;
}

export class CreateInvoice {
  constructor(private readonly ctx: InvoiceDeps) {}

  /**
   * Idempotent by shopOrderId, in atomic phases: (1) one INSERT commits the row `pending` with a
   * claim on the gateway call (owner, start, lease); (2) invoice/create or invoice/hold runs with
   * no transaction and no connection held; (3) a short row lock writes the answer through the
   * state machine and stores the response. A repeat finds the row first and replays it, waits
   * (bounded) while the first copy is in phase 2, or gets 409 "request in progress". A crash
   * between phases leaves a claim whose lease runs out; the repeat or the reconciler then asks
   * invoice/check, never sends the create again.
   */
  async create(dto: CreateInvoiceDto, by: By, origin?: InvoiceOrigin): Promise<StoredResponse> {
    const ctx = this.ctx;
    // The request's facts, once: its fingerprint and the row's stored facts are both made of them.
    const { factsJson, fingerprint } = invoiceRequestIdentity(dto);
    // Look-up first in effect: configuration only judges a new row. Checking the (cached)
    // configuration before the look-up saves a round trip on the hot path; a refusal is only
    // answered once we know no earlier copy of this request exists.
    let priced: PaywayPrice;
    try {
      const payway = await validateAgainstPayway(ctx, dto, true);
      // Before any gateway call (invoice/try included); a repeat of an earlier create replays.
      if (dto.paymentToken !== undefined)
        await this.refuseRevokedToken(ctx.dataSource.manager, dto);
      priced = await priceInPaywayCurrency(ctx, dto, payway);
    } catch (err) {
      const existing = await findInvoice(ctx, dto.shopOrderId);
      if (existing) return this.answerRepeat(existing, dto, fingerprint, by);
      throw err;
    }
    const tokenInfo = dto.paymentToken ? await shownInfoOfToken(ctx, dto.paymentToken) : null;
    const claimed = await this.insertClaimed(dto, { fingerprint, factsJson }, tokenInfo, priced, origin);
    if (claimed === null) {
      const existing = await findInvoice(ctx, dto.shopOrderId);
      // Nothing under this id: the row was refused by the link's slot, held by another invoice.
      if (!existing && origin?.singleUse) throw new PaymentLinkSlotTaken();
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
    priced: PaywayPrice,
    origin?: InvoiceOrigin,
  ): Promise<Claimed | null> {
    const ctx = this.ctx;
    if (dto.paymentToken === undefined)
      return this.insertClaimedIn(ctx.dataSource.manager, dto, request, tokenInfo, priced, origin);
    // The token's registry entry stays locked until the row is in: a revocation committed first
    // refuses this invoice, one committed after it finds the invoice already accepted.
    const token = dto.paymentToken;
    return ctx.dataSource.transaction(async (m) => {
      await this.refuseRevokedToken(m, dto, true);
      const claimed = await this.insertClaimedIn(m, dto, request, tokenInfo, priced);
      if (claimed !== null)
        await markTokenUsed(m, ctx.shopId, ctx.keys.blindIndexes(token, PAYMENT_TOKEN_INDEX));
      return claimed;
    });
  }

  /** A `409 token-revoked` when the invoice names a token revoked in the registry. */
  private async refuseRevokedToken(
    m: EntityManager,
    dto: CreateInvoiceDto,
    lock = false,
  ): Promise<void> {
    const indexes = this.ctx.keys.blindIndexes(dto.paymentToken!, PAYMENT_TOKEN_INDEX);
    const { revoked } = await isTokenRevoked(m, this.ctx.shopId, indexes, lock);
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
    priced: PaywayPrice,
    origin?: InvoiceOrigin,
  ): Promise<Claimed | null> {
    const params = this.claimParams(dto, request, tokenInfo, priced, origin);
    // Outside a transaction the turn's claims share one statement (BatchedWrite).
    const row = m.queryRunner
      ? ((await run(await clientOf(m), INSERT_CLAIMED, params))[0] ?? null)
      : await this.claims.write(params);
    if (row === null) return null;
    return { inv: invoiceFromRow(this.ctx, row), version: row.row_version as string };
  }

  /** INSERT_CLAIMED's parameters for one create. */
  private claimParams(
    dto: CreateInvoiceDto,
    { fingerprint, factsJson }: RequestIdentity,
    tokenInfo: PaymentTokenInfo | null,
    priced: PaywayPrice,
    origin?: InvoiceOrigin,
  ): unknown[] {
    const ctx = this.ctx;
    return [
      ctx.shopId,
      dto.shopOrderId,
      fingerprint,
      factsJson,
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
      callLeaseSeconds(ctx.config.gateway.timeoutMs),
      // Should the answer be lost (crash, time-out), reconciliation settles it with invoice/check.
      secondsFromNow(ctx.config.invoices.reconcileGraceS),
      secondsFromNow(ctx.config.invoices.reconcileMaxS),
      origin?.paymentLinkId ?? null,
      origin?.singleUse ? origin.paymentLinkId : null,
    ];
  }

  /**
   * Phase 1 of the creates of one turn in one statement: each row claimed as
   * INSERT_CLAIMED claims it alone; null for a row whose shop id exists already.
   */
  private readonly claims = new BatchedWrite<unknown[], Record<string, unknown> | null>({
    name: 'invoice_claim',
    key: (params) => params[1] as string,
    one: async (params) =>
      (await run(poolOf(this.ctx.dataSource), INSERT_CLAIMED, params))[0] ?? null,
    many: async (rows) => {
      const inserted = await run(poolOf(this.ctx.dataSource), INSERT_CLAIMED_MANY, byColumn(rows));
      const byId = new Map(inserted.map((r) => [r.shop_order_id as string, r]));
      return rows.map((r) => byId.get(r[1] as string) ?? null);
    },
  });

  /**
   * Phases 2 and 3 for a row this request has claimed. `claimed`: the row as phase 1 inserted it;
   * an answer then costs one statement when nothing touched the row meanwhile (the usual case),
   * else it takes the locked path (create-invoice-answer.ts).
   */
  private async sendCreate(
    id: string,
    dto: CreateInvoiceDto,
    by: By,
    claimed?: Claimed,
  ): Promise<StoredResponse> {
    const ctx = this.ctx;
    const call = dto.twoStep ? 'invoice/hold' : 'invoice/create';
    const req = gatewayCreateRequest(dto, ctx.webhookUrl);
    return runGatewayOperation(ctx.dataSource, {
      name: 'invoice.create',
      by,
      call: () => (dto.twoStep ? ctx.gateway.holdInvoice(req) : ctx.gateway.createInvoice(req)),
      ...(claimed !== undefined
        ? {
            recordUnchanged: async (answer: CallAnswer<InvoiceCreateResult>) =>
              answer.ok ? answerUnchanged(ctx, claimed, call, answer.value, by) : null,
          }
        : {}),
      lock: (m) => m.findOne(InvoiceEntity, { where: { id }, lock: { mode: 'pessimistic_write' } }),
      missing: () => new NotFound('Invoice', dto.shopOrderId),
      record: (m, inv, answer) =>
        answer.ok
          ? createAnswered(ctx, m, inv, call, answer.value)
          : createFailed(ctx, m, inv, call, answer.err),
    });
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
      row ??= await findInvoice(this.ctx, dto.shopOrderId);
      const r = row;
      row = null;
      if (!r) throw new NotFound('Invoice', dto.shopOrderId);
      const stored = storedAnswerOf(r);
      if (stored !== null) return stored;
      if (r.callLeaseUntil !== null && r.callLeaseUntil.getTime() > clock.now()) return undefined;
      return this.takeOver(r.id, by);
    }, this.ctx.config.createWaitMs);
    if (next === undefined) throw new RequestInProgress('shopOrderId', dto.shopOrderId, 1);
    if (next === 'send') return this.sendCreate(existing.id, dto, by);
    if (next === 'wait') return this.answerRepeat(existing, dto, fingerprint, by);
    return replayedAnswer(next);
  }

  /**
   * A repeat is the same request when every field matches (amounts by value, secrets included);
   * otherwise a conflict naming the non-secret fields that differ and the secret ones it sent,
   * counted and capped (src/common/idempotency.ts). Rows written before fingerprints were keyed keep their
   * older fingerprint and no facts: their conflicts name the body as a whole.
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
    const limit = this.ctx.config.idempotencyConflictLimit;
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
      this.ctx.dataSource,
      by,
      target,
      limit,
      [...named, ...secretFieldsSent([invoiceSecretFieldsSent(dto)], INVOICE_SECRET_FIELDS)],
      'api',
    );
  }

  /**
   * Under the row lock: nobody is calling the gateway for this row (no claim, or its lease is
   * over). Never sent → this request claims and sends it; lost in flight → `unknown`, checked
   * now; settled meanwhile → what we know now is the answer.
   */
  private async takeOver(id: string, by: By): Promise<StoredResponse | 'send' | 'wait'> {
    const ctx = this.ctx;
    return transactionFor(
      ctx.dataSource,
      by,
      async (m): Promise<StoredResponse | 'send' | 'wait'> => {
        const inv = await m.findOne(InvoiceEntity, {
          where: { id },
          lock: { mode: 'pessimistic_write' },
        });
        if (!inv) throw new NotFound('Invoice', id);
        const stored = storedAnswerOf(inv);
        if (stored !== null) return stored;
        if (inv.callLeaseUntil !== null && inv.callLeaseUntil.getTime() > clock.now())
          return 'wait';
        if (inv.status === 'pending' && inv.callStartedAt === null) {
          // Absences counted while nothing was sent say nothing about the call made now.
          await m.update(
            InvoiceEntity,
            { id },
            { ...claimCall(ctx), absentCount: 0, firstAbsentAt: null },
          );
          return 'send';
        }
        if (inv.status === 'pending') {
          await transitionInvoice(m, inv, 'unknown', 'api', {
            reason: 'the create call was lost (its lease ran out)',
          });
          await m.update(InvoiceEntity, { id }, { ...NO_CALL, nextCheckAt: clock.date() });
        }
        return storeResponse(m, inv, 201, invoiceView(ctx, await reloadInvoice(m, inv)));
      },
    );
  }
}
