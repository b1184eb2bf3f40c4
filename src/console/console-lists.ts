import { DELIVERY_STATES } from '../events/delivery-states';
import type { DataSource } from 'typeorm';
import { moneyText } from '../common/money';
import { afterCursorSql } from '../common/pagination';
import { parseDay } from '../common/date-time';
import { shownAddress, withoutAddressSecrets } from '../common/redact';
import type { AppConfig } from '../config/config';
import { csvCell } from '../reports/daily-report';
import { KINDS, searchConditions, type ObjectType, type SearchFilter } from './console.service';

/**
 * The console's filtered lists as descriptors: the filter names a list page takes, the columns of
 * its CSV export and how to read every matching row in keyset batches. Saved searches and CSV
 * export are one mechanism over these; a new list page opts in by adding its descriptor to
 * CONSOLE_LISTS (and `listTools` to its page data, `include('list-tools', it)` to its view).
 */

/** A list's filters: only names the list declares, each a bounded string. */
export type Filters = Readonly<Record<string, string>>;
export type CsvValue = string | number | boolean | Date | null | undefined;

export interface CsvColumn {
  name: string;
  /** Caller or gateway text: prefixed when a spreadsheet would run it as a formula. */
  text?: boolean;
  /** An amount: written with the minor-unit digits of the currency in this field of the row. */
  money?: string;
}

export interface ListContext {
  db: DataSource;
  config: AppConfig;
}

export interface ConsoleList {
  /** Its name in URLs, saved searches and the file name ("invoices"). */
  name: string;
  /** The page that shows it. */
  path: string;
  /** The query parameters the page filters by; nothing else is saved or exported. */
  filters: readonly string[];
  /** What is wrong with the values (a message naming the field), or null. */
  check?(filters: Filters): string | null;
  columns: readonly CsvColumn[];
  /**
   * Up to `limit` rows after `after` (null: from the start) in the page's order, and where the
   * next batch starts (null: none). The cursor never leaves the server.
   */
  batch(
    ctx: ListContext,
    filters: Filters,
    after: unknown,
    limit: number,
  ): Promise<{ rows: Array<Record<string, CsvValue>>; next: unknown }>;
}

/** A filter value's longest length (the list pages' own inputs are shorter). */
export const FILTER_MAX = 255;
function utcDay(text: string | undefined): Date | undefined | 'bad' {
  if (text === undefined || text === '') return undefined;
  return parseDay(text) ?? 'bad';
}

function objectFilter(f: Filters): SearchFilter {
  const from = utcDay(f.from);
  const to = utcDay(f.to);
  return {
    q: f.q?.trim() || undefined,
    status: f.status || undefined,
    payway: f.payway || undefined,
    from: from === 'bad' ? undefined : from,
    to: to === 'bad' ? undefined : to,
  };
}

function checkDays(f: Filters): string | null {
  for (const name of ['from', 'to'])
    if (utcDay(f[name]) === 'bad') return `${name}: a day in the form YYYY-MM-DD`;
  return null;
}

/** Rows read `limit + 1` at a time: the extra one only says that another batch exists. */
function split<R>(rows: R[], limit: number): { rows: R[]; more: boolean } {
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}

/** Invoices, refunds, payouts: the page's own conditions, newest first by (created_at, id). */
function objectList(
  type: ObjectType,
  columns: readonly CsvColumn[],
  select: string,
  filters: readonly string[],
): ConsoleList {
  const k = KINDS[type];
  return {
    name: `${type}s`,
    path: `/admin/ui/${type}s`,
    filters,
    check: checkDays,
    columns,
    async batch(ctx, f, after, limit) {
      const params: unknown[] = [];
      const bind = (v: unknown): string => {
        params.push(v);
        return `$${params.length}`;
      };
      const where = searchConditions(type, objectFilter(f), bind);
      if (after !== null)
        where.push(afterCursorSql('t', k.table, 'created_at', `${bind(after)}::uuid`));
      const got = split(
        (await ctx.db.query(
          `SELECT t.id, ${select} FROM ${k.table} t
            ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit + 1}`,
          params,
        )) as Array<Record<string, CsvValue>>,
        limit,
      );
      return { rows: got.rows, next: got.more ? got.rows[got.rows.length - 1].id : null };
    },
  };
}

const ATTENTION_COLUMNS = 't.needs_attention, t.attention_reason';

const INVOICES = objectList(
  'invoice',
  [
    { name: 'created_at' },
    { name: 'shop_order_id', text: true },
    { name: 'invoice_id' },
    { name: 'status', text: true },
    { name: 'amount', money: 'currency' },
    { name: 'currency' },
    { name: 'refunded_amount', money: 'currency' },
    { name: 'payway', text: true },
    { name: 'description', text: true },
    { name: 'needs_attention' },
    { name: 'attention_reason', text: true },
  ],
  `t.created_at, t.shop_order_id, t.invoice_id::text, t.status, t.amount::text, t.currency,
   t.refunded_amount::text, t.payway, t.description, ${ATTENTION_COLUMNS}`,
  ['q', 'status', 'payway', 'from', 'to'],
);

const REFUNDS = objectList(
  'refund',
  [
    { name: 'created_at' },
    { name: 'shop_refund_id', text: true },
    { name: 'shop_order_id', text: true },
    { name: 'gateway_invoice_id' },
    { name: 'status', text: true },
    { name: 'amount', money: 'currency' },
    { name: 'currency' },
    { name: 'needs_attention' },
    { name: 'attention_reason', text: true },
  ],
  `t.created_at, t.shop_refund_id, t.shop_order_id, t.gateway_invoice_id::text, t.status,
   t.amount::text, t.currency, ${ATTENTION_COLUMNS}`,
  ['q', 'status', 'from', 'to'],
);

/** The recipient's account only in its masked form: never account_sealed. */
const PAYOUTS = objectList(
  'payout',
  [
    { name: 'created_at' },
    { name: 'shop_payment_id', text: true },
    { name: 'withdraw_id' },
    { name: 'status', text: true },
    { name: 'amount', money: 'amount_currency' },
    { name: 'amount_type', text: true },
    { name: 'shop_currency' },
    { name: 'shop_write_off', money: 'shop_currency' },
    { name: 'payway', text: true },
    { name: 'account_masked', text: true },
    { name: 'description', text: true },
    { name: 'needs_attention' },
    { name: 'attention_reason', text: true },
  ],
  `t.created_at, t.shop_payment_id, t.withdraw_id::text, t.status, t.amount::text, t.amount_type,
   t.shop_currency, t.shop_write_off::text, t.payway, t.account_masked, t.description,
   (t.needs_attention OR t.status = 'needs_attention') AS needs_attention, t.attention_reason,
   CASE WHEN t.amount_type = 'ps_amount' THEN COALESCE(t.ps_currency, t.shop_currency)
        ELSE t.shop_currency END AS amount_currency`,
  ['q', 'status', 'payway', 'from', 'to'],
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The inbox's conditions (notifications page): never the payload, only what the page shows. */
const NOTIFICATIONS: ConsoleList = {
  name: 'notifications',
  path: '/admin/ui/notifications',
  filters: ['q', 'status', 'id'],
  columns: [
    { name: 'received_at' },
    { name: 'id' },
    { name: 'type', text: true },
    { name: 'verified' },
    { name: 'status', text: true },
    { name: 'outcome', text: true },
    { name: 'shop_order_id', text: true },
    { name: 'shop_refund_id', text: true },
    { name: 'source_ip', text: true },
    { name: 'delivery_count' },
  ],
  async batch(ctx, f, after, limit) {
    const where: string[] = [];
    const params: unknown[] = [];
    const bind = (v: unknown): string => {
      params.push(v);
      return `$${params.length}`;
    };
    if (f.id) {
      if (!UUID.test(f.id)) return { rows: [], next: null };
      where.push(`n.id = ${bind(f.id)}`);
    }
    if (f.status) where.push(`n.status = ${bind(f.status)}`);
    if (f.q) {
      const q = bind(f.q);
      where.push(`(n.shop_order_id = ${q} OR n.shop_refund_id = ${q})`);
    }
    if (after !== null)
      where.push(afterCursorSql('n', 'notifications', 'received_at', `${bind(after)}::uuid`));
    const got = split(
      (await ctx.db.query(
        `SELECT n.received_at, n.id, n.type, n.verified, n.status, n.outcome, n.shop_order_id,
                n.shop_refund_id, n.source_ip, n.delivery_count
           FROM notifications n ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
          ORDER BY n.received_at DESC, n.id DESC LIMIT ${limit + 1}`,
        params,
      )) as Array<Record<string, CsvValue>>,
      limit,
    );
    return { rows: got.rows, next: got.more ? got.rows[got.rows.length - 1].id : null };
  },
};

export 
const DELIVERIES: ConsoleList = {
  name: 'deliveries',
  path: '/admin/ui/deliveries',
  filters: ['state'],
  check: (f) =>
    f.state && !(DELIVERY_STATES as readonly string[]).includes(f.state)
      ? `state: one of ${DELIVERY_STATES.join(', ')}`
      : null,
  columns: [
    { name: 'created_at' },
    { name: 'id' },
    { name: 'event_id' },
    { name: 'event_type', text: true },
    { name: 'object_type', text: true },
    { name: 'object_id', text: true },
    { name: 'sequence' },
    { name: 'url', text: true },
    { name: 'state', text: true },
    { name: 'attempts' },
    { name: 'last_status' },
    { name: 'last_error', text: true },
  ],
  async batch(ctx, f, after, limit) {
    const got = split(
      (await ctx.db.query(
        `SELECT d.created_at, d.id::text AS id, d.event_id::text AS event_id, e.type AS event_type,
                d.entity_type AS object_type, d.entity_id AS object_id, d.sequence, d.url, d.state,
                d.attempts, d.last_status, d.last_error
           FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE ($1::varchar IS NULL OR d.state = $1) AND ($2::bigint IS NULL OR d.id < $2)
          ORDER BY d.id DESC LIMIT ${limit + 1}`,
        [f.state || null, after],
      )) as Array<Record<string, CsvValue>>,
      limit,
    );
    // Addresses as everywhere: no user information, no query (an older row's error may hold them).
    for (const r of got.rows) {
      r.url = shownAddress(String(r.url));
      if (typeof r.last_error === 'string') r.last_error = withoutAddressSecrets(r.last_error);
    }
    return { rows: got.rows, next: got.more ? got.rows[got.rows.length - 1].id : null };
  },
};

/** The attention queue, oldest first as on its page; the cursor is the last row's sort key. */
const ATTENTION: ConsoleList = {
  name: 'attention',
  path: '/admin/ui/attention',
  filters: [],
  columns: [
    { name: 'since' },
    { name: 'object_type', text: true },
    { name: 'id', text: true },
    { name: 'status', text: true },
    { name: 'amount', money: 'currency' },
    { name: 'currency' },
    { name: 'reason', text: true },
    { name: 'next_check_at' },
  ],
  async batch(ctx, _f, after, limit) {
    const c = after as { at: string; type: string; id: string } | null;
    const shops = ctx.config.gateway.shops;
    const raw = (await ctx.db.query(
      `SELECT since, since::text AS sort_key, object_type, id, status, amount, currency, reason, next_check_at FROM (
         SELECT COALESCE(attention_at, created_at) AS since, 'invoice' AS object_type, shop_order_id AS id,
                status, amount::text AS amount, currency, attention_reason AS reason, next_check_at
           FROM invoices WHERE needs_attention AND shop_id = $1
         UNION ALL
         SELECT COALESCE(attention_at, created_at), 'refund', shop_refund_id, status, amount::text,
                currency, attention_reason, next_check_at
           FROM refunds WHERE needs_attention AND shop_id = $1
         UNION ALL
         SELECT COALESCE(attention_at, created_at), 'payout', shop_payment_id, status, amount::text,
                shop_currency, attention_reason, next_poll_at
           FROM payouts WHERE needs_attention AND shop_id = $2
       ) a
       WHERE $3::timestamptz IS NULL OR (since, object_type, id) > ($3::timestamptz, $4, $5)
       ORDER BY since, object_type, id LIMIT ${limit + 1}`,
      [shops.payment.shopId, shops.payout.shopId, c?.at ?? null, c?.type ?? '', c?.id ?? ''],
    )) as Array<Record<string, CsvValue>>;
    const got = split(raw, limit);
    const last = got.rows[got.rows.length - 1];
    return {
      rows: got.rows,
      next: got.more ? { at: last.sort_key, type: last.object_type, id: last.id } : null,
    };
  },
};

/** Every list with saved searches and a CSV export. A new list page adds its descriptor here. */
export const CONSOLE_LISTS: readonly ConsoleList[] = [
  INVOICES,
  REFUNDS,
  PAYOUTS,
  NOTIFICATIONS,
  DELIVERIES,
  ATTENTION,
];

export function consoleList(name: string): ConsoleList | undefined {
  return CONSOLE_LISTS.find((l) => l.name === name);
}

/**
 * The filters of a request (a query string or a form), checked against the list: an unknown
 * name, a repeated or non-text value, or one too long is refused with a message naming the
 * field. `ignore`: names that are not filters (the form's `_csrf`, `name`; a page's `after`).
 * Empty values are dropped (an empty filter is no filter).
 */
export function listFilters(
  list: ConsoleList,
  given: Record<string, unknown>,
  ignore: readonly string[] = [],
): Filters | { error: string } {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (ignore.includes(name)) continue;
    const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
    if (!list.filters.includes(name))
      return {
        error: `${shown}: not a filter of ${list.name}${list.filters.length ? ` (${list.filters.join(', ')})` : ''}`,
      };
    if (typeof value !== 'string') return { error: `${shown}: one text value` };
    if (value.length > FILTER_MAX) return { error: `${shown}: at most ${FILTER_MAX} characters` };
    if (value !== '') out[name] = value;
  }
  const problem = list.check?.(out);
  return problem ? { error: problem } : out;
}

/** The list page's address with these filters (values encoded, never pasted in). */
export function listHref(list: ConsoleList, filters: Filters, path = list.path): string {
  const q = new URLSearchParams();
  for (const name of list.filters) if (filters[name] !== undefined) q.set(name, filters[name]);
  const text = q.toString();
  return `${path}${text ? `?${text}` : ''}`;
}

/** Most rows one export holds; a final line says when more matched. */
export const EXPORT_CAP = 100_000;
const EXPORT_BATCH = 500;

function cellValue(v: CsvValue): string | number | boolean | null | undefined {
  return v instanceof Date ? v.toISOString() : v;
}

/**
 * Writes the list's matching rows as RFC 4180 CSV (CRLF, a header row), batch by batch: never
 * more than one batch in memory, and `write` resolves when the reader took the chunk. Stops at
 * `cap` rows with a last line saying the file was cut. Returns the rows written.
 */
/** A row's cell: an amount with its currency's minor-unit digits, anything else as cellValue says. */
function cellOf(row: Record<string, CsvValue>, c: CsvColumn): ReturnType<typeof cellValue> {
  const v = row[c.name];
  if (c.money !== undefined && typeof v === 'string') {
    const currency = row[c.money];
    return moneyText(v, typeof currency === 'number' || typeof currency === 'string' ? currency : null);
  }
  return cellValue(v);
}

export async function writeListCsv(
  list: ConsoleList,
  ctx: ListContext,
  filters: Filters,
  write: (chunk: string) => Promise<void>,
  cap = EXPORT_CAP,
  batchSize = EXPORT_BATCH,
): Promise<{ rows: number; cut: boolean }> {
  await write(`${list.columns.map((c) => csvCell(c.name, false)).join(',')}\r\n`);
  let after: unknown = null;
  let n = 0;
  for (;;) {
    const page = await list.batch(ctx, filters, after, Math.min(batchSize, cap - n + 1));
    let chunk = '';
    for (const row of page.rows) {
      if (n === cap) {
        await write(chunk);
        await write(
          `${csvCell(`(cut: more than ${cap} rows match; narrow the filters and export again)`, true)}\r\n`,
        );
        return { rows: n, cut: true };
      }
      chunk += `${list.columns.map((c) => csvCell(cellOf(row, c), c.text === true)).join(',')}\r\n`;
      n += 1;
    }
    if (chunk) await write(chunk);
    if (page.next === null) return { rows: n, cut: false };
    after = page.next;
  }
}

/** "invoices-2026-05-01.csv": the list and the UTC day of the export. */
export function exportFileName(list: ConsoleList, now = new Date()): string {
  return `${list.name}-${now.toISOString().slice(0, 10)}.csv`;
}
