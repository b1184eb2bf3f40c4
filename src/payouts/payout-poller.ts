import { randomBytes } from 'node:crypto';
import { clock } from '../common/clock';
import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { crashPoint } from '../common/crash-point';
import type { PayoutRecord } from '../gateway/gateway.types';
import { claimDueRows, forEachBounded } from '../jobs/claim';
import type { CallAnswer } from '../jobs/gateway-operation';
import { PayoutProcessor } from './payout-processor';
import {
  mayBeQuiet,
  POLLED_COLUMNS,
  quietRoundNext,
  toPolledRow,
  type PolledRow,
} from './payout-quiet-round';
import { payoutPollLateness } from '../metrics/metrics';
import { INSTANCE_ID } from '../jobs/instance';
import { jobsStopping, scheduleJob, singleFlight } from '../jobs/schedule';

/** Rows claimed at once. */
const CLAIM_LIMIT = 500;
const CAUSE = 'reconciliation';

/**
 * Polls non-final payouts every PAYOUT_POLL_INTERVAL_S until final or PAYOUT_POLL_MAX_S after
 * creation, then flags them `needs_attention`. Each tick claims due rows with a lease (so any
 * number of instances poll each payout once per interval, and a crashed instance's rows are
 * taken over when its lease runs out), asks the gateway, and sets the next due time. All state
 * is in the database: a restart resumes where it stopped. A row left `pending` (crash between
 * the commit and the gateway's answer) is settled like `unknown`: ask shop_payment_status,
 * create once more with the same id only if the gateway says it is absent.
 *
 * The claim returns the rows it leased. A round whose answer changes nothing (the same non-final
 * status and data: payout-quiet-round.ts) is finished with the batch's other quiet rounds in one
 * statement; every other round is written at once through the processor's per-row path.
 */
@Injectable()
export class PayoutPoller implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = logger.child({ component: 'payout-poller' });
  /** Lease owner of this instance. */
  readonly instanceId = `${INSTANCE_ID}-${randomBytes(3).toString('hex')}`;
  // The poller acts for nobody: its writes record no key.
  private readonly perRow = { owner: this.instanceId, mayCreate: true, by: undefined };
  /** Set when the application closes: a tick in progress ends after its batch. */
  private closing = false;

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

  onModuleDestroy(): void {
    this.closing = true;
  }

  /**
   * One tick: claim due payouts and poll them, and claim again as long as the last claim found
   * rows (those that fell due meanwhile), for at most one poll interval: under load the poller
   * works without waiting for the next tick, idle it waits for it. Never overlaps itself;
   * returns how many were polled.
   */
  readonly runOnce = singleFlight(() => this.tick());

  private async tick(): Promise<number> {
    const until = Date.now() + this.config.payouts.pollIntervalS * 1000;
    let polled = 0;
    for (;;) {
      const claimed = await this.claim();
      polled += await this.pollBatch(claimed);
      if (
        claimed.length === 0 ||
        this.closing ||
        jobsStopping(this.scheduler) ||
        Date.now() >= until
      )
        return polled;
    }
  }

  private async claim(): Promise<PolledRow[]> {
    const rows = await claimDueRows(
      this.dataSource,
      {
        table: 'payouts',
        dueColumn: 'next_poll_at',
        limit: CLAIM_LIMIT,
        leaseSeconds: this.config.payouts.leaseS,
        owner: this.instanceId,
        shopId: this.gateway.shopId('payout'),
      },
      POLLED_COLUMNS,
    );
    for (const row of rows) payoutPollLateness.observe(row.late_s);
    if (rows.length > 0) crashPoint('payout.poll.after_claim');
    return rows.map(toPolledRow);
  }

  /**
   * The rounds of one claimed batch: the gateway asked with at most PAYOUT_POLL_CONCURRENCY
   * calls in flight; each answer that changes something written at once by the per-row path;
   * the quiet ones finished together at the end, and any of those whose row changed since the
   * claim written by the per-row path after all (with the answer already in hand: the row is
   * not asked twice, and nothing it gained meanwhile is overwritten).
   */
  private async pollBatch(rows: PolledRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const { concurrency, pollIntervalS, status } = this.config.payouts;
    const quiet: Array<{
      id: string;
      xmin: string;
      nextPollAt: Date;
      via: string;
      answer: CallAnswer<PayoutRecord>;
    }> = [];
    let polled = 0;
    await forEachBounded(rows, concurrency, async (row) => {
      await this.guarded(row.id, async () => {
        if (!mayBeQuiet(row, clock.date())) {
          if (await this.processor.checkOnce(this.dataSource, row.id, CAUSE, this.perRow))
            polled += 1;
          return;
        }
        const { via, answer } = await this.processor.askStatus(row);
        polled += 1;
        const next = answer.ok
          ? quietRoundNext(row, answer.value, {
              now: clock.date(),
              pollIntervalS,
              watch: this.config.watch,
              status,
            })
          : null;
        if (next !== null)
          quiet.push({ id: row.id, xmin: row.xmin, nextPollAt: next, via, answer });
        else await this.recordStatus(row.id, via, answer);
      });
    });
    crashPoint('payout.poll.after_answers');
    // Should this statement fail, its rows wait for their lease as after a crash here.
    const changed = await this.processor.finishQuietRounds(this.dataSource, this.instanceId, quiet);
    if (changed.size > 0) {
      const rounds = quiet.filter((q) => changed.has(q.id));
      await forEachBounded(rounds, concurrency, (q) =>
        this.guarded(q.id, () => this.recordStatus(q.id, q.via, q.answer)),
      );
    }
    return polled;
  }

  private recordStatus(id: string, via: string, answer: CallAnswer<PayoutRecord>): Promise<void> {
    return this.processor.recordStatus(this.dataSource, id, via, answer, CAUSE, {
      owner: this.instanceId,
      resend: null,
      by: undefined,
    });
  }

  /** A round that threw is recorded on its row (and the batch goes on). */
  private async guarded(id: string, round: () => Promise<void>): Promise<void> {
    try {
      await round();
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
  }
}
