import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { sqlList } from '../common/sql';
import { SETTLED_NOTIFICATION_STATUSES } from './notification.entity';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { inBatches, RETENTION_EVERY_MS } from '../jobs/batches';
import { scheduleJob, singleFlight } from '../jobs/schedule';

const log = logger.child({ component: 'notification-retention' });

/**
 * Verified notifications that were applied or changed nothing (`stale`: a repeat), last received
 * more than RETENTION_NOTIFICATIONS_DAYS ago, oldest first (ix_notifications_settled). Pending,
 * rejected and ignored ones stay for operators. Evidence stays too: a notification whose status
 * was not applied (`status_effect = 'not_applied'`: the gateway contradicted the object, whatever
 * else was learnt from it), and one whose invoice or refund is still flagged (attention open).
 * The audit entries they caused stay for ever.
 */
export const PRUNE_NOTIFICATIONS_SQL = `DELETE FROM notifications WHERE id IN (
    SELECT n.id FROM notifications n
     WHERE n.verified AND n.status IN (${sqlList(SETTLED_NOTIFICATION_STATUSES)})
       AND n.last_received_at < clock_now() - make_interval(days => $1)
       AND n.status_effect IS DISTINCT FROM 'not_applied'
       AND NOT EXISTS (SELECT 1 FROM invoices i
                        WHERE i.shop_id = n.shop_id AND i.shop_order_id = n.shop_order_id
                          AND i.needs_attention)
       AND NOT EXISTS (SELECT 1 FROM refunds r
                        WHERE r.shop_id = n.shop_id AND r.shop_refund_id = n.shop_refund_id
                          AND r.needs_attention)
     ORDER BY n.last_received_at LIMIT $2
     FOR UPDATE OF n SKIP LOCKED)`;

/**
 * The unverified sample beyond NOTIFY_UNVERIFIED_KEEP, oldest first. Each stored unverified
 * notification trims it already; this catches up in batches after the setting is lowered.
 */
export const TRIM_UNVERIFIED_SQL = `DELETE FROM notifications WHERE id IN (
    SELECT id FROM notifications WHERE verified = false
     ORDER BY received_at DESC, id DESC OFFSET $1 LIMIT $2
     FOR UPDATE SKIP LOCKED)`;

/**
 * Bounds the notifications inbox, in batches of short transactions with a pause
 * between; safe with any number of instances (SKIP LOCKED).
 */
@Injectable()
export class NotificationRetention implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'notification-retention',
      RETENTION_EVERY_MS,
      () => this.runOnce(),
      log,
      { runAtStart: true },
    );
  }

  readonly runOnce = singleFlight(async () => {
    const settled = await inBatches((size) =>
      this.delete(PRUNE_NOTIFICATIONS_SQL, [this.config.retention.notificationsDays, size]),
    );
    const unverified = await inBatches((size) =>
      this.delete(TRIM_UNVERIFIED_SQL, [this.config.notifyUnverifiedKeep, size]),
    );
    if (settled + unverified > 0) log.info({ settled, unverified }, 'retention pruned');
    return { settled, unverified };
  });

  private async delete(sql: string, params: unknown[]): Promise<number> {
    const [, n] = (await this.dataSource.query(sql, params)) as [unknown, number];
    return n;
  }
}
