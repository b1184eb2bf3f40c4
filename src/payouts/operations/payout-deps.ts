import type { DataSource, EntityManager } from 'typeorm';
import type { AuditService } from '../../audit/audit.service';
import { ValidationFailed } from '../../common/errors';
import type { KeyRing } from '../../common/key-ring';
import { logger } from '../../common/logger';
import type { StoredAnswer } from '../../common/stored-answer';
import type { AppConfig } from '../../config/config';
import { toGatewayId, type GatewayService } from '../../gateway';
import type { PayoutRecord, WithdrawCreateResult } from '../../gateway/gateway.types';
import { ask, type CallAnswer } from '../../jobs/gateway-operation';
import type { PaywayConfigService } from '../../payway-config/payway-config.service';
import { accountContext } from '../account-seal';
import type { PayoutView } from '../dto/payout.view';
import type { PayoutControls } from '../payout-controls';
import { PayoutEntity } from '../payout.entity';
import type { PayoutFingerprints } from '../payout-fingerprint';

/**
 * What every payout operation (operations/*.ts) works with. Built once by PayoutsModule and given
 * to the module's facades (PayoutsService, PayoutProcessor), which hand it to the operations;
 * no operation imports a facade.
 */
export interface PayoutDeps {
  config: AppConfig;
  dataSource: DataSource;
  gateway: GatewayService;
  payways: PaywayConfigService;
  audit: AuditService;
  keys: KeyRing;
  controls: PayoutControls;
  fingerprints: PayoutFingerprints;
  /** The admin keys configured now: only their approvals count (payout.rules.ts). */
  adminKeyIds: ReadonlySet<string>;
  /** The agent shop: payouts are written and found under its id. */
  shopId: number;
  /** Rows whose next poll time this round's answer chose (see keepOrNext). */
  chosenByAnswer: WeakSet<PayoutEntity>;
}

export const log = logger.child({ component: 'payouts' });

/** A create's answer: replayed as is (code and body) for an identical repeat. */
export type StoredResponse = StoredAnswer<PayoutView>;

/** What is sealed in `account_sealed`: enough to repeat the create after "absent". */
export interface SealedRecipient {
  account: string;
  accountDetails?: Record<string, string>;
}

/** The fields of a payout its `withdraw/create` request is built from. */
export type WithdrawFacts = Pick<
  PayoutEntity,
  'shopPaymentId' | 'amount' | 'amountType' | 'shopCurrency' | 'payway' | 'description'
>;

/** 422 naming every field in `errors`; nothing when there is none. */
export function rejectProblems(errors: Array<{ field: string; message: string }>): void {
  if (errors.length > 0) throw new ValidationFailed(errors);
}

export function findPayout(d: PayoutDeps, shopPaymentId: string): Promise<PayoutEntity | null> {
  return d.dataSource.getRepository(PayoutEntity).findOneBy({ shopId: d.shopId, shopPaymentId });
}

/** The row and its lock, for the rest of the caller's (short) transaction. */
export function lockPayout(
  m: EntityManager,
  where: { id: string } | { shopId: number; shopPaymentId: string },
): Promise<PayoutEntity | null> {
  return m.findOne(PayoutEntity, { where, lock: { mode: 'pessimistic_write' } });
}

/** Sealed for one row: the ciphertext opens only as `account_sealed` of payout `payoutId`. */
export function sealRecipient(d: PayoutDeps, payoutId: string, recipient: SealedRecipient): string {
  return d.keys.seal(JSON.stringify(recipient), accountContext(payoutId));
}

export function unsealRecipient(d: PayoutDeps, p: PayoutEntity): SealedRecipient {
  return JSON.parse(d.keys.unseal(p.accountSealed, accountContext(p.id))) as SealedRecipient;
}

/** Phase 2 of a create: the `withdraw/create` request of the row and its recipient. */
export function withdraw(
  d: PayoutDeps,
  p: WithdrawFacts,
  recipient: SealedRecipient,
): Promise<WithdrawCreateResult> {
  return d.gateway.createWithdraw({
    shop_payment_id: p.shopPaymentId,
    amount: p.amount.toString(),
    amount_type: p.amountType,
    shop_currency: p.shopCurrency,
    payway: p.payway,
    account: recipient.account,
    account_details: recipient.accountDetails,
    description: p.description ?? undefined,
  });
}

/** Phase 2 of a poll: by withdraw id when known, else by shop_payment_id. */
export async function askStatus(
  d: PayoutDeps,
  p: Pick<PayoutEntity, 'withdrawId' | 'shopPaymentId'>,
): Promise<{ via: string; answer: CallAnswer<PayoutRecord> }> {
  const via = p.withdrawId === null ? 'withdraw/shop_payment_status' : 'withdraw/status';
  const answer = await ask(() =>
    p.withdrawId === null
      ? d.gateway.withdrawShopPaymentStatus(p.shopPaymentId)
      : d.gateway.withdrawStatus(toGatewayId(p.withdrawId)),
  );
  return { via, answer };
}

/** The Nest token of the module's one PayoutDeps (payouts.module.ts builds it). */
export const PAYOUT_DEPS = Symbol('PAYOUT_DEPS');
