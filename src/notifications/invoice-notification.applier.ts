import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { KeyRing } from '../common/key-ring';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { invoiceFromRow, lockInvoice } from '../invoices/invoice-transitions';
import { absencePolicy, applyInvoiceEvidence, invoiceIdOf } from '../invoices/invoice-evidence';
import { priceFactsOf, takePriceFacts } from '../invoices/invoice-gateway-facts';
import { gatewayNumberOf, statusFromNotification } from '../invoices/invoice.state';
import { storePaymentToken, tokenFromPsData } from '../invoices/payment-token';
import {
  type ApplyContext,
  type ApplyOutcome,
  type NotificationApplier,
  NotificationAppliers,
} from './notification-appliers';
import { outcomeText, statusEffectOf } from './notification.rules';

const log = logger.child({ component: 'invoice-notifications' });

/**
 * Applies a verified payment notification (`type=invoice`) to the stored invoice under its row
 * lock: checks that it belongs to the invoice, then moves it through the state machine. A
 * notification that would move a final state back (late, out of order, repeated) is `stale`.
 */
@Injectable()
export class InvoiceNotificationApplier implements NotificationApplier, OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly appliers: NotificationAppliers,
    private readonly keys: KeyRing,
  ) {}

  onModuleInit(): void {
    this.appliers.register('invoice', this);
  }

  invoiceToLock(fields: Record<string, string>): { shopId: number; shopOrderId: string } | null {
    const shopId = this.config.gateway.shops.payment.shopId;
    const shopOrderId = fields.shop_order_id;
    return shopOrderId && fields.shop_id === String(shopId) ? { shopId, shopOrderId } : null;
  }

  async apply(
    manager: EntityManager,
    fields: Record<string, string>,
    ctx: ApplyContext = {},
  ): Promise<ApplyOutcome> {
    const shopOrderId = fields.shop_order_id;
    if (!shopOrderId) return this.reject(undefined, 'shop_order_id is missing', ctx);
    const shopId = this.config.gateway.shops.payment.shopId;
    // Invoices belong to the payment shop; a notification from the agent shop never moves one.
    if (fields.shop_id !== String(shopId)) {
      return this.reject(
        shopOrderId,
        `shop_id ${fields.shop_id ?? '(missing)'} is not this shop`,
        ctx,
      );
    }
    const invoice =
      ctx.lockedInvoice !== undefined
        ? ctx.lockedInvoice && invoiceFromRow(manager, ctx.lockedInvoice)
        : await lockInvoice(manager, { shopId, shopOrderId });
    if (invoice === null) return this.reject(shopOrderId, `no invoice ${shopOrderId}`, ctx);

    const from = invoice.status;
    const paymentId = invoiceIdOf(fields.payment_id);
    const prices = priceFactsOf(fields);
    const recordStatus = statusFromNotification(fields.status);
    // The gateway's own number for what it reported: a released hold is reported as 6, and the
    // invoice says so whichever came first, the notification or the unhold's answer.
    const gatewayStatus = recordStatus === null ? null : gatewayNumberOf(recordStatus);
    const verdict = await applyInvoiceEvidence(
      manager,
      invoice,
      {
        kind: 'record',
        status: recordStatus,
        statusText: fields.status ?? '',
        shopId: fields.shop_id,
        amount: fields.shop_amount,
        currency: fields.shop_currency,
        // The notification's payment_id is the gateway's invoice id.
        ...(paymentId !== undefined ? { invoiceId: paymentId } : {}),
      },
      'notification',
      { notificationId: ctx.notificationId, gatewayStatusText: fields.status },
      absencePolicy(this.config),
      // The payer's price goes with the status change, so the change's event carries it.
      {
        ...(paymentId !== undefined ? { paymentId } : {}),
        ...(gatewayStatus !== null ? { gatewayStatus } : {}),
        ...prices,
      },
    );
    if (verdict.kind === 'attention' && verdict.reason === 'mismatch')
      return this.reject(shopOrderId, verdict.detail, ctx);
    const priced = await takePriceFacts(manager, invoice, prices);

    const changes: string[] = [];
    if (verdict.kind === 'apply') changes.push(`status ${from} -> ${verdict.to}`);
    else if (priced) changes.push('payer price learnt');
    if (verdict.kind === 'ignore' && verdict.invoiceId !== undefined)
      changes.push(`gateway invoice id ${verdict.invoiceId} learnt`);
    const statusEffect = statusEffectOf(verdict, recordStatus !== null);
    // Why its status did not move: said in the outcome whatever else it taught.
    let notApplied: string | null = null;
    if (verdict.kind === 'attention')
      notApplied = `not applied, needs attention: ${verdict.detail}`;
    else if (verdict.kind === 'ignore') notApplied = `not applied: ${verdict.reason}`;

    // The token comes only with a successful payment; keep it even when the status was settled earlier.
    const token = tokenFromPsData(fields.ps_data);
    if (
      token !== null &&
      (await storePaymentToken(manager, invoice, token.token, token.info, this.keys))
    )
      changes.push('payment token stored');

    if (changes.length > 0)
      return {
        status: 'applied',
        outcome: outcomeText(changes, statusEffect === 'not_applied' ? notApplied : null),
        statusEffect,
        shopOrderId,
      };
    return {
      status: 'stale',
      outcome: notApplied ?? 'nothing to change',
      statusEffect,
      shopOrderId,
    };
  }

  private reject(shopOrderId: string | undefined, reason: string, ctx: ApplyContext): ApplyOutcome {
    // A verified notification that does not match our records: someone must look at it.
    log.warn(
      { shopOrderId, notificationId: ctx.notificationId, reason },
      'payment notification rejected: does not match the invoice',
    );
    return { status: 'rejected', outcome: reason, statusEffect: 'not_applied', shopOrderId };
  }
}
