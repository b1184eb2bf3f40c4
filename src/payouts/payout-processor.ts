import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AuditService } from '../audit/audit.service';
import type { AuditCause } from '../audit/audit-event.entity';
import { logger } from '../common/logger';
import { Amount } from '../common/money';
import { deriveKey, seal, unseal } from '../common/sealed';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayError, GatewayService, isOutcomeUnknown, toGatewayId } from '../gateway';
import type { PayoutRecord, WithdrawCreateResult } from '../gateway/gateway.types';
import { PayoutEntity, type PayoutStatus } from './payout.entity';
import { decideTransition, isFinal, isPolled, statusFromGatewayNumber } from './payout.state';

/** What is sealed in `account_sealed`: enough to repeat the create after "absent". */
interface SealedRecipient {
  account: string;
  accountDetails?: Record<string, string>;
}

type PayoutChanges = Partial<
  Pick<
    PayoutEntity,
    | 'withdrawId'
    | 'gatewayStatus'
    | 'psCurrency'
    | 'payeeReceive'
    | 'shopWriteOff'
    | 'errorCode'
    | 'gatewayMessage'
  >
>;

/**
 * Everything that talks to the gateway about one payout and writes the answer, always on a row
 * the caller has locked (SELECT ... FOR UPDATE) inside its transaction, so two requests or two
 * instances never act on one payout at once. Used by the create route, the poller and the
 * admin reconcile.
 *
 * Never paid twice: a create is sent only for a row that has never been sent (the create route)
 * or after `withdraw/shop_payment_status` said the payout is absent, always with the same
 * `shop_payment_id`, which the gateway's duplicate protection keeps unique.
 */
@Injectable()
export class PayoutProcessor {
  private readonly log = logger.child({ component: 'payouts' });
  private readonly accountKey: Buffer;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gateway: GatewayService,
    private readonly audit: AuditService,
  ) {
    this.accountKey = deriveKey(config.gateway.secretKey, 'payout-account');
  }

  sealRecipient(recipient: SealedRecipient): string {
    return seal(JSON.stringify(recipient), this.accountKey);
  }

  /** The row and its lock, for the rest of the caller's transaction. */
  lock(
    manager: EntityManager,
    where: { id: string } | { shopId: number; shopPaymentId: string },
  ): Promise<PayoutEntity | null> {
    return manager.findOne(PayoutEntity, { where, lock: { mode: 'pessimistic_write' } });
  }

  /**
   * Sends `withdraw/create` and writes the outcome. `settleIfUnknown`: on an unknown outcome ask
   * `withdraw/shop_payment_status` at once (which may repeat the create once after "absent").
   */
  async submitCreate(
    m: EntityManager,
    p: PayoutEntity,
    cause: AuditCause,
    settleIfUnknown: boolean,
  ): Promise<void> {
    const recipient = JSON.parse(unseal(p.accountSealed, this.accountKey)) as SealedRecipient;
    p.createAttempts += 1;
    await m.update(PayoutEntity, { id: p.id }, { createAttempts: p.createAttempts });
    try {
      const result = await this.gateway.createWithdraw({
        shop_payment_id: p.shopPaymentId,
        amount: p.amount.toString(),
        amount_type: p.amountType,
        shop_currency: p.shopCurrency,
        payway: p.payway,
        account: recipient.account,
        account_details: recipient.accountDetails,
        description: p.description ?? undefined,
      });
      await this.applyRecord(m, p, result, cause, 'withdraw/create');
    } catch (err) {
      await this.applyCreateError(m, p, err, cause, settleIfUnknown);
    }
    // A create went out and nothing settled it: the outcome is open until a status call says.
    if (p.status === 'pending') {
      await this.write(m, p, 'unknown', cause, {
        call: 'withdraw/create',
        reason: 'outcome not settled',
      });
    }
  }

  private async applyCreateError(
    m: EntityManager,
    p: PayoutEntity,
    err: unknown,
    cause: AuditCause,
    settleIfUnknown: boolean,
  ): Promise<void> {
    if (err instanceof GatewayError && err.isDuplicate) {
      // The payout exists on the gateway: look it up, never create another.
      this.log.warn(
        { shopPaymentId: p.shopPaymentId },
        'withdraw/create: shop_payment_id already used, looking it up',
      );
      await this.settle(m, p, cause, false);
      return;
    }
    const errorInfo =
      err instanceof GatewayError
        ? { errorCode: err.errorCode, gatewayMessage: err.gatewayMessage }
        : { errorCode: null, gatewayMessage: (err as Error).message };
    if (err instanceof GatewayError && err.fatal === true) {
      await this.write(
        m,
        p,
        'failed',
        cause,
        { call: 'withdraw/create', errorCode: err.errorCode, fatal: true },
        errorInfo,
      );
      return;
    }
    if (err instanceof GatewayError && err.fatal === false) {
      // Non-fatal: the spec says poll the status (30 s, up to 2 h).
      await this.write(
        m,
        p,
        'processing',
        cause,
        { call: 'withdraw/create', errorCode: err.errorCode, fatal: false },
        errorInfo,
      );
      return;
    }
    // Time-out, reset, an unknown code, or no connection: the payout may exist. Ask, never resend blindly.
    await this.write(
      m,
      p,
      'unknown',
      cause,
      {
        call: 'withdraw/create',
        outcomeUnknown: isOutcomeUnknown(err),
        error: (err as Error).name,
      },
      errorInfo,
    );
    if (settleIfUnknown) await this.settle(m, p, cause, true);
  }

  /**
   * Asks `withdraw/shop_payment_status`: a returned record governs; "absent" allows repeating the
   * create with the same shop_payment_id (when `createIfAbsent`); anything else leaves the row as
   * it is, to be asked again on the next cycle.
   */
  async settle(
    m: EntityManager,
    p: PayoutEntity,
    cause: AuditCause,
    createIfAbsent: boolean,
  ): Promise<void> {
    let record: PayoutRecord;
    try {
      record = await this.gateway.withdrawShopPaymentStatus(p.shopPaymentId);
    } catch (err) {
      if (err instanceof GatewayError && err.isAbsent) {
        if (createIfAbsent) {
          this.log.warn(
            { shopPaymentId: p.shopPaymentId, attempts: p.createAttempts },
            'payout absent on the gateway: repeating the create',
          );
          await this.submitCreate(m, p, cause, false);
        }
        return;
      }
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, err: (err as Error).message },
        'withdraw/shop_payment_status failed; asking again later',
      );
      return;
    }
    await this.applyRecord(m, p, record, cause, 'withdraw/shop_payment_status');
  }

  /** One status question: by withdraw id when known, else by shop_payment_id (settle). */
  async refresh(
    m: EntityManager,
    p: PayoutEntity,
    cause: AuditCause,
    createIfAbsent: boolean,
  ): Promise<void> {
    if (p.withdrawId === null) {
      await this.settle(m, p, cause, createIfAbsent);
      return;
    }
    try {
      await this.applyRecord(
        m,
        p,
        await this.gateway.withdrawStatus(toGatewayId(p.withdrawId)),
        cause,
        'withdraw/status',
      );
    } catch (err) {
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, err: (err as Error).message },
        'withdraw/status failed; asking again later',
      );
    }
  }

  /** The gateway's record (create answer or status) governs: ids, exact amounts, mapped status. */
  private async applyRecord(
    m: EntityManager,
    p: PayoutEntity,
    record: PayoutRecord | WithdrawCreateResult,
    cause: AuditCause,
    call: string,
  ): Promise<void> {
    const mapped = statusFromGatewayNumber(record.status, this.config.payouts.status);
    if (!mapped.known) {
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, gatewayStatus: record.status },
        'unknown payout status number: treated as not final',
      );
    }
    const errorCode =
      'error_code' in record && typeof record.error_code === 'number' && record.error_code > 0
        ? record.error_code
        : null;
    await this.write(
      m,
      p,
      mapped.status,
      cause,
      { call, gatewayStatus: record.status },
      {
        withdrawId: String(record.id),
        gatewayStatus: record.status,
        psCurrency: record.ps_currency ?? p.psCurrency,
        payeeReceive: amountOf(record.payee_receive) ?? p.payeeReceive,
        shopWriteOff: amountOf(record.shop_write_off) ?? p.shopWriteOff,
        // The record governs: an earlier create error no longer describes the payout.
        errorCode,
        ...(errorCode === null ? { gatewayMessage: null } : {}),
      },
    );
  }

  /**
   * Writes the status (if the state machine allows it) and the data, audits the change, and
   * stops polling at a final status. A final payout is never changed.
   */
  async write(
    m: EntityManager,
    p: PayoutEntity,
    to: PayoutStatus,
    cause: AuditCause,
    details: Record<string, unknown>,
    changes: PayoutChanges = {},
  ): Promise<void> {
    const from = p.status;
    const decision = decideTransition(from, to);
    if (!decision.allowed && decision.reason === 'final') {
      this.log.warn({ shopPaymentId: p.shopPaymentId, from, to }, 'final payout not changed');
      return;
    }
    // needs_attention -> processing is expected (a reconcile still finds it open): not worth a warning.
    if (!decision.allowed && decision.reason === 'not_allowed' && from !== 'needs_attention') {
      this.log.warn(
        { shopPaymentId: p.shopPaymentId, from, to },
        'payout transition not allowed; status kept',
      );
    }
    const status = decision.allowed ? to : from;
    const gatewayStatusChanged =
      changes.gatewayStatus !== undefined && changes.gatewayStatus !== p.gatewayStatus;
    const all: Partial<PayoutEntity> = {
      ...changes,
      status,
      ...(isFinal(status) ? { finishedAt: new Date(), nextPollAt: null } : {}),
    };
    // Amount's private fields defeat TypeORM's deep-partial type; the transformer writes it.
    await m.update(PayoutEntity, { id: p.id }, all as QueryDeepPartialEntity<PayoutEntity>);
    Object.assign(p, all);
    if (status !== from || gatewayStatusChanged) {
      await this.audit.record(m, {
        entityType: 'payout',
        entityId: p.shopPaymentId,
        fromStatus: from,
        toStatus: status,
        cause,
        details,
      });
    }
  }

  /** Next poll time for a row still owed an answer; null otherwise. */
  nextPollAt(p: PayoutEntity): Date | null {
    return isPolled(p.status)
      ? new Date(Date.now() + this.config.payouts.pollIntervalS * 1000)
      : null;
  }
}

function amountOf(v: unknown): Amount | null {
  if (typeof v === 'string' && v !== '') return Amount.fromText(v);
  if (typeof v === 'number' || typeof v === 'bigint') return Amount.fromText(String(v));
  return null;
}
