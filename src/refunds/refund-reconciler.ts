import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { reconcileRuns } from '../metrics/metrics';
import { RefundsService } from './refunds.service';
import { claimDue, forEachBounded, releaseLeases } from '../jobs/claim';
import { jobsStopping, scheduleJob } from '../jobs/schedule';

const BATCH = 50;
const CONCURRENCY = 4;
/** Longer than a get-refunds call can take; a crashed instance's rows are taken over after it. */
const LEASE_S = 120;

/**
 * Settles WAITING refunds through invoice/get-refunds. Any number of instances may run it: rows
 * are claimed with a lease (FOR UPDATE SKIP LOCKED), and each is processed under its invoice
 * and refund row locks, so two instances never act on one refund at once.
 */
@Injectable()
export class RefundReconciler implements OnApplicationBootstrap {
  private readonly log = logger.child({ component: 'refund-reconciler' });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly refunds: RefundsService,
    private readonly scheduler: SchedulerRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'refund-reconciler',
      this.config.tickMs,
      () => this.runOnce(),
      this.log,
    );
  }

  /** Claims the due refunds and settles them; returns how many were claimed. */
  async runOnce(): Promise<number> {
    const ids = await claimDue(this.dataSource, {
      table: 'refunds',
      dueColumn: 'next_check_at',
      limit: BATCH,
      leaseSeconds: LEASE_S,
      shopId: this.refunds.shopId,
    });
    const skipped = await forEachBounded(
      ids,
      CONCURRENCY,
      async (id) => {
        try {
          const outcome = await this.refunds.reconcile(id);
          reconcileRuns.inc({ kind: 'refund', outcome });
        } catch (err) {
          // The lease runs out and another run picks the row up again.
          reconcileRuns.inc({ kind: 'refund', outcome: 'error' });
          this.log.error(
            { refundId: id, err: (err as Error).message },
            'refund reconciliation failed',
          );
        }
      },
      () => jobsStopping(this.scheduler),
    );
    await releaseLeases(this.dataSource, 'refunds', skipped);
    return ids.length - skipped.length;
  }
}
