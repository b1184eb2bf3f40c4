import { OWED_DELIVERIES_SQL } from '../events/delivery-states';
import { eventTitle, type TimelineObject } from './timeline-words';
import { utc } from './console-format';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { InvoiceEntity } from '../invoices/invoice.entity';
import { INVOICE_STATUSES } from '../invoices/invoice.state';
import { PAYOUT_STATUSES } from '../payouts/payout.state';
import { REFUND_STATUSES } from '../refunds/refund.state';
import { toInvoiceView } from '../invoices/invoice.view';
import { PayoutEntity } from '../payouts/payout.entity';
import { toPayoutView } from '../payouts/dto/payout.view';
import { RefundEntity } from '../refunds/refund.entity';
import { toRefundView } from '../refunds/dto/refund.view';
import { afterCursorSql, encodeCursor } from '../common/pagination';
import { shownAddress, withoutAddressSecrets } from '../common/redact';
import { fillHours, type HourBucket } from './console-format';
import { WAITING_FOR_SQL } from '../events/events.service';
import { clock } from '../common/clock';

export type ObjectType = 'invoice' | 'refund' | 'payout';

/** Each object kind: its table, the shop's id column, the gateway's id column, its amount/currency. */
export const KINDS: Record<
  ObjectType,
  { table: string; shopId: string; gatewayId: string; currency: string }
> = {
  invoice: {
    table: 'invoices',
    shopId: 'shop_order_id',
    gatewayId: 'invoice_id',
    currency: 'currency',
  },
  refund: {
    table: 'refunds',
    shopId: 'shop_refund_id',
    gatewayId: 'gateway_invoice_id',
    currency: 'currency',
  },
  payout: {
    table: 'payouts',
    shopId: 'shop_payment_id',
    gatewayId: 'withdraw_id',
    currency: 'shop_currency',
  },
};

export const OBJECT_TYPES = Object.keys(KINDS) as ObjectType[];

export function isObjectType(v: unknown): v is ObjectType {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(KINDS, v);
}

/** Text matched literally by LIKE: its wildcards and the escape character escaped. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export interface SearchFilter {
  /**
   * The shop's id by its beginning (a refund also by its order's), the gateway's id exactly, a
   * metadata value exactly, or text in the description.
   */
  q?: string;
  status?: string;
  payway?: string;
  /** Inclusive UTC day bounds. */
  from?: Date;
  to?: Date;
}

/**
 * The WHERE conditions of a search on alias `t` (every value through `bind`): the list page and
 * its CSV export filter with this one function, so the file holds exactly what the page shows.
 */
export function searchConditions(
  type: ObjectType,
  f: SearchFilter,
  bind: (v: unknown) => string,
): string[] {
  const k = KINDS[type];
  const where: string[] = [];
  if (f.q) {
    const byGateway = /^\d{1,18}$/.test(f.q) ? ` OR t.${k.gatewayId} = ${bind(f.q)}::bigint` : '';
    // The shop's id (or a refund's order) by its beginning, a metadata value exactly, and words
    // of the description (invoices and payouts have one).
    const prefix = bind(`${likeEscaped(f.q)}%`);
    const byOrder = type === 'refund' ? ` OR t.shop_order_id LIKE ${prefix}` : '';
    const byMetadata = ` OR EXISTS (SELECT 1 FROM jsonb_each_text(t.metadata) m WHERE m.value = ${bind(f.q)})`;
    const byDescription =
      type === 'refund' ? '' : ` OR t.description ILIKE ${bind(`%${likeEscaped(f.q)}%`)}`;
    where.push(`(t.${k.shopId} LIKE ${prefix}${byGateway}${byOrder}${byMetadata}${byDescription})`);
  }
  if (f.status) where.push(`t.status = ${bind(f.status)}`);
  if (f.payway && type !== 'refund') where.push(`t.payway = ${bind(f.payway)}`);
  if (f.from) where.push(`t.created_at >= ${bind(f.from)}`);
  if (f.to) where.push(`t.created_at < ${bind(new Date(f.to.getTime() + 86_400_000))}`);
  return where;
}

export interface ListRow {
  shopId: string;
  /** The gateway's id of the object (for a refund: of its invoice; refunds have none of their own). */
  gatewayId: string | null;
  /** A refund's order; null for other kinds. */
  shopOrderId: string | null;
  status: string;
  amount: string;
  currency: number;
  payway: string | null;
  needsAttention: boolean;
  createdAt: Date;
}

export interface TimelineEntry {
  at: Date;
  kind: 'event' | 'notification';
  title: string;
  detail: string;
  link?: string;
}

export interface InvoiceRefundRow {
  shopRefundId: string;
  status: string;
  amount: string;
  currency: number;
  needsAttention: boolean;
  createdAt: Date;
}

export interface ObjectDeliveryRow {
  id: string;
  eventId: string;
  eventType: string;
  sequence: number;
  url: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  /** The earlier event of the object this open delivery waits for (to the same address). */
  waitingFor: { eventId: string; sequence: number } | null;
}

const LIST_LIMIT = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Read-only queries behind the console's pages; every value goes in as a bound parameter. */
@Injectable()
export class ConsoleService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** The data source the list exports read through (console-lists.ts). */
  get db(): DataSource {
    return this.dataSource;
  }

  /** Flag of an object: the attention column, and for payouts also the needs_attention status. */
  private static attentionSql(type: ObjectType, alias: string): string {
    const flag = `${alias}.needs_attention`;
    return type === 'payout' ? `(${flag} OR ${alias}.status = 'needs_attention')` : flag;
  }

  /**
   * One page of matches, newest first, and the cursor of the next (older) page: keyset paging on
   * (created_at, id) at full precision, so paging never skips or repeats a row.
   */
  async search(
    type: ObjectType,
    f: SearchFilter,
    after: string | null = null,
  ): Promise<{ rows: ListRow[]; next: string | null }> {
    const k = KINDS[type];
    const params: unknown[] = [];
    const bind = (v: unknown): string => {
      params.push(v);
      return `$${params.length}`;
    };
    const where = searchConditions(type, f, bind);
    if (after !== null)
      where.push(afterCursorSql('t', k.table, 'created_at', `${bind(after)}::uuid`));
    const payway = type === 'refund' ? 'NULL' : 't.payway';
    const order = type === 'refund' ? 't.shop_order_id' : 'NULL';
    const rows = (await this.dataSource.query(
      `SELECT t.id, t.${k.shopId} AS shop_id, t.${k.gatewayId}::text AS gateway_id, ${order} AS shop_order_id, t.status, t.amount::text AS amount,
              t.${k.currency} AS currency, ${payway} AS payway, ${ConsoleService.attentionSql(type, 't')} AS attention, t.created_at
         FROM ${k.table} t
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY t.created_at DESC, t.id DESC
        LIMIT ${LIST_LIMIT + 1}`,
      params,
    )) as Array<Record<string, unknown>>;
    const page = rows.slice(0, LIST_LIMIT);
    const next = rows.length > LIST_LIMIT ? encodeCursor(String(page[page.length - 1].id)) : null;
    return { rows: page.map((r) => this.listRow(r)), next };
  }

  private listRow(r: Record<string, unknown>): ListRow {
    return {
      shopId: String(r.shop_id),
      gatewayId: (r.gateway_id as string | null) ?? null,
      shopOrderId: (r.shop_order_id as string | null) ?? null,
      status: String(r.status),
      amount: String(r.amount),
      currency: Number(r.currency),
      payway: (r.payway as string | null) ?? null,
      needsAttention: r.attention === true,
      createdAt: r.created_at as Date,
    };
  }

  /**
   * The status filter's choices: every status of the type, from its state module. (Reading the
   * distinct statuses of the table scanned all of it on every page: seconds with millions of
   * rows.)
   */
  statuses(type: ObjectType): Promise<string[]> {
    const all: readonly string[] =
      type === 'invoice' ? INVOICE_STATUSES : type === 'refund' ? REFUND_STATUSES : PAYOUT_STATUSES;
    return Promise.resolve([...all].sort());
  }

  /** The object as the API shows it (secrets masked: never the raw token), or null. */
  async detail(type: ObjectType, shopId: string): Promise<Record<string, unknown> | null> {
    switch (type) {
      case 'invoice': {
        const inv = await this.dataSource
          .getRepository(InvoiceEntity)
          .findOneBy({ shopOrderId: shopId });
        return inv
          ? {
              ...toInvoiceView(inv, this.config.publicBaseUrl, { admin: false }),
              ...attention(inv),
            }
          : null;
      }
      case 'refund': {
        const r = await this.dataSource
          .getRepository(RefundEntity)
          .findOneBy({ shopRefundId: shopId });
        return r ? { ...toRefundView(r), ...attention(r) } : null;
      }
      case 'payout': {
        const p = await this.dataSource
          .getRepository(PayoutEntity)
          .findOneBy({ shopPaymentId: shopId });
        return p ? { ...toPayoutView(p), ...attention(p) } : null;
      }
    }
  }

  /** The object's audit events and the gateway notifications about it, oldest first. */
  async timeline(type: ObjectType, shopId: string): Promise<TimelineEntry[]> {
    const events = (await this.dataSource.query(
      `SELECT id, from_status, to_status, cause, details, created_at FROM events
        WHERE entity_type = $1 AND entity_id = $2 ORDER BY created_at, id`,
      [type, shopId],
    )) as Array<{
      id: string;
      from_status: string | null;
      to_status: string;
      cause: string;
      details: unknown;
      created_at: Date;
    }>;
    const column =
      type === 'invoice' ? 'shop_order_id' : type === 'refund' ? 'shop_refund_id' : null;
    const notifications = column
      ? ((await this.dataSource.query(
          `SELECT id, type, verified, status, outcome, received_at, delivery_count FROM notifications
            WHERE ${column} = $1 ${type === 'invoice' ? 'AND shop_refund_id IS NULL' : ''} ORDER BY received_at`,
          [shopId],
        )) as Array<{
          id: string;
          type: string;
          verified: boolean;
          status: string;
          outcome: string | null;
          received_at: Date;
          delivery_count: number;
        }>)
      : [];
    const object = await this.timelineObject(type, shopId);
    const entries: TimelineEntry[] = [
      ...events.map((e) => ({
        at: e.created_at,
        kind: 'event' as const,
        title: eventTitle(object, e.from_status, e.to_status, e.cause),
        detail: e.details ? JSON.stringify(e.details, null, 2) : '',
      })),
      ...notifications.map((n) => ({
        at: n.received_at,
        kind: 'notification' as const,
        title: `${n.type} notification: ${n.status}${n.verified ? '' : ' (unverified)'}`,
        detail: `${n.outcome ?? ''}${n.delivery_count > 1 ? ` — delivered ${n.delivery_count} times` : ''}`,
        link: n.id,
      })),
    ];
    return entries.sort((a, b) => a.at.getTime() - b.at.getTime());
  }

  /** What a timeline line names of its object: its id, amount and currency. */
  private async timelineObject(type: ObjectType, shopId: string): Promise<TimelineObject> {
    const sql: Record<ObjectType, string> = {
      invoice: `SELECT amount::text AS amount, currency FROM invoices WHERE shop_order_id = $1 LIMIT 1`,
      refund: `SELECT amount::text AS amount, currency FROM refunds WHERE shop_refund_id = $1 LIMIT 1`,
      payout: `SELECT amount::text AS amount, shop_currency AS currency FROM payouts WHERE shop_payment_id = $1 LIMIT 1`,
    };
    const [row] = (await this.dataSource.query(sql[type], [shopId])) as Array<{ amount: string; currency: number }>;
    return { type, id: shopId, amount: row?.amount ?? null, currency: row?.currency ?? null };
  }

  /** An invoice's refunds (invoices and their refunds are the payment shop's), oldest first. */
  async refundsOf(shopOrderId: string): Promise<InvoiceRefundRow[]> {
    const rows = (await this.dataSource.query(
      `SELECT shop_refund_id, status, amount::text AS amount, currency, needs_attention, created_at
         FROM refunds WHERE shop_id = $1 AND shop_order_id = $2 ORDER BY created_at, id LIMIT ${LIST_LIMIT}`,
      [this.config.gateway.shops.payment.shopId, shopOrderId],
    )) as Array<{
      shop_refund_id: string;
      status: string;
      amount: string;
      currency: number;
      needs_attention: boolean;
      created_at: Date;
    }>;
    return rows.map((r) => ({
      shopRefundId: r.shop_refund_id,
      status: r.status,
      amount: r.amount,
      currency: r.currency,
      needsAttention: r.needs_attention,
      createdAt: r.created_at,
    }));
  }

  /** The webhook deliveries of an object's events, newest first. */
  async deliveriesOf(type: ObjectType, shopId: string): Promise<ObjectDeliveryRow[]> {
    const rows = (await this.dataSource.query(
      `SELECT d.id, e.public_id AS event_id, e.type, d.sequence, d.url, d.state, d.attempts, d.last_status, d.last_error,
              d.next_attempt_at, d.created_at, w.waiting_event, w.waiting_sequence
         FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
        ${WAITING_FOR_SQL}
        WHERE e.entity_type = $1 AND e.entity_id = $2
        ORDER BY d.id DESC LIMIT ${LIST_LIMIT}`,
      [type, shopId],
    )) as Array<{
      id: string;
      event_id: string;
      type: string;
      sequence: number;
      url: string;
      state: string;
      attempts: number;
      last_status: number | null;
      last_error: string | null;
      next_attempt_at: Date | null;
      created_at: Date;
      waiting_event: string | null;
      waiting_sequence: number | null;
    }>;
    return rows.map((r) => ({
      id: String(r.id),
      eventId: String(r.event_id),
      eventType: r.type,
      sequence: r.sequence,
      url: shownAddress(r.url),
      state: r.state,
      attempts: r.attempts,
      lastStatus: r.last_status,
      lastError: r.last_error === null ? null : withoutAddressSecrets(r.last_error),
      nextAttemptAt: r.state === 'pending' || r.state === 'failed' ? r.next_attempt_at : null,
      createdAt: r.created_at,
      waitingFor:
        r.waiting_event !== null && r.waiting_sequence !== null
          ? { eventId: r.waiting_event, sequence: Number(r.waiting_sequence) }
          : null,
    }));
  }

  /** Counts for the overview: statuses over the last 24 h per kind, open attention items. */
  async overview(now = clock.date()): Promise<{
    byStatus: Record<ObjectType, Array<{ status: string; count: number }>>;
    attention: Record<ObjectType, number>;
    hourly: HourBucket[];
    deliveries: { pending: number; dead: number };
    awaitingApproval: number;
  }> {
    const since = new Date(now.getTime() - 24 * 3_600_000);
    const byStatus = {} as Record<ObjectType, Array<{ status: string; count: number }>>;
    const attention = {} as Record<ObjectType, number>;
    for (const type of OBJECT_TYPES) {
      const k = KINDS[type];
      const rows = (await this.dataSource.query(
        `SELECT status, count(*)::int AS count FROM ${k.table} WHERE created_at >= $1 GROUP BY status ORDER BY status`,
        [since],
      )) as Array<{ status: string; count: number }>;
      byStatus[type] = rows;
      const [a] = (await this.dataSource.query(
        `SELECT count(*)::int AS count FROM ${k.table} t WHERE ${ConsoleService.attentionSql(type, 't')}`,
      )) as Array<{ count: number }>;
      attention[type] = a.count;
    }
    const hours = (await this.dataSource.query(
      `SELECT date_trunc('hour', created_at) AS hour, count(*)::int AS total,
              count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded
         FROM invoices WHERE created_at >= $1 GROUP BY 1`,
      [new Date(now.getTime() - 23 * 3_600_000 - (now.getTime() % 3_600_000))],
    )) as Array<{ hour: Date; total: number; succeeded: number }>;
    const [deliveries] = (await this.dataSource.query(
      `SELECT count(*) FILTER (WHERE state IN (${OWED_DELIVERIES_SQL}))::int AS pending,
              count(*) FILTER (WHERE state = 'dead')::int AS dead FROM webhook_deliveries`,
    )) as Array<{ pending: number; dead: number }>;
    const [approvals] = (await this.dataSource.query(
      `SELECT count(*)::int AS count FROM payouts WHERE status = 'awaiting_approval'`,
    )) as Array<{ count: number }>;
    return {
      byStatus,
      attention,
      hourly: fillHours(hours, now),
      deliveries,
      awaitingApproval: approvals.count,
    };
  }

  async notifications(filter: {
    status?: string;
    q?: string;
    id?: string;
  }): Promise<Array<Record<string, unknown>>> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.id !== undefined) {
      if (!UUID.test(filter.id)) return [];
      params.push(filter.id);
      where.push(`id = $${params.length}`);
    }
    if (filter.status) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    if (filter.q) {
      params.push(filter.q);
      where.push(`(shop_order_id = $${params.length} OR shop_refund_id = $${params.length})`);
    }
    return (await this.dataSource.query(
      `SELECT id, type, verified, status, outcome, shop_order_id, shop_refund_id, source_ip, delivery_count, received_at
         FROM notifications ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY received_at DESC, id LIMIT ${LIST_LIMIT}`,
      params,
    )) as Array<Record<string, unknown>>;
  }
}

function attention(row: object): {
  needsAttention: boolean;
  attentionReason: string | null;
  watch?: string;
} {
  const r = row as {
    needsAttention?: boolean;
    attentionReason?: string | null;
    status?: string;
    nextCheckAt?: Date | null;
    nextPollAt?: Date | null;
  };
  const needsAttention = r.needsAttention === true || r.status === 'needs_attention';
  const next = r.nextCheckAt ?? r.nextPollAt ?? null;
  return {
    needsAttention,
    attentionReason: r.attentionReason ?? null,
    // A flag never stops the watch: say whether the gateway is still asked.
    ...(needsAttention
      ? {
          watch:
            next !== null
              ? `still watched: next check ${utc(next)}`
              : 'watch ended: waiting for an operator',
        }
      : {}),
  };
}
