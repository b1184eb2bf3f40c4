import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { scheduleJob } from '../jobs/schedule';
import { type Reconciliation, ReconciliationService } from './reconciliation.service';
import { clock } from '../common/clock';

const log = logger.child({ component: 'reconciliation-job' });

/** How long a claimed day is held by the instance running it; a killed run is taken over after. */
export const DAY_LEASE_S = 600;

/**
 * The daily reconciliation: RECONCILE_BOOKS_AT minutes after a REPORT_TIMEZONE day ends, that
 * day is reconciled once across instances. The day is claimed in `reconciliation_days` (insert,
 * or take over an expired lease of a run that never finished); the claim's holder runs it and
 * records the run's id, which ends the day. A run the gateway could not answer lets the claim go:
 * the next tick (of whichever instance) tries the day again.
 */
@Injectable()
export class ReconciliationJob implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly reconciliations: ReconciliationService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'reconcile-books',
      60_000,
      async () => {
        await this.runOnce();
        await this.reconciliations.refreshMetrics();
      },
      log,
      { runAtStart: true },
    );
  }

  /** The last day whose end, plus RECONCILE_BOOKS_AT minutes, has passed. */
  dueDay(now = clock.date()): string {
    const shifted = new Date(now.getTime() - this.config.reconcileBooksAtMinutes * 60_000);
    return this.reconciliations.defaultDay(shifted);
  }

  /** Claims and runs the due day if no instance has; the run's id, or null. */
  async runOnce(now = clock.date()): Promise<string | null> {
    const day = this.dueDay(now);
    const claimed = (await this.ds.query(
      `INSERT INTO reconciliation_days (date, lease_until) VALUES ($1, clock_now() + make_interval(secs => $2))
       ON CONFLICT (date) DO UPDATE SET lease_until = EXCLUDED.lease_until
         WHERE reconciliation_days.reconciliation_id IS NULL AND reconciliation_days.lease_until < clock_now()
       RETURNING date`,
      [day, DAY_LEASE_S],
    )) as unknown[];
    if (claimed.length === 0) return null;
    let rec: Reconciliation;
    try {
      rec = await this.reconciliations.run(day, null);
    } catch (e) {
      // Not run (the gateway did not answer): the claim is let go, so the next tick of any
      // instance claims the day again instead of waiting for the lease to run out.
      await this.ds.query(
        `UPDATE reconciliation_days SET lease_until = clock_now() - interval '1 second'
          WHERE date = $1 AND reconciliation_id IS NULL`,
        [day],
      );
      throw e;
    }
    await this.ds.query(`UPDATE reconciliation_days SET reconciliation_id = $2 WHERE date = $1`, [
      day,
      rec.id,
    ]);
    return rec.id;
  }
}
