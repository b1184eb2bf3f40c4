import { OWED_DELIVERIES_SQL } from './delivery-states';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { inBatches, RETENTION_EVERY_MS } from '../jobs/batches';
import { scheduleJob, singleFlight } from '../jobs/schedule';

const log = logger.child({ component: 'event-retention' });

/**
 * Delivered webhook deliveries older than RETENTION_DELIVERIES_DAYS, oldest first by id
 * (ix_webhook_deliveries_state). Pending, failed and dead ones stay: they are still work, or
 * an operator's to see and redeliver.
 */
export const PRUNE_DELIVERIES_SQL = `DELETE FROM webhook_deliveries WHERE id IN (
    SELECT id FROM webhook_deliveries
     WHERE state = 'delivered' AND delivered_at < clock_now() - make_interval(days => $1)
     ORDER BY state, id LIMIT $2
     FOR UPDATE SKIP LOCKED)`;

/**
 * One step of the feed's horizon. Under the horizon row's lock (SKIP LOCKED: a second instance
 * finds it taken and does nothing), the next events after the horizon in feed order are taken
 * while they are older than RETENTION_EVENTS_DAYS and have no delivery still open (pending or
 * failed) to any address, configured here or not (an address removed from the configuration,
 * or another instance's, is still owed its events); their `data` is cleared and the horizon
 * moves to the last one.
 * The first young (or still delivering) event stops it, so the horizon never passes an event the
 * feed or a push still needs. Type, sequence and every audit column stay.
 */
export const ADVANCE_FEED_HORIZON_SQL = `WITH h AS (
    SELECT position FROM feed_horizon WHERE id = 1 FOR UPDATE SKIP LOCKED),
  next AS (
    SELECT e.id, e.position,
           e.created_at < clock_now() - make_interval(days => $1)
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                              WHERE d.event_id = e.id AND d.state IN (${OWED_DELIVERIES_SQL}))
             AS prunable
      FROM events e, h
     WHERE e.position > h.position
     ORDER BY e.position LIMIT $2),
  stop AS (SELECT min(position) AS p FROM next WHERE NOT prunable),
  take AS (SELECT n.id, n.position FROM next n, stop WHERE stop.p IS NULL OR n.position < stop.p),
  cleared AS (UPDATE events e SET data = NULL FROM take WHERE e.id = take.id RETURNING e.id),
  moved AS (
    UPDATE feed_horizon SET position = (SELECT max(position) FROM take), updated_at = clock_now()
     WHERE id = 1 AND EXISTS (SELECT 1 FROM take) RETURNING position)
  SELECT (SELECT count(*) FROM cleared)::int AS n`;

/**
 * Bounds the events domain's tables: delivered webhook deliveries after
 * RETENTION_DELIVERIES_DAYS; shop events leave the feed after RETENTION_EVENTS_DAYS. The
 * `events` table is also the audit trail, so no event row is ever deleted: a pruned event keeps
 * every audit column and its type and sequence, and loses only its `data` payload (the object's
 * snapshot, most of the row's size). The feed serves only events after the horizon and answers
 * 410 with the oldest cursor for an older one. Every statement touches at most a batch of rows
 * in its own transaction, with a pause between, and is safe with any number of instances.
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.schedulerEnabled) return;
    scheduleJob(this.scheduler, 'event-retention', RETENTION_EVERY_MS, () => this.runOnce(), log, {
      runAtStart: true,
    });
  }

  /** One run over both tables; returns what it pruned. */
  readonly runOnce = singleFlight(async () => {
    const { deliveriesDays, eventsDays } = this.config.retention;
    const deliveries = await inBatches(async (size) => {
      const [, n] = (await this.dataSource.query(PRUNE_DELIVERIES_SQL, [deliveriesDays, size])) as [
        unknown,
        number,
      ];
      return n;
    });
    const events = await inBatches(async (size) => {
      const [row] = (await this.dataSource.query(ADVANCE_FEED_HORIZON_SQL, [
        eventsDays,
        size,
      ])) as Array<{ n: number }>;
      return row.n;
    });
    if (deliveries + events > 0) log.info({ deliveries, events }, 'retention pruned');
    return { deliveries, events };
  });
}
