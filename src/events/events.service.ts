import { OWED_DELIVERIES_SQL } from './delivery-states';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditEventEntity } from '../audit/audit-event.entity';
import { EVENT_OBJECT_TYPES, type EventObjectType } from '../audit/shop-events';
import { Forbidden } from '../common/auth.guard';
import { DomainError, NotFound, ValidationFailed } from '../common/errors';
import { DEFAULT_PAGE_SIZE, type Page } from '../common/pagination';
import { shownAddress, withoutAddressSecrets } from '../common/redact';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { DeliveryState, EventFeedQuery, ListDeliveriesQuery } from './dto/event-queries.dto';
import { EventRelay } from './event-relay';
import { toShopEvent, type ShopEvent } from './event.view';
import { EVENT_ID_PATTERN } from '../audit/event-id';
import { objectTypeOfEventType } from './feed-scope';
import { instantOf } from '../common/date-time';
import { AuditService } from '../audit/audit.service';
import type { By } from '../common/actor';
import { type DroppedDeliveries, dropUnconfiguredDeliveries } from './unconfigured-deliveries';

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  objectType: string;
  objectId: string;
  sequence: number;
  url: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  /** An open delivery held back by an earlier event of its object to the same address. */
  waitingFor: { eventId: string; sequence: number } | null;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  public_id: string | null;
  type: string;
  entity_type: string;
  entity_id: string;
  sequence: number;
  url: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  waiting_event: string | null;
  waiting_sequence: number | null;
}

/**
 * The earliest open delivery of an earlier event of the same object to the same address: the one
 * the dispatcher waits for before it sends `d` (webhook-dispatcher.ts's claim has the same test).
 */
export const WAITING_FOR_SQL = `
  LEFT JOIN LATERAL (
    SELECT COALESCE(pe.public_id, pe.id::text) AS waiting_event, p.sequence AS waiting_sequence
      FROM webhook_deliveries p JOIN events pe ON pe.id = p.event_id
     WHERE d.state IN (${OWED_DELIVERIES_SQL})
       AND p.url = d.url AND p.entity_type = d.entity_type AND p.entity_id = d.entity_id
       AND p.sequence < d.sequence AND p.state IN (${OWED_DELIVERIES_SQL})
     ORDER BY p.sequence LIMIT 1) w ON true`;

/** What a bulk redelivery starts over. */
export interface RedeliverFilter {
  state: 'failed' | 'dead';
  type?: string;
  objectType?: string;
  since?: string;
}

export class NoWebhookAddress extends DomainError {
  constructor() {
    super(
      'no-webhook-address',
      409,
      'No webhook address',
      'SHOP_WEBHOOK_URL is not set: events are only in the feed',
    );
  }
}

/** A cursor before the feed's horizon: those events are pruned (RETENTION_EVENTS_DAYS). */
export class FeedCursorExpired extends DomainError {
  constructor(oldestCursor: string) {
    super(
      'cursor-expired',
      410,
      'Cursor older than the feed retention',
      'Events older than RETENTION_EVENTS_DAYS are no longer in the feed: continue from oldestCursor',
      { oldestCursor },
    );
  }
}

/** An event older than the feed's horizon: its audit entry stays, its payload is pruned. */
export class EventPruned extends DomainError {
  constructor(id: string) {
    super(
      'event-pruned',
      410,
      'Event pruned',
      `Event ${id} is older than RETENTION_EVENTS_DAYS: its payload is no longer kept (the audit entry is, under /admin/events)`,
    );
  }
}

const FEED_CURSOR = /^p(\d{1,18})$/;

function encodeFeedCursor(position: string): string {
  return Buffer.from(`p${position}`).toString('base64url');
}

function decodeFeedCursor(cursor: string): string {
  const match = FEED_CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || encodeFeedCursor(match[1]) !== cursor)
    throw new ValidationFailed([
      { field: 'after', message: 'is not a cursor returned by this API' },
    ]);
  return match[1];
}

/** The shop-event views of the log: the gap-free feed, one event, and the push deliveries. */
@Injectable()
export class EventsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly relay: EventRelay,
    private readonly audit: AuditService,
  ) {}

  /** Deliveries still owed to an address SHOP_WEBHOOK_URL no longer names: dropped (./unconfigured-deliveries.ts). */
  dropUnconfigured(by: By): Promise<DroppedDeliveries> {
    return dropUnconfiguredDeliveries(this.dataSource, this.audit, this.config.shopEvents.urls, by);
  }

  /**
   * Events after the cursor in position order. The relay catches up first (waiting for a run in
   * flight, then running itself), so a reader sees every event committed before its read began,
   * whatever other reads are doing.
   */
  async feed(
    q: EventFeedQuery,
    visible: readonly EventObjectType[] = EVENT_OBJECT_TYPES,
  ): Promise<Page<ShopEvent>> {
    for (const asked of [
      q.objectType,
      q.type === undefined ? undefined : objectTypeOfEventType(q.type),
    ])
      if (asked !== undefined && !(visible as readonly string[]).includes(asked))
        throw new Forbidden(`This key's scopes do not cover ${asked} events`);
    const asked = q.after === undefined ? null : decodeFeedCursor(q.after);
    await this.relay.catchUp();
    // No cursor starts at the oldest event still served; a cursor before it is 410.
    const horizon = await this.horizon();
    if (asked !== null && BigInt(asked) < BigInt(horizon))
      throw new FeedCursorExpired(encodeFeedCursor(horizon));
    const after = asked ?? horizon;
    const qb = this.dataSource
      .getRepository(AuditEventEntity)
      .createQueryBuilder('e')
      .where('e.position > :after', { after })
      .andWhere('e.type IS NOT NULL')
      // Same snapshot as the rows: a horizon that moved past the cursor meanwhile serves none.
      .andWhere('CAST(:after AS bigint) >= (SELECT h.position FROM feed_horizon h WHERE h.id = 1)');
    // The scope filter is part of every query: no cursor, filter or id reaches another type.
    if (visible.length < EVENT_OBJECT_TYPES.length)
      qb.andWhere('e.entity_type IN (:...visible)', {
        visible: visible.length > 0 ? visible : [''],
      });
    if (q.type !== undefined) qb.andWhere('e.type = :type', { type: q.type });
    if (q.objectType !== undefined)
      qb.andWhere('e.entity_type = :objectType', { objectType: q.objectType });
    if (q.objectId !== undefined) qb.andWhere('e.entity_id = :objectId', { objectId: q.objectId });
    const rows = await qb
      .orderBy('e.position', 'ASC')
      .limit(q.limit ?? DEFAULT_PAGE_SIZE)
      .getMany();
    if (rows.length === 0) {
      const moved = await this.horizon();
      if (BigInt(after) < BigInt(moved)) throw new FeedCursorExpired(encodeFeedCursor(moved));
    }
    const last = rows[rows.length - 1];
    return {
      items: rows.map(toShopEvent),
      nextCursor: encodeFeedCursor(last ? last.position! : after),
    };
  }

  /** One event; one of a type outside `visible` is not found (no oracle of its existence). */
  async get(
    id: string,
    visible: readonly EventObjectType[] = EVENT_OBJECT_TYPES,
  ): Promise<ShopEvent> {
    return toShopEvent(await this.eventRow(id, visible));
  }

  /**
   * An event by its public id (`evt_…`, what the feed and webhooks give) or, for entries written
   * before public ids, the internal number the audit view shows.
   */
  private async eventRow(
    id: string,
    visible: readonly EventObjectType[] = EVENT_OBJECT_TYPES,
  ): Promise<AuditEventEntity> {
    const repo = this.dataSource.getRepository(AuditEventEntity);
    const row = EVENT_ID_PATTERN.test(id)
      ? await repo.findOneBy({ publicId: id })
      : /^\d{1,18}$/.test(id)
        ? await repo.findOneBy({ id })
        : null;
    if (!row || row.type === null || !(visible as readonly string[]).includes(row.entityType))
      throw new NotFound('Event', id);
    if (row.data === null) throw new EventPruned(id);
    return row;
  }

  /** The feed's horizon: events at or below this position are pruned. */
  private async horizon(): Promise<string> {
    const [row] = (await this.dataSource.query(
      `SELECT position::text AS position FROM feed_horizon WHERE id = 1`,
    )) as Array<{ position: string }>;
    return row?.position ?? '0';
  }

  async deliveries(q: ListDeliveriesQuery): Promise<Page<DeliveryView>> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    let before: string | null = null;
    if (q.cursor !== undefined) {
      const raw = Buffer.from(q.cursor, 'base64url').toString('utf8');
      if (!/^d\d{1,18}$/.test(raw) || Buffer.from(raw).toString('base64url') !== q.cursor)
        throw new ValidationFailed([
          { field: 'cursor', message: 'is not a cursor returned by this API' },
        ]);
      before = raw.slice(1);
    }
    const rows = (await this.dataSource.query(
      `SELECT d.*, e.type, e.public_id, w.* FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       ${WAITING_FOR_SQL}
        WHERE ($1::varchar IS NULL OR d.state = $1) AND ($2::bigint IS NULL OR d.id < $2)
        ORDER BY d.id DESC LIMIT $3`,
      [q.state ?? null, before, limit + 1],
    )) as DeliveryRow[];
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(deliveryView),
      nextCursor:
        rows.length > limit && last ? Buffer.from(`d${last.id}`).toString('base64url') : null,
    };
  }

  /**
   * Sends an event again to every configured address: its deliveries start over (pending, due
   * now, a fresh retry window); later events of the same object wait for it again.
   */
  async redeliver(publicOrRowId: string): Promise<DeliveryView[]> {
    const id = (await this.eventRow(publicOrRowId)).id;
    const urls = this.config.shopEvents.urls;
    if (urls.length === 0) throw new NoWebhookAddress();
    await this.dataSource.query(
      `INSERT INTO webhook_deliveries (event_id, url, entity_type, entity_id, sequence)
       SELECT e.id, u.url, e.entity_type, e.entity_id, e.sequence
         FROM events e CROSS JOIN unnest($2::text[]) u(url) WHERE e.id = $1
       ON CONFLICT (event_id, url) DO UPDATE SET state = 'pending', next_attempt_at = clock_now(), created_at = clock_now(),
         lease_until = NULL, lease_owner = NULL, last_error = NULL, delivered_at = NULL, updated_at = clock_now()`,
      [id, urls],
    );
    const rows = (await this.dataSource.query(
      `SELECT d.*, e.type, e.public_id, w.* FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       ${WAITING_FOR_SQL}
        WHERE d.event_id = $1 AND d.url = ANY($2::text[]) ORDER BY d.id`,
      [id, urls],
    )) as DeliveryRow[];
    return rows.map(deliveryView);
  }

  /**
   * Bulk redelivery: every failed (or dead) delivery to a configured address that matches the
   * filter starts over (pending, due now, a fresh retry window), in one statement; per object the
   * dispatcher still sends them in order. A delivery being sent right now (a live lease) is left
   * to finish. Returns how many were queued again.
   */
  async redeliverMany(f: RedeliverFilter): Promise<number> {
    const urls = this.config.shopEvents.urls;
    if (urls.length === 0) throw new NoWebhookAddress();
    const [, count] = (await this.dataSource.query(
      `UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = clock_now(), created_at = clock_now(),
              lease_until = NULL, lease_owner = NULL, last_error = NULL, delivered_at = NULL, updated_at = clock_now()
         FROM events e
        WHERE e.id = d.event_id AND d.state = $1 AND d.url = ANY($2::text[])
          AND (d.lease_until IS NULL OR d.lease_until < clock_now())
          AND ($3::varchar IS NULL OR e.type = $3)
          AND ($4::varchar IS NULL OR d.entity_type = $4)
          AND ($5::timestamptz IS NULL OR e.created_at >= $5)`,
      [f.state, urls, f.type ?? null, f.objectType ?? null, instantOf(f.since, 'time') ?? null],
    )) as [unknown, number];
    return count;
  }
}

function deliveryView(r: DeliveryRow): DeliveryView {
  const open = r.state === 'pending' || r.state === 'failed';
  return {
    id: r.id,
    eventId: r.public_id ?? r.event_id,
    eventType: r.type,
    objectType: r.entity_type,
    objectId: r.entity_id,
    sequence: r.sequence,
    url: shownAddress(r.url),
    state: r.state,
    attempts: r.attempts,
    nextAttemptAt: open ? r.next_attempt_at.toISOString() : null,
    lastStatus: r.last_status,
    lastError: r.last_error === null ? null : withoutAddressSecrets(r.last_error),
    createdAt: r.created_at.toISOString(),
    deliveredAt: r.delivered_at?.toISOString() ?? null,
    waitingFor:
      r.waiting_event !== null && r.waiting_event !== undefined && r.waiting_sequence !== null
        ? { eventId: r.waiting_event, sequence: Number(r.waiting_sequence) }
        : null,
  };
}
