import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { PayoutProcessor } from './payout-processor';
import { claimDueTimed, forEachBounded } from '../jobs/claim';
import { payoutPollLateness } from '../metrics/metrics';
import { INSTANCE_ID } from '../jobs/instance';
import { scheduleJob, singleFlight } from '../jobs/schedule';

/** Rows claimed per tick; the rest wait for the next tick. */
const CLAIM_LIMIT = 500;

/**
 * Polls non-final payouts every PAYOUT_POLL_INTERVAL_S until final or PAYOUT_POLL_MAX_S after
 * creation, then flags them `needs_attention`. Each tick claims due rows with a lease (so any
 * number of instances poll each payout once per interval, and a crashed instance's rows are
 * taken over when its lease runs out), asks the gateway, and sets the next due time. All state
 * is in the database: a restart resumes where it stopped. A row left `pending` (crash between
 * the commit and the gateway's answer) is settled like `unknown`: ask shop_payment_status,
 * create once more with the same id only if the gateway says it is absent.
 */
@Injectable()
export class PayoutPoller implements OnApplicationBootstrap {
  private readonly log = logger.child({ component: 'payout-poller' });
  /** Lease owner of this instance. */
  readonly instanceId = `${INSTANCE_ID}-${randomBytes(3).toString('hex')}`;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly processor: PayoutProcessor,
    private readonly gateway: GatewayService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(
      this.scheduler,
      'payout-poller',
      this.config.tickMs,
      () => this.runOnce(),
      this.log,
    );
  }

  /** One tick: claim due payouts and poll them. Never overlaps itself; returns how many were polled. */
  readonly runOnce = singleFlight(() => this.tick());

  private async tick(): Promise<number> {
    const { leaseS, concurrency } = this.config.payouts;
    const claimed = await claimDueTimed(this.dataSource, {
      table: 'payouts',
      dueColumn: 'next_poll_at',
      limit: CLAIM_LIMIT,
      leaseSeconds: leaseS,
      owner: this.instanceId,
      shopId: this.gateway.shopId('payout'),
    });
    for (const row of claimed) payoutPollLateness.observe(row.lateS);
    const ids = claimed.map((row) => row.id);
    let polled = 0;
    await forEachBounded(ids, concurrency, async (id) => {
      try {
        if (
          await this.processor.checkOnce(this.dataSource, id, 'reconciliation', {
            owner: this.instanceId,
            mayCreate: true,
          })
        )
          polled += 1;
      } catch (err) {
        this.log.error(
          { payoutId: id, err: (err as Error).message },
          'payout poll failed; recorded on the row',
        );
        await this.processor
          .recordFailure(this.dataSource, id, err, this.instanceId)
          .catch((e: Error) =>
            this.log.error({ payoutId: id, err: e.message }, 'could not record the failed poll'),
          );
      }
    });
    return polled;
  }
}
