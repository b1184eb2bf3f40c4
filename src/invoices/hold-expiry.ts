import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway/gateway.service';
import { scheduleJob } from '../jobs/schedule';
// The invoice event's snapshot loader is registered there.
import './invoice-transitions';

const log = logger.child({ component: 'hold-expiry' });

const BATCH = 100;

/**
 * Held invoices whose hold lapses within the warning window, not warned yet: marked warned and
 * returned in one statement. Rows another instance is warning about are skipped (and, once it
 * commits, no longer match), so each hold is warned of once.
 */
export const CLAIM_HOLD_WARNINGS_SQL = `UPDATE invoices SET hold_expiry_warned_at = clock_now()
  WHERE id IN (
    SELECT id FROM invoices
     WHERE status = 'held' AND hold_expires_at IS NOT NULL AND processed_at IS NULL AND shop_id = $1
       AND hold_expiry_warned_at IS NULL
       AND hold_expires_at <= clock_now() + make_interval(secs => $2)
     ORDER BY hold_expires_at
     LIMIT $3
     FOR UPDATE SKIP LOCKED)
  RETURNING id, shop_order_id, hold_expires_at`;

/**
 * A hold not yet lapsed is asked about no later than its expiry: the reconciler's backoff may
 * have put its next check past it.
 */
export const CHECK_AT_HOLD_EXPIRY_SQL = `UPDATE invoices SET next_check_at = hold_expires_at
  WHERE status = 'held' AND hold_expires_at IS NOT NULL AND processed_at IS NULL AND shop_id = $1
    AND hold_expires_at > clock_now()
    AND (next_check_at IS NULL OR next_check_at > hold_expires_at)`;

/**
 * Holds expire visibly: the shop gets `invoice.hold_expiring` HOLD_EXPIRY_WARNING_S before the
 * gateway lets a hold lapse (once per hold), and a held invoice is checked at its expiry.
 */
@Injectable()
export class HoldExpiryJob implements OnApplicationBootstrap {
  private readonly audit = new AuditService();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(this.scheduler, 'hold-expiry', this.config.tickMs, () => this.runOnce(), log);
  }

  /** The next moment a hold's warning falls due, or null (the sandbox clock stops there). */
  async nextDueAt(): Promise<Date | null> {
    const rows = (await this.dataSource.query(
      `SELECT min(hold_expires_at - make_interval(secs => $2)) AS at FROM invoices
        WHERE status = 'held' AND hold_expires_at IS NOT NULL AND processed_at IS NULL AND shop_id = $1
          AND hold_expiry_warned_at IS NULL AND hold_expires_at > clock_now()`,
      [this.gateway.shopId('payment'), this.config.holdExpiryWarningS],
    )) as Array<{ at: Date | null }>;
    return rows[0]?.at ?? null;
  }

  /** One tick: checks pulled back to the expiry, then the warnings due. Returns how many were warned. */
  async runOnce(): Promise<number> {
    const shopId = this.gateway.shopId('payment');
    await this.dataSource.query(CHECK_AT_HOLD_EXPIRY_SQL, [shopId]);
    return this.dataSource.transaction(async (m) => {
      const result = (await m.query(CLAIM_HOLD_WARNINGS_SQL, [
        shopId,
        this.config.holdExpiryWarningS,
        BATCH,
      ])) as [Array<{ id: string; shop_order_id: string; hold_expires_at: Date }>, number];
      const rows = result[0];
      // The UPDATE holds each row's lock until commit, as the event's sequence needs.
      for (const r of rows) {
        await this.audit.record(m, {
          entityType: 'invoice',
          entityId: r.shop_order_id,
          rowId: r.id,
          fromStatus: 'held',
          toStatus: 'held',
          cause: 'reconciliation',
          notice: 'hold_expiring',
          details: {
            holdExpiresAt: r.hold_expires_at.toISOString(),
            warningS: this.config.holdExpiryWarningS,
          },
        });
      }
      if (rows.length > 0) log.info({ warned: rows.length }, 'hold expiry warnings sent');
      return rows.length;
    });
  }
}
