/**
 * The daily books: what one calendar day in REPORT_TIMEZONE moved, per currency, and
 * what it left open. The figures are summed by PostgreSQL in `numeric` (reports.service.ts); this
 * file holds the report's shape, the day check and the CSV writing, all pure.
 */
import { parseDay } from '../common/date-time';

import { moneyText } from '../common/money';

/** Count and exact sum (decimal text) of the objects of one kind that reached success that day. */
export interface Tally {
  count: number;
  amount: string;
}

/** A fee summed over the succeeded objects whose fee is known; `notComputed` counts the others. */
export interface FeeTally extends Tally {
  notComputed: number;
}

export interface CurrencyBooks {
  /** ISO 4217 numeric code. */
  currency: number;
  /** Invoices that became `succeeded` that day (processedAt), in the invoice's currency. */
  payments: Tally;
  /** Refunds that became SUCCESS that day (processedAt), in the refund's currency. */
  refunds: Tally;
  /**
   * Payouts that became `succeeded` that day (finishedAt), by shop currency; `amount` is what was
   * written off the shop's balance (shopWriteOff). `withoutAmount`: succeeded payouts whose
   * write-off the service never learnt (counted, not summed).
   */
  payouts: Tally & { withoutAmount: number };
  /**
   * Disputes that became lost or accepted that day (resolvedAt): chargebacks, the
   * `chargebacks` debits of their `dispute.lost` entries, in the invoice's currency.
   */
  chargebacks: Tally;
  fees: {
    /** Payer price − amount, for invoices whose payer price is known in the invoice's currency. */
    payments: FeeTally;
    /** Write-off − payee receive, for payouts paid in the shop's own currency. */
    payouts: FeeTally;
  };
}

export type ObjectType = 'invoice' | 'refund' | 'payout';

export interface OpenItem {
  objectType: ObjectType;
  /** The shop's id (shopOrderId, shopRefundId, shopPaymentId). */
  id: string;
  amount: string;
  currency: number;
  /** The status at the day's end by the audit trail; null when the trail has no entry before it. */
  status: string | null;
  currentStatus: string;
  createdAt: string;
  /** Whole seconds from creation to the day's end. */
  ageSeconds: number;
}

export interface AttentionItem {
  objectType: ObjectType;
  id: string;
  amount: string;
  currency: number;
  currentStatus: string;
  reason: string | null;
  /** When the flag that stood at the day's end (or was raised that day) was raised. */
  raisedAt: string | null;
  flaggedAtEnd: boolean;
  flaggedNow: boolean;
}

export interface LedgerSum {
  account: string;
  currency: number;
  amount: string;
}

export interface DailyReport {
  date: string;
  timeZone: string;
  /** The day's first instant and the next day's first instant (exclusive). */
  from: string;
  to: string;
  /** False while the day is still running: the figures are the day so far. */
  complete: boolean;
  currencies: CurrencyBooks[];
  /** The ledger's postings of the day, summed per account and currency. */
  ledger: LedgerSum[];
  open: { total: number; items: OpenItem[] };
  attention: { total: number; items: AttentionItem[] };
}

/** Most items listed per section (the totals count them all). */
export const MAX_ITEMS = 5000;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Rule "the report day's bounds": the calendar day `$1` (date) in the zone `$2` runs from its
 * midnight (`from_at`) to the next one (`to_at`), both computed by PostgreSQL. The one SQL the
 * daily report and the reconciliation of a day read their bounds from.
 */
export const REPORT_DAY_BOUNDS_SQL = `SELECT ($1::date)::timestamp AT TIME ZONE $2::text AS from_at,
       ($1::date + 1)::timestamp AT TIME ZONE $2::text AS to_at`;

/** Why `text` is not a calendar day `YYYY-MM-DD` (null: it is one). */
export function reportDayProblem(text: unknown): string | null {
  if (typeof text !== 'string' || !DAY.test(text)) return 'must be a day in the form YYYY-MM-DD';
  // The one parser of days (src/common/date-time.ts), from 2000 on.
  const day = parseDay(text);
  if (day === null || day.getUTCFullYear() < 2000) return 'must be a calendar day from 2000-01-01 on';
  return null;
}

/** The calendar day before `now`'s day in the zone, `YYYY-MM-DD` (the console's default day). */
export function dayBefore(now: Date, timeZone: string): string {
  // en-CA writes dates as YYYY-MM-DD.
  const today = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
  const [y, m, d] = today.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

/** The CSV's file name: the day and the zone, in characters any file system keeps. */
export function reportFileName(r: Pick<DailyReport, 'date' | 'timeZone'>): string {
  return `daily-report-${r.date}-${r.timeZone.replace(/[^A-Za-z0-9_-]/g, '_')}.csv`;
}

export const CSV_COLUMNS = [
  'section',
  'currency',
  'count',
  'amount',
  'not_computed',
  'object_type',
  'object_id',
  'status',
  'current_status',
  'created_at',
  'age_seconds',
  'reason',
  'raised_at',
  'flagged_at_end',
  'flagged_now',
] as const;
type Column = (typeof CSV_COLUMNS)[number];
type Row = Partial<Record<Column, string | number | boolean | null>>;

/** Text a spreadsheet could run as a formula (OWASP "CSV injection"); kept as text with a quote. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** Columns holding caller or gateway text; numbers and amounts are never altered. */
const TEXT_COLUMNS: ReadonlySet<Column> = new Set<Column>([
  'object_id',
  'status',
  'current_status',
  'reason',
]);

/**
 * One RFC 4180 field: quoted when it holds a comma, a quote or a line break. `text`: caller or
 * gateway text, which a spreadsheet must not run as a formula (numbers and amounts are never
 * altered). The console's CSV exports use it too.
 */
export function csvCell(value: string | number | boolean | null | undefined, text: boolean): string {
  if (value === null || value === undefined) return '';
  let out = String(value);
  if (text && FORMULA_START.test(out)) out = `'${out}`;
  return /[",\r\n]/.test(out) ? `"${out.replace(/"/g, '""')}"` : out;
}

function field(column: Column, value: string | number | boolean | null | undefined): string {
  return csvCell(value, TEXT_COLUMNS.has(column));
}

/**
 * The report as one flat CSV table (RFC 4180, CRLF line ends, a header row): a `section` column
 * names what each row is — `payments`, `refunds`, `payouts`, `chargebacks`, `payment_fees`, `payout_fees` (one
 * row per currency each), `open` and `attention` (one row per object), `open_total` and
 * `attention_total` (the counts, which may exceed the rows listed), `ledger:<account>` (the
 * ledger's postings of the day, one row per account and currency).
 */
export function dailyReportCsv(r: DailyReport): string {
  const rows: Row[] = [];
  for (const c of r.currencies) {
    rows.push({ section: 'payments', currency: c.currency, ...c.payments });
    rows.push({ section: 'refunds', currency: c.currency, ...c.refunds });
    rows.push({
      section: 'payouts',
      currency: c.currency,
      count: c.payouts.count,
      amount: c.payouts.amount,
      not_computed: c.payouts.withoutAmount,
    });
    rows.push({ section: 'chargebacks', currency: c.currency, ...c.chargebacks });
    for (const [section, fee] of [
      ['payment_fees', c.fees.payments],
      ['payout_fees', c.fees.payouts],
    ] as const)
      rows.push({
        section,
        currency: c.currency,
        count: fee.count,
        amount: fee.amount,
        not_computed: fee.notComputed,
      });
  }
  for (const l of r.ledger) {
    rows.push({ section: `ledger:${l.account}`, currency: l.currency, amount: l.amount });
  }
  rows.push({ section: 'open_total', count: r.open.total });
  for (const o of r.open.items)
    rows.push({
      section: 'open',
      currency: o.currency,
      amount: o.amount,
      object_type: o.objectType,
      object_id: o.id,
      status: o.status,
      current_status: o.currentStatus,
      created_at: o.createdAt,
      age_seconds: o.ageSeconds,
    });
  rows.push({ section: 'attention_total', count: r.attention.total });
  for (const a of r.attention.items)
    rows.push({
      section: 'attention',
      currency: a.currency,
      amount: a.amount,
      object_type: a.objectType,
      object_id: a.id,
      current_status: a.currentStatus,
      reason: a.reason,
      raised_at: a.raisedAt,
      flagged_at_end: a.flaggedAtEnd,
      flagged_now: a.flaggedNow,
    });
  const lines = [CSV_COLUMNS.join(',')];
  for (const row of rows) lines.push(CSV_COLUMNS.map((c) => field(c, row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The report with every amount written as the service writes amounts: its currency's minor-unit
 * digits ("0.00", "150000.00"), whatever scale PostgreSQL's sums carry. The CSV is written from it.
 */
export function reportInMinorUnits(r: DailyReport): DailyReport {
  const tally = <T extends Tally>(t: T, currency: number): T => ({ ...t, amount: moneyText(t.amount, currency) });
  return {
    ...r,
    currencies: r.currencies.map((c) => ({
      ...c,
      payments: tally(c.payments, c.currency),
      refunds: tally(c.refunds, c.currency),
      payouts: tally(c.payouts, c.currency),
      chargebacks: tally(c.chargebacks, c.currency),
      fees: { payments: tally(c.fees.payments, c.currency), payouts: tally(c.fees.payouts, c.currency) },
    })),
    ledger: r.ledger.map((l) => ({ ...l, amount: moneyText(l.amount, l.currency) })),
    open: { ...r.open, items: r.open.items.map((o) => ({ ...o, amount: moneyText(o.amount, o.currency) })) },
    attention: {
      ...r.attention,
      items: r.attention.items.map((a) => ({ ...a, amount: moneyText(a.amount, a.currency) })),
    },
  };
}
