import { moneyText } from '../common/money';
import { Inject, Injectable } from '@nestjs/common';
import { NotFound } from '../common/errors';
import {
  afterCursorSql,
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  type Page,
  toPage,
} from '../common/pagination';
import type { CheckAccountResult } from '../gateway/gateway.types';
import { boundsCheckFor } from '../payway-config/currency-conversion';
import type { CheckAccountDto, QuotePayoutDto } from './dto/payout-requests.dto';
import { toPayoutView, type PayoutView } from './dto/payout.view';
import { gatewayFailure } from './payout.errors';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { accountProblems, amountProblems } from './payout-validation';
import * as approveOp from './operations/approve-payout';
import * as createOp from './operations/create-payout';
import { convertedProblems, tryWithdraw, UNBOUNDED } from './operations/create-payout';
import { approvalView } from './payee-check';
import type { PayoutApprovalView } from './dto/payout-approval.view';
import { findPayout, PAYOUT_DEPS, rejectProblems, type PayoutDeps } from './operations/payout-deps';
import * as recheckOp from './operations/recheck-payout';
import * as rejectOp from './operations/reject-payout';

export type { StoredResponse } from './operations/payout-deps';

/** A function's parameters after the dependencies it is given (operations/*.ts take them first). */
type Rest<F> = F extends (d: never, ...a: infer A) => unknown ? A : never;

/**
 * The payouts facade: quote, check-account, reads, and the operations under operations/
 * (create, approve, reject, reconcile), each in its own file taking the module's PayoutDeps;
 * the methods here hand it over.
 */
@Injectable()
export class PayoutsService {
  constructor(@Inject(PAYOUT_DEPS) private readonly d: PayoutDeps) {}

  async quote(dto: QuotePayoutDto): Promise<Record<string, unknown>> {
    const payway = await this.d.payways.getPayway('payout', dto.payway);
    const local = boundsCheckFor(dto.shopCurrency, payway.currency) === 'local';
    rejectProblems(amountProblems(dto.amount, local ? payway : UNBOUNDED, dto.amountType));
    const r = await tryWithdraw(this.d, dto);
    if (!local) rejectProblems(convertedProblems(r, payway));
    return {
      // Each in its own currency's minor-unit digits.
      payeeReceive: moneyText(String(r.payee_receive), r.ps_currency),
      shopWriteOff: moneyText(String(r.shop_write_off), r.shop_currency),
      psCurrency: r.ps_currency,
      shopCurrency: r.shop_currency,
      accountInfoConfig: r.account_info_config,
    };
  }

  async checkAccount(
    dto: CheckAccountDto,
  ): Promise<{ exists: boolean; accountInfo: Record<string, unknown> | null }> {
    const payway = await this.d.payways.getPayway('payout', dto.payway);
    rejectProblems([
      ...amountProblems(dto.amount, payway),
      ...accountProblems(dto.account, dto.accountDetails, payway),
    ]);
    let r: CheckAccountResult;
    try {
      r = await this.d.gateway.checkAccount({
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
    return createOp.create(this.d, ...a);
  }

  /** approve: operations/approve-payout.ts. */
  approve(...a: Rest<typeof approveOp.approve>): ReturnType<typeof approveOp.approve> {
    return approveOp.approve(this.d, ...a);
  }

  /** rejectPayout: operations/reject-payout.ts. */
  rejectPayout(...a: Rest<typeof rejectOp.rejectPayout>): ReturnType<typeof rejectOp.rejectPayout> {
    return rejectOp.rejectPayout(this.d, ...a);
  }

  /** awaitingApproval: operations/approve-payout.ts. */
  awaitingApproval(
    ...a: Rest<typeof approveOp.awaitingApproval>
  ): ReturnType<typeof approveOp.awaitingApproval> {
    return approveOp.awaitingApproval(this.d, ...a);
  }

  /** reconcile: operations/recheck-payout.ts. */
  reconcile(...a: Rest<typeof recheckOp.reconcile>): ReturnType<typeof recheckOp.reconcile> {
    return recheckOp.reconcile(this.d, ...a);
  }

  /** The approval's view (payee-check.ts): the check and quote asked now, what each decision saw. */
  approvalView(shopPaymentId: string): Promise<PayoutApprovalView> {
    return approvalView(this.d, shopPaymentId);
  }

  find(shopPaymentId: string): Promise<PayoutEntity | null> {
    return findPayout(this.d, shopPaymentId);
  }

  async get(shopPaymentId: string): Promise<PayoutView> {
    const p = await findPayout(this.d, shopPaymentId);
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
    const qb = this.d.dataSource
      .getRepository(PayoutEntity)
      .createQueryBuilder('p')
      .where('p.shop_id = :shopId', { shopId: this.d.shopId });
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
}
