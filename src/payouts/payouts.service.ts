import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IdempotencyConflict, NotFound, ValidationFailed } from '../common/errors';
import { Amount } from '../common/money';
import { decodeCursor, DEFAULT_PAGE_SIZE, type Page, toPage } from '../common/pagination';
import { deriveKey } from '../common/sealed';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import type { CheckAccountResult, WithdrawTryResult } from '../gateway/gateway.types';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import { maskAccount } from './account-mask';
import type { CheckAccountDto, CreatePayoutDto, QuotePayoutDto } from './dto/payout-requests.dto';
import { toPayoutView, type PayoutView } from './dto/payout.view';
import { gatewayFailure } from './payout.errors';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { PayoutProcessor } from './payout-processor';
import { isFinal, isPolled } from './payout.state';
import { accountProblems, amountProblems } from './payout-validation';

export interface StoredResponse {
  code: number;
  body: PayoutView;
}

/** How often a duplicate request looks again while the first one has not locked the row yet. */
const DUPLICATE_WAIT_MS = 50;

@Injectable()
export class PayoutsService {
  private readonly fingerprintKey: Buffer;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly payways: PaywayConfigService,
    private readonly processor: PayoutProcessor,
  ) {
    this.fingerprintKey = deriveKey(config.gateway.secretKey, 'payout-fingerprint');
  }

  async quote(dto: QuotePayoutDto): Promise<Record<string, unknown>> {
    const payway = await this.payways.getPayway('payout', dto.payway);
    this.reject(amountProblems(dto.amount, payway));
    let r: WithdrawTryResult;
    try {
      r = await this.gateway.tryWithdraw({
        amount: dto.amount,
        amount_type: dto.amountType,
        payway: dto.payway,
        shop_currency: dto.shopCurrency,
      });
    } catch (err) {
      throw gatewayFailure('withdraw/try', err);
    }
    return {
      payeeReceive: String(r.payee_receive),
      shopWriteOff: String(r.shop_write_off),
      psCurrency: r.ps_currency,
      shopCurrency: r.shop_currency,
      accountInfoConfig: r.account_info_config,
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
   * The idempotent create: validate everything, commit the row as `pending` (so a crash after
   * this point leaves a row the poller finishes), then call `withdraw/create` holding the row
   * lock, store the answer and the response. A repeat with the same body replays that response;
   * another body is 409; concurrent repeats wait on the lock and make no gateway call.
   */
  async create(dto: CreatePayoutDto): Promise<StoredResponse> {
    const payway = await this.payways.getPayway('payout', dto.payway);
    this.reject([
      ...amountProblems(dto.amount, payway),
      ...accountProblems(dto.account, dto.accountDetails, payway),
    ]);
    const shopId = this.config.gateway.shopId;
    const fingerprint = this.fingerprint(dto);
    const { pollMaxS } = this.config.payouts;
    // A pending row is left alone by the poller for this long: the create request is in flight.
    const graceS =
      Math.ceil(this.config.gateway.timeoutMs / 1000) + this.config.payouts.pollIntervalS;
    const inserted = await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(PayoutEntity)
      .values({
        shopId,
        shopPaymentId: dto.shopPaymentId,
        requestFingerprint: fingerprint,
        status: 'pending',
        amount: Amount.parse(dto.amount),
        amountType: dto.amountType,
        shopCurrency: dto.shopCurrency,
        payway: dto.payway,
        accountMasked: maskAccount(dto.account),
        accountSealed: this.processor.sealRecipient({
          account: dto.account,
          accountDetails: dto.accountDetails,
        }),
        description: dto.description ?? null,
        nextPollAt: () => `now() + make_interval(secs => ${graceS})`,
        pollDeadline: () => `now() + make_interval(secs => ${pollMaxS})`,
      })
      .orIgnore()
      .returning(['id'])
      .execute();
    const rows = inserted.raw as Array<{ id: string }>;
    if (rows.length === 1) return this.finishCreate(rows[0].id, true, graceS);

    const existing = await this.dataSource
      .getRepository(PayoutEntity)
      .findOneBy({ shopId, shopPaymentId: dto.shopPaymentId });
    if (existing === null)
      throw new Error(`payout ${dto.shopPaymentId} vanished after a conflicting insert`);
    if (existing.requestFingerprint !== fingerprint)
      throw new IdempotencyConflict('shopPaymentId', dto.shopPaymentId);
    return this.finishCreate(existing.id, false, graceS);
  }

  private async finishCreate(
    id: string,
    insertedHere: boolean,
    graceS: number,
  ): Promise<StoredResponse> {
    for (;;) {
      const outcome = await this.dataSource.transaction(
        async (m): Promise<StoredResponse | 'wait'> => {
          const p = await this.processor.lock(m, { id });
          if (p === null) throw new NotFound('Payout', id);
          if (p.responseCode !== null)
            return { code: p.responseCode, body: p.responseBody as PayoutView };
          if (p.status === 'pending' && p.createAttempts === 0) {
            if (insertedHere) {
              await this.processor.submitCreate(m, p, 'api', true);
            } else if (Date.now() - p.createdAt.getTime() < graceS * 1000) {
              // The first request committed the row and will lock it any moment: let it send.
              return 'wait';
            } else {
              // The first request died before sending (or while sending): find out, then act.
              await this.processor.settle(m, p, 'api', true);
            }
          }
          const nextPollAt = this.processor.nextPollAt(p);
          p.nextPollAt = nextPollAt;
          const body = toPayoutView(p);
          await m.update(
            PayoutEntity,
            { id: p.id },
            { nextPollAt, responseCode: 202, responseBody: body },
          );
          return { code: 202, body };
        },
      );
      if (outcome !== 'wait') return outcome;
      await new Promise((resolve) => setTimeout(resolve, DUPLICATE_WAIT_MS));
    }
  }

  async get(shopPaymentId: string): Promise<PayoutView> {
    const p = await this.dataSource
      .getRepository(PayoutEntity)
      .findOneBy({ shopId: this.config.gateway.shopId, shopPaymentId });
    if (p === null) throw new NotFound('Payout', shopPaymentId);
    return toPayoutView(p);
  }

  async list(q: {
    status?: PayoutStatus;
    limit?: number;
    cursor?: string;
  }): Promise<Page<PayoutView>> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const cursor = decodeCursor(q.cursor);
    const qb = this.dataSource
      .getRepository(PayoutEntity)
      .createQueryBuilder('p')
      .where('p.shop_id = :shopId', { shopId: this.config.gateway.shopId });
    if (q.status) qb.andWhere('p.status = :status', { status: q.status });
    if (cursor) qb.andWhere('(p.created_at, p.id) < (:createdAt, :id)', cursor);
    const rows = await qb
      .orderBy('p.created_at', 'DESC')
      .addOrderBy('p.id', 'DESC')
      .take(limit + 1)
      .getMany();
    return toPage(rows, limit, toPayoutView);
  }

  /**
   * Admin: ask the gateway now. A payout past its deadline is not created again after "absent"
   * (an operator decides that), but a found final status settles it.
   */
  async reconcile(shopPaymentId: string): Promise<PayoutView> {
    return this.dataSource.transaction(async (m) => {
      const p = await this.processor.lock(m, { shopId: this.config.gateway.shopId, shopPaymentId });
      if (p === null) throw new NotFound('Payout', shopPaymentId);
      if (isFinal(p.status)) return toPayoutView(p);
      await this.processor.refresh(m, p, 'admin', p.status !== 'needs_attention');
      if (isPolled(p.status) && Date.now() >= p.pollDeadline.getTime()) {
        await this.processor.write(m, p, 'needs_attention', 'admin', {
          reason: 'no final status by the poll deadline',
        });
      }
      const nextPollAt = this.processor.nextPollAt(p);
      await m.update(PayoutEntity, { id: p.id }, { nextPollAt });
      p.nextPollAt = nextPollAt;
      return toPayoutView(p);
    });
  }

  /**
   * HMAC-SHA256 of the canonical request: plain SHA-256 of a body holding a card number could be
   * reversed by trying the few card numbers that fit; the keyed hash cannot.
   */
  private fingerprint(dto: CreatePayoutDto): string {
    const canonical = {
      shopPaymentId: dto.shopPaymentId,
      amount: dto.amount,
      amountType: dto.amountType,
      shopCurrency: dto.shopCurrency,
      payway: dto.payway,
      account: dto.account,
      accountDetails: dto.accountDetails
        ? Object.fromEntries(
            Object.entries(dto.accountDetails).sort(([a], [b]) => a.localeCompare(b)),
          )
        : null,
      description: dto.description ?? null,
    };
    return createHmac('sha256', this.fingerprintKey)
      .update(JSON.stringify(canonical))
      .digest('hex');
  }

  private reject(errors: Array<{ field: string; message: string }>): void {
    if (errors.length > 0) throw new ValidationFailed(errors);
  }
}
