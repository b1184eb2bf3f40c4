import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Amount } from '../common/money';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayError, GatewayService, type InvoiceCheckRecord } from '../gateway';
import { InvoiceEntity } from '../invoices/invoice.entity';
import { transitionInvoice } from '../invoices/invoice-transitions';
import { storePaymentToken, tokenInfoFromCheck } from '../invoices/payment-token';
import {
  FINAL_INVOICE_STATUSES,
  isFinal,
  statusFromGatewayNumber,
} from '../invoices/invoice.state';
import { reconcileRuns } from '../metrics/metrics';
import { claimDue, forEachBounded } from './claim';
import { nextInvoiceCheck } from './invoice-reconciler.schedule';
import { scheduleJob } from './schedule';

const log = logger.child({ component: 'invoice-reconciler' });

const BATCH = 100;
const CONCURRENCY = 8;
/** Longer than a gateway call can take; a crashed instance's claims are taken over after it. */
const LEASE_S = 120;

type Outcome = 'settled' | 'rescheduled' | 'flagged' | 'never_created' | 'error';

/**
 * Settles invoices whose notification is late or lost: every non-final invoice gets a first check
 * time (created + grace) and a deadline (created + max age); due ones are claimed (FOR UPDATE SKIP
 * LOCKED + lease, so several instances never check one invoice twice per cycle), asked with
 * invoice/check and moved through the state machine; still open ones back off, and past the
 * deadline they are flagged for an operator.
 */
@Injectable()
export class InvoiceReconciler implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'invoice-reconciler',
      this.config.tickMs,
      () => this.runOnce(),
      log,
    );
  }

  /** One cycle: schedule new open invoices, claim the due ones, check each once. Returns how many were checked. */
  async runOnce(): Promise<number> {
    await this.scheduleOpenInvoices();
    const ids = await claimDue(this.dataSource, {
      table: 'invoices',
      dueColumn: 'next_check_at',
      limit: BATCH,
      leaseSeconds: LEASE_S,
    });
    await forEachBounded(ids, CONCURRENCY, async (id) => {
      const outcome = await this.checkOne(id).catch((e: Error) => {
        log.error({ invoicePk: id, err: e.message }, 'invoice check failed');
        return 'error' as const;
      });
      reconcileRuns.inc({ kind: 'invoice', outcome });
    });
    return ids.length;
  }

  /** Open invoices without a check time get one (after the grace period) and a deadline. */
  private async scheduleOpenInvoices(): Promise<void> {
    const { reconcileGraceS, reconcileMaxS } = this.config.invoices;
    await this.dataSource.query(
      `UPDATE invoices
          SET next_check_at = created_at + make_interval(secs => $1),
              check_deadline = COALESCE(check_deadline, created_at + make_interval(secs => $2))
        WHERE next_check_at IS NULL AND needs_attention = false AND status <> ALL($3::varchar[])`,
      [reconcileGraceS, reconcileMaxS, FINAL_INVOICE_STATUSES],
    );
  }

  private async checkOne(id: string): Promise<Outcome> {
    const invoice = await this.dataSource.getRepository(InvoiceEntity).findOne({ where: { id } });
    if (invoice === null) return 'error';
    if (isFinal(invoice.status)) {
      await this.release(id);
      return 'settled';
    }
    let record: InvoiceCheckRecord;
    try {
      record = await this.gateway.checkInvoice(invoice.shopOrderId);
    } catch (e) {
      if (e instanceof GatewayError && e.isAbsent) return this.absent(id);
      // Transport or gateway trouble: keep the invoice, ask again later.
      log.warn(
        { shopOrderId: invoice.shopOrderId, err: (e as Error).message },
        'invoice/check failed; will retry',
      );
      return this.reschedule(id);
    }
    return this.applyCheck(id, record);
  }

  private async applyCheck(id: string, record: InvoiceCheckRecord): Promise<Outcome> {
    return this.dataSource.transaction(async (manager) => {
      const invoice = await manager.findOne(InvoiceEntity, {
        where: { id },
        lock: { mode: 'pessimistic_write' },
      });
      if (invoice === null) return 'error';
      if (
        record.shop_amount !== undefined &&
        record.shop_amount !== null &&
        !Amount.fromText(String(record.shop_amount)).eq(invoice.amount)
      ) {
        log.warn(
          { shopOrderId: invoice.shopOrderId },
          'invoice/check amount differs from the stored invoice; flagged for an operator',
        );
        await manager.query(
          `UPDATE invoices SET needs_attention = true, next_check_at = NULL, lease_until = NULL WHERE id = $1`,
          [id],
        );
        return 'flagged';
      }
      const to = statusFromGatewayNumber(record.status);
      if (to !== null) {
        const paymentId =
          record.payment_id !== undefined && record.payment_id !== null
            ? String(record.payment_id)
            : undefined;
        await transitionInvoice(
          manager,
          invoice,
          to,
          'reconciliation',
          { via: 'invoice/check', gatewayStatus: record.status },
          {
            gatewayStatus: record.status,
            ...(paymentId !== undefined ? { paymentId } : {}),
          },
        );
      }
      const token = record.payment_token;
      if (token && typeof token.token === 'string') {
        await storePaymentToken(manager, invoice, token.token, tokenInfoFromCheck(token));
      }
      if (isFinal(invoice.status)) {
        await this.release(id, manager.query.bind(manager));
        return 'settled';
      }
      return this.reschedule(id, manager.query.bind(manager));
    });
  }

  /** The gateway does not know the invoice: a create that never happened ends as rejected (after the grace period). */
  private async absent(id: string): Promise<Outcome> {
    const graceMs = this.config.invoices.reconcileGraceS * 1000;
    return this.dataSource.transaction(async (manager) => {
      const invoice = await manager.findOne(InvoiceEntity, {
        where: { id },
        lock: { mode: 'pessimistic_write' },
      });
      if (invoice === null) return 'error';
      const open = invoice.status === 'pending' || invoice.status === 'unknown';
      if (open && Date.now() - invoice.createdAt.getTime() >= graceMs) {
        await transitionInvoice(
          manager,
          invoice,
          'rejected',
          'reconciliation',
          { via: 'invoice/check', reason: 'absent' },
          { gatewayMessage: 'The gateway does not know this invoice: it was never created' },
        );
        await this.release(id, manager.query.bind(manager));
        log.info(
          { shopOrderId: invoice.shopOrderId },
          'invoice never reached the gateway; rejected',
        );
        return 'never_created';
      }
      if (!open)
        log.warn(
          { shopOrderId: invoice.shopOrderId, status: invoice.status },
          'invoice/check does not know an invoice the gateway had answered',
        );
      return this.reschedule(id, manager.query.bind(manager));
    });
  }

  /** Next check with backoff, or the operator flag once the deadline has passed. Clears the lease. */
  private async reschedule(
    id: string,
    query: Query = this.dataSource.query.bind(this.dataSource),
  ): Promise<Outcome> {
    const rows = (await query(`SELECT check_attempts, check_deadline FROM invoices WHERE id = $1`, [
      id,
    ])) as Array<{
      check_attempts: number;
      check_deadline: Date | null;
    }>;
    if (rows.length === 0) return 'error';
    const next = nextInvoiceCheck({
      now: new Date(),
      attempts: rows[0].check_attempts,
      deadline: rows[0].check_deadline,
      graceS: this.config.invoices.reconcileGraceS,
    });
    await query(
      `UPDATE invoices SET check_attempts = check_attempts + 1, next_check_at = $2, needs_attention = $3, lease_until = NULL WHERE id = $1`,
      [id, next.nextCheckAt, next.needsAttention],
    );
    if (next.needsAttention)
      log.warn(
        { invoicePk: id },
        'invoice still not final at its deadline; flagged for an operator',
      );
    return next.needsAttention ? 'flagged' : 'rescheduled';
  }

  private async release(
    id: string,
    query: Query = this.dataSource.query.bind(this.dataSource),
  ): Promise<void> {
    await query(`UPDATE invoices SET next_check_at = NULL, lease_until = NULL WHERE id = $1`, [id]);
  }
}

type Query = (sql: string, params?: unknown[]) => Promise<unknown>;
