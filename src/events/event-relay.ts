import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { orderForFeed, type Unpositioned } from './feed-order';

/** Rows positioned per relay run; the rest wait for the next run. */
const BATCH = 1000;
/** Runs a feed read makes at most before it reads (each positions up to BATCH events). */
const CATCH_UP_RUNS = 20;
/** One relay at a time across every instance (a transaction-level advisory lock). */
export const RELAY_LOCK = 0x5e7e_0017;

/**
 * Gives shop events their feed position and their push deliveries. Sequence values are taken
 * when a row is inserted, not when it commits, so `id` order has gaps a reader could skip over
 * (a slow transaction commits id 10 after id 11 was read). The relay numbers only rows already
 * committed, after the fact: runs are serialised by an advisory lock held until their commit,
 * so positions become visible in increasing order, all of a run at once, and a reader following
 * `position > cursor` never skips one. A long transaction delays only its own events (unlike a
 * horizon of the oldest running transaction, which would stall every event behind it).
 */
@Injectable()
export class EventRelay {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** One run; returns how many events were positioned (0 when another instance is relaying). */
  async run(): Promise<number> {
    return (await this.runOnce(false)).positioned;
  }

  /**
   * What a feed read does before it reads: every event committed before now gets its position.
   * A run in flight elsewhere (another read, the dispatcher, another instance) is waited for, not
   * skipped (it may have begun before events this read must see committed), and then this read
   * runs the relay itself, again while a run finds a full batch.
   */
  async catchUp(): Promise<void> {
    for (let i = 0; i < CATCH_UP_RUNS; i++) if (!(await this.runOnce(true)).full) return;
  }

  private runOnce(wait: boolean): Promise<{ positioned: number; full: boolean }> {
    return this.dataSource.transaction(async (m) => {
      if (wait) {
        await m.query(`SELECT pg_advisory_xact_lock($1)`, [RELAY_LOCK]);
      } else {
        const [lock] = (await m.query(`SELECT pg_try_advisory_xact_lock($1) AS ok`, [
          RELAY_LOCK,
        ])) as Array<{ ok: boolean }>;
        if (!lock.ok) return { positioned: 0, full: false };
      }
      return this.positionStable(m);
    });
  }

  private async positionStable(m: EntityManager): Promise<{ positioned: number; full: boolean }> {
    const stable = (await m.query(
      `SELECT id, entity_type, entity_id, sequence FROM events
        WHERE type IS NOT NULL AND position IS NULL
        ORDER BY id LIMIT $1`,
      [BATCH],
    )) as Unpositioned[];
    const full = stable.length === BATCH;
    if (stable.length === 0) return { positioned: 0, full };
    // The lowest unpositioned sequence of each object in the batch, stable or not.
    const firsts = (await m.query(
      `SELECT e.entity_type, e.entity_id, MIN(e.sequence)::int AS sequence FROM events e
         JOIN unnest($1::varchar[], $2::varchar[]) o(t, i) ON e.entity_type = o.t AND e.entity_id = o.i
        WHERE e.type IS NOT NULL AND e.position IS NULL
        GROUP BY e.entity_type, e.entity_id`,
      [stable.map((r) => r.entity_type), stable.map((r) => r.entity_id)],
    )) as Array<{ entity_type: string; entity_id: string; sequence: number }>;
    const ordered = orderForFeed(stable, firsts);
    if (ordered.length === 0) return { positioned: 0, full };
    await m.query(
      `UPDATE events e SET position = base.p + v.n
         FROM (SELECT COALESCE(MAX(position), 0) AS p FROM events) base,
              unnest($1::bigint[]) WITH ORDINALITY v(id, n)
        WHERE e.id = v.id`,
      [ordered],
    );
    const urls = this.config.shopEvents.urls;
    if (urls.length > 0) {
      await m.query(
        `INSERT INTO webhook_deliveries (event_id, url, entity_type, entity_id, sequence)
         SELECT e.id, u.url, e.entity_type, e.entity_id, e.sequence
           FROM events e CROSS JOIN unnest($2::text[]) u(url)
          WHERE e.id = ANY($1::bigint[])
         ON CONFLICT (event_id, url) DO NOTHING`,
        [ordered, urls],
      );
    }
    return { positioned: ordered.length, full };
  }
}
