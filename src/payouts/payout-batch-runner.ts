import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { forEachBounded } from '../jobs/claim';
import { callLeaseSeconds } from '../jobs/in-flight';
import { scheduleJob, singleFlight } from '../jobs/schedule';
import { PayoutBatchesService } from './payout-batches.service';

/** Rounds of claims per tick: a tick ends after this many, the next one goes on. */
const ROUNDS_PER_TICK = 50;

/**
 * Sends the rows of stored batches in the background: each round claims a few pending rows with
 * a lease (FOR UPDATE SKIP LOCKED, so instances share the work and a dead instance's rows are
 * taken over when the lease runs out), sends them through the create path with at most
 * PAYOUT_POLL_CONCURRENCY at once, then completes the batches that have every answer.
 */
@Injectable()
export class PayoutBatchRunner implements OnApplicationBootstrap {
  private readonly log = logger.child({ component: 'payout-batch-runner' });

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly batches: PayoutBatchesService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(this.scheduler, 'payout-batch-runner', this.config.tickMs, () => this.runOnce(), this.log, {
      runAtStart: true,
    });
  }

  /** Never overlaps itself in this instance; returns how many rows got their answer. */
  readonly runOnce = singleFlight(() => this.tick());

  /**
   * A claim outlives a create that waits its full time for the gateway and for another copy of
   * itself; past it another instance sends the row again, which the create replays.
   */
  private get leaseS(): number {
    return callLeaseSeconds(this.config.gateway.timeoutMs) + Math.ceil(this.config.createWaitMs / 1000) + 10;
  }

  private async tick(): Promise<number> {
    const shopId = this.gateway.shopId('payout');
    const concurrency = this.config.payouts.concurrency;
    let answered = 0;
    for (let round = 0; round < ROUNDS_PER_TICK; round++) {
      const claimed = await this.claim(shopId, concurrency * 2);
      if (claimed.length === 0) break;
      await forEachBounded(claimed, concurrency, async (r) => {
        try {
          if (await this.batches.sendRow(r.batch_pk, r.row_no)) answered += 1;
        } catch (err) {
          this.log.error(
            { batchPk: r.batch_pk, row: r.row_no, err: (err as Error).message },
            'payout batch row failed; sent again when its lease runs out',
          );
        }
      });
    }
    // Batches with every answer (also those whose last row was answered just before a crash).
    const open = (await this.dataSource.query(
      `SELECT b.id FROM payout_batches b WHERE b.shop_id = $1 AND b.status <> 'completed'
          AND NOT EXISTS (SELECT 1 FROM payout_batch_rows r WHERE r.batch_pk = b.id AND r.state = 'pending')`,
      [shopId],
    )) as Array<{ id: string }>;
    for (const b of open) await this.batches.completeIfDone(b.id);
    return answered;
  }

  private async claim(shopId: number, limit: number): Promise<Array<{ batch_pk: string; row_no: number }>> {
    const raw = (await this.dataSource.query(
      `UPDATE payout_batch_rows SET lease_until = clock_now() + make_interval(secs => $2)
        WHERE (batch_pk, row_no) IN (
          SELECT r.batch_pk, r.row_no FROM payout_batch_rows r JOIN payout_batches b ON b.id = r.batch_pk
           WHERE b.shop_id = $3 AND r.state = 'pending' AND (r.lease_until IS NULL OR r.lease_until < clock_now())
           ORDER BY b.created_at, r.batch_pk, r.row_no
           LIMIT $1
           FOR UPDATE OF r SKIP LOCKED)
        RETURNING batch_pk, row_no`,
      [limit, this.leaseS, shopId],
    )) as unknown;
    const r = raw as [Array<{ batch_pk: string; row_no: number }>, number];
    const rows = Array.isArray(r[0]) ? r[0] : (raw as Array<{ batch_pk: string; row_no: number }>);
    const pks = [...new Set(rows.map((x) => x.batch_pk))];
    if (pks.length > 0)
      await this.dataSource.query(
        `UPDATE payout_batches SET status = 'processing' WHERE id = ANY($1::uuid[]) AND status = 'pending'`,
        [pks],
      );
    return rows;
  }
}
