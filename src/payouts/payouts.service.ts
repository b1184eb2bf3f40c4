import { moneyText } from '../common/money';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { NotFound, ValidationFailed } from '../common/errors';
import { AuditService } from '../audit/audit.service';
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
import type { CheckAccountResult, WithdrawTryResult } from '../gateway/gateway.types';
import { boundsCheckFor } from '../payway-config/currency-conversion';
import { PaywayConfigService } from '../payway-config/payway-config.service';
import { PayoutFingerprints } from './payout-fingerprint';
import { PayoutControls } from './payout-controls';

import type { CheckAccountDto, QuotePayoutDto } from './dto/payout-requests.dto';
import { toPayoutView, type PayoutView } from './dto/payout.view';
import { gatewayFailure } from './payout.errors';
import { keyIdOf } from '../common/auth.guard';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { PayoutProcessor } from './payout-processor';
import { accountProblems, amountProblems } from './payout-validation';
import * as approveOp from './operations/approve-payout';
import type { StoredAnswer } from '../common/stored-answer';
import * as createOp from './operations/create-payout';
import { convertedProblems, UNBOUNDED } from './operations/create-payout';
import * as recheckOp from './operations/recheck-payout';
import * as rejectOp from './operations/reject-payout';

export type StoredResponse = StoredAnswer<PayoutView>;

/** A method's parameters after the service it is given (operations/*.ts take it first). */
type Rest<F> = F extends (core: never, ...a: infer A) => unknown ? A : never;

/**
 * The payouts facade: quote, check-account, reads, and the operations under operations/
 * (create, approve, reject, reconcile), each in its own file; the methods here hand over to them.
 */
@Injectable()
export class PayoutsService {
  readonly fingerprints: PayoutFingerprints;
  /** The admin keys configured now: only their approvals count (payout.rules.ts). */
  readonly adminKeyIds: ReadonlySet<string>;

  constructor(
    @Inject(APP_CONFIG) readonly config: AppConfig,
    @InjectDataSource() readonly dataSource: DataSource,
    readonly gateway: GatewayService,
    readonly payways: PaywayConfigService,
    readonly processor: PayoutProcessor,
    keys: KeyRing,
    readonly audit: AuditService,
    readonly controls: PayoutControls,
  ) {
    // Rows written before the key ring were fingerprinted under the payment shop's secret.
    this.fingerprints = new PayoutFingerprints(keys, config.gateway.shops.payment.secretKey);
    this.adminKeyIds = new Set(config.adminApiKeys.map(keyIdOf));
  }

  /** Payouts are the agent shop's: written and found under its id. */
  get shopId(): number {
    return this.gateway.shopId('payout');
  }

  async quote(dto: QuotePayoutDto): Promise<Record<string, unknown>> {
    const payway = await this.payways.getPayway('payout', dto.payway);
    const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
    this.reject(amountProblems(dto.amount, local ? payway : UNBOUNDED, dto.amountType));
    const r = await this.tryWithdraw(dto);
    if (!local) this.reject(convertedProblems(r, payway));
    return {
      // Each in its own currency's minor-unit digits.
      payeeReceive: moneyText(String(r.payee_receive), r.ps_currency),
      shopWriteOff: moneyText(String(r.shop_write_off), r.shop_currency),
      psCurrency: r.ps_currency,
      shopCurrency: r.shop_currency,
      accountInfoConfig: r.account_info_config,
    };
  }

  async tryWithdraw(dto: QuotePayoutDto): Promise<WithdrawTryResult> {
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

  /** priceInPaywayCurrency: operations/create-payout.ts. */
  priceInPaywayCurrency(
    ...a: Rest<typeof createOp.priceInPaywayCurrency>
  ): ReturnType<typeof createOp.priceInPaywayCurrency> {
    return createOp.priceInPaywayCurrency(this, ...a);
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

  /** create: operations/create-payout.ts. */
  create(...a: Rest<typeof createOp.create>): ReturnType<typeof createOp.create> {
    return createOp.create(this, ...a);
  }

  /** createAwaiting: operations/create-payout.ts. */
  createAwaiting(
    ...a: Rest<typeof createOp.createAwaiting>
  ): ReturnType<typeof createOp.createAwaiting> {
    return createOp.createAwaiting(this, ...a);
  }

  /** approve: operations/approve-payout.ts. */
  approve(...a: Rest<typeof approveOp.approve>): ReturnType<typeof approveOp.approve> {
    return approveOp.approve(this, ...a);
  }

  /** approveLocked: operations/approve-payout.ts. */
  approveLocked(
    ...a: Rest<typeof approveOp.approveLocked>
  ): ReturnType<typeof approveOp.approveLocked> {
    return approveOp.approveLocked(this, ...a);
  }

  /** wouldSend: operations/approve-payout.ts. */
  wouldSend(...a: Rest<typeof approveOp.wouldSend>): ReturnType<typeof approveOp.wouldSend> {
    return approveOp.wouldSend(this, ...a);
  }

  /** admissionOf: operations/approve-payout.ts. */
  admissionOf(...a: Rest<typeof approveOp.admissionOf>): ReturnType<typeof approveOp.admissionOf> {
    return approveOp.admissionOf(this, ...a);
  }

  /** recipientOf: operations/approve-payout.ts. */
  recipientOf(...a: Rest<typeof approveOp.recipientOf>): ReturnType<typeof approveOp.recipientOf> {
    return approveOp.recipientOf(this, ...a);
  }

  /** approverKeyIds: operations/approve-payout.ts. */
  approverKeyIds(
    ...a: Rest<typeof approveOp.approverKeyIds>
  ): ReturnType<typeof approveOp.approverKeyIds> {
    return approveOp.approverKeyIds(this, ...a);
  }

  /** countingOf: operations/approve-payout.ts. */
  countingOf(...a: Rest<typeof approveOp.countingOf>): ReturnType<typeof approveOp.countingOf> {
    return approveOp.countingOf(this, ...a);
  }

  /** rejectPayout: operations/reject-payout.ts. */
  rejectPayout(...a: Rest<typeof rejectOp.rejectPayout>): ReturnType<typeof rejectOp.rejectPayout> {
    return rejectOp.rejectPayout(this, ...a);
  }

  /** awaitingApproval: operations/approve-payout.ts. */
  awaitingApproval(
    ...a: Rest<typeof approveOp.awaitingApproval>
  ): ReturnType<typeof approveOp.awaitingApproval> {
    return approveOp.awaitingApproval(this, ...a);
  }

  /** approverKeyId: operations/approve-payout.ts. */
  approverKeyId(
    ...a: Rest<typeof approveOp.approverKeyId>
  ): ReturnType<typeof approveOp.approverKeyId> {
    return approveOp.approverKeyId(this, ...a);
  }

  /** lockAwaiting: operations/approve-payout.ts. */
  lockAwaiting(
    ...a: Rest<typeof approveOp.lockAwaiting>
  ): ReturnType<typeof approveOp.lockAwaiting> {
    return approveOp.lockAwaiting(this, ...a);
  }

  find(shopPaymentId: string): Promise<PayoutEntity | null> {
    return this.dataSource
      .getRepository(PayoutEntity)
      .findOneBy({ shopId: this.shopId, shopPaymentId });
  }

  /** storeResponse: operations/create-payout.ts. */
  storeResponse(
    ...a: Rest<typeof createOp.storeResponse>
  ): ReturnType<typeof createOp.storeResponse> {
    return createOp.storeResponse(this, ...a);
  }

  /** answerRepeat: operations/create-payout.ts. */
  answerRepeat(...a: Rest<typeof createOp.answerRepeat>): ReturnType<typeof createOp.answerRepeat> {
    return createOp.answerRepeat(this, ...a);
  }

  /** sameRequestOrConflict: operations/create-payout.ts. */
  sameRequestOrConflict(
    ...a: Rest<typeof createOp.sameRequestOrConflict>
  ): ReturnType<typeof createOp.sameRequestOrConflict> {
    return createOp.sameRequestOrConflict(this, ...a);
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

  /** reconcile: operations/recheck-payout.ts. */
  reconcile(...a: Rest<typeof recheckOp.reconcile>): ReturnType<typeof recheckOp.reconcile> {
    return recheckOp.reconcile(this, ...a);
  }

  reject(errors: Array<{ field: string; message: string }>): void {
    if (errors.length > 0) throw new ValidationFailed(errors);
  }
}
