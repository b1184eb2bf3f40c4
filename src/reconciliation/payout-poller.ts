import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { PayoutEntity } from '../payouts/payout.entity';
import { PayoutProcessor } from '../payouts/payout-processor';
import { isPolled } from '../payouts/payout.state';
import { claimDue, forEachBounded } from './claim';
import { scheduleJob } from './schedule';

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
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private running: Promise<number> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly processor: PayoutProcessor,
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
  runOnce(): Promise<number> {
    if (this.running) return this.running;
    this.running = this.tick().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async tick(): Promise<number> {
    const { leaseS, concurrency } = this.config.payouts;
    const ids = await claimDue(this.dataSource, {
      table: 'payouts',
      dueColumn: 'next_poll_at',
      limit: CLAIM_LIMIT,
      leaseSeconds: leaseS,
      owner: this.instanceId,
    });
    let polled = 0;
    await forEachBounded(ids, concurrency, async (id) => {
      try {
        if (await this.poll(id)) polled += 1;
      } catch (err) {
        this.log.error(
          { payoutId: id, err: (err as Error).message },
          'payout poll failed; retried after the lease',
        );
      }
    });
    return polled;
  }

  /** Polls one claimed payout under its row lock; false when it is no longer ours to poll. */
  private poll(id: string): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      const p = await this.processor.lock(m, { id });
      // Another instance took the row over after our lease ran out, or it is no longer due.
      if (p === null || p.leaseOwner !== this.instanceId) return false;
      if (isPolled(p.status)) {
        await this.processor.refresh(m, p, 'reconciliation', true);
        if (isPolled(p.status) && Date.now() >= p.pollDeadline.getTime()) {
          await this.processor.write(m, p, 'needs_attention', 'reconciliation', {
            reason: 'no final status by the poll deadline',
            pollCount: p.pollCount + 1,
          });
        }
      }
      await m.update(
        PayoutEntity,
        { id: p.id },
        {
          pollCount: p.pollCount + 1,
          nextPollAt: this.processor.nextPollAt(p),
          leaseUntil: null,
          leaseOwner: null,
        },
      );
      return true;
    });
  }
}
