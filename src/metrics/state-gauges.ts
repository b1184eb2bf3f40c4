import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import {
  attentionOldest,
  attentionOpen,
  dbPoolConnections,
  dbPoolMax,
  dbPoolWaiting,
  payoutPollOverdue,
} from './metrics';

/** How long one reading of the database gauges serves scrapes (several Prometheus servers, one query). */
export const STATE_TTL_MS = 5000;

export const ATTENTION_OBJECTS = ['invoice', 'refund', 'payout'] as const;

/**
 * One round trip, every part on an index: the attention rows through the partial
 * `ix_<table>_attention (attention_at) WHERE needs_attention` indexes (cost grows with the
 * flagged rows only, never with the table), the oldest due payout through
 * `ix_payouts_next_poll`. `$1` is the agent shop: the poller never claims another shop's rows,
 * so those must not read as "late".
 */
export const STATE_GAUGES_SQL = `
  SELECT 'invoice' AS kind, count(*)::int AS open,
         GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_now() - min(attention_at)), 0))::float8 AS age
    FROM invoices WHERE needs_attention
  UNION ALL
  SELECT 'refund', count(*)::int,
         GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_now() - min(attention_at)), 0))::float8
    FROM refunds WHERE needs_attention
  UNION ALL
  SELECT 'payout', count(*)::int,
         GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_now() - min(attention_at)), 0))::float8
    FROM payouts WHERE needs_attention
  UNION ALL
  SELECT 'payout_poll', 0,
         GREATEST(0, COALESCE(EXTRACT(EPOCH FROM clock_now() - min(next_poll_at)), 0))::float8
    FROM payouts
   WHERE shop_id = $1 AND next_poll_at <= clock_now() AND (lease_until IS NULL OR lease_until < clock_now())`;

export interface StateRow {
  kind: string;
  open: number;
  age: number;
}

/**
 * Sets the gauges from one reading (pure but for the gauges). Every object gets a value, 0 when
 * nothing is flagged, so the series exist before the first flag and alerts compare numbers,
 * not absences.
 */
export function applyStateRows(rows: StateRow[]): void {
  for (const object of ATTENTION_OBJECTS) {
    const row = rows.find((r) => r.kind === object);
    attentionOpen.set({ object }, row?.open ?? 0);
    attentionOldest.set({ object }, row?.age ?? 0);
  }
  payoutPollOverdue.set(rows.find((r) => r.kind === 'payout_poll')?.age ?? 0);
}

/** What pg-pool tells about itself (TypeORM's postgres driver keeps it as `driver.master`). */
export interface PoolLike {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** Sets the pool gauges of this instance; nothing when the driver has no pool (yet). */
export function applyPoolStats(pool: PoolLike | undefined, max: number): void {
  dbPoolMax.set(max);
  if (!pool) return;
  dbPoolConnections.set({ state: 'open' }, pool.totalCount);
  dbPoolConnections.set({ state: 'idle' }, pool.idleCount);
  dbPoolWaiting.set(pool.waitingCount);
}

/**
 * `run` at most once per `ttlMs`: a call within the window waits for the run in progress (if
 * any) and otherwise returns at once, keeping the last values. A failed run counts as a run, so
 * a sick database is not asked on every scrape.
 */
export function atMostEvery(
  ttlMs: number,
  run: () => Promise<void>,
  clock: () => number = Date.now,
): () => Promise<void> {
  let last = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | null = null;
  return async () => {
    const now = clock();
    if (now - last < ttlMs) {
      if (running) await running.catch(() => undefined);
      return;
    }
    last = now;
    const current = run().finally(() => {
      if (running === current) running = null;
    });
    running = current;
    await current;
  };
}

/** Reads the database gauges on scrape, cached for STATE_TTL_MS; the pool gauges on every scrape. */
@Injectable()
export class StateGauges {
  private readonly log = logger.child({ component: 'metrics' });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private readonly readState = atMostEvery(STATE_TTL_MS, async () => {
    try {
      const rows = (await this.dataSource.query(STATE_GAUGES_SQL, [
        this.config.gateway.shops.payout.shopId,
      ])) as StateRow[];
      applyStateRows(rows);
    } catch (err) {
      // The last values stay; service_ready and the pool gauges say why.
      this.log.warn({ err: (err as Error).message }, 'could not read the state gauges');
    }
  });

  async refresh(): Promise<void> {
    const driver = this.dataSource.driver as unknown as { master?: PoolLike };
    applyPoolStats(driver.master, this.config.db.poolSize);
    await this.readState();
  }
}
