import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { ValidationFailed } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config/config';
import {
  type AttentionItem,
  type CurrencyBooks,
  type DailyReport,
  type LedgerSum,
  MAX_ITEMS,
  type ObjectType,
  type OpenItem,
  reportDayProblem,
  REPORT_DAY_BOUNDS_SQL,
  reportInMinorUnits,
} from './daily-report';
import { LEGS } from '../ledger/ledger-sql';
import { sqlList } from '../common/sql';
import {
  INVOICE_FINAL_STATUSES,
  PAYOUT_FINAL_STATUSES,
  REFUND_FINAL_STATUSES,
} from '../domain/statuses';

/**
 * The day's bounds (REPORT_DAY_BOUNDS_SQL: the calendar day $1 in the zone $2, midnight to
 * midnight); `as_of` is the end, or now while the day is still running. Every query of a report
 * starts with it, in one snapshot.
 */
const DAY_CTE = `day AS (
  SELECT b.from_at, b.to_at, LEAST(b.to_at, clock_now()) AS as_of
    FROM (${REPORT_DAY_BOUNDS_SQL}) b)`;

/**
 * Each object's final statuses (src/domain/statuses.ts, written into the statement) and the
 * column that says when it reached one.
 */
const OBJECTS = `
  SELECT 'invoice' AS object_type, i.shop_order_id AS id, i.status, i.amount, i.currency,
         i.created_at, i.needs_attention, i.attention_reason, i.attention_at,
         (i.status IN (${sqlList(INVOICE_FINAL_STATUSES)})) AS final,
         COALESCE(i.processed_at, i.updated_at) AS final_at
    FROM invoices i WHERE i.shop_id = $3
  UNION ALL
  SELECT 'refund', r.shop_refund_id, r.status, r.amount, r.currency,
         r.created_at, r.needs_attention, r.attention_reason, r.attention_at,
         (r.status IN (${sqlList(REFUND_FINAL_STATUSES)})), COALESCE(r.processed_at, r.updated_at)
    FROM refunds r WHERE r.shop_id = $3
  UNION ALL
  SELECT 'payout', p.shop_payment_id, p.status, p.amount, p.shop_currency,
         p.created_at, p.needs_attention, p.attention_reason, p.attention_at,
         (p.status IN (${sqlList(PAYOUT_FINAL_STATUSES)})), COALESCE(p.finished_at, p.updated_at)
    FROM payouts p WHERE p.shop_id = $4`;

const RAISE_TYPES = ['invoice', 'refund', 'payout'].map((o) => `${o}.attention_raised`);
const ATTENTION_TYPES = [
  ...RAISE_TYPES,
  ...['invoice', 'refund', 'payout'].map((o) => `${o}.attention_resolved`),
];

interface Bounds {
  from_at: Date;
  to_at: Date;
  as_of: Date;
  future: boolean;
}

/**
 * Builds the daily report. All figures come from one read-only REPEATABLE READ snapshot, and
 * every sum is `SUM(numeric)::text`: no amount passes through a float. Invoices and refunds are
 * the payment shop's, payouts the agent shop's (rows of a former shop are not this shop's books).
 */
@Injectable()
export class ReportsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  get timeZone(): string {
    return this.config.reportTimeZone;
  }

  async daily(date: string): Promise<DailyReport> {
    const problem = reportDayProblem(date);
    if (problem !== null) throw new ValidationFailed([{ field: 'date', message: problem }]);
    return this.dataSource.transaction('REPEATABLE READ', async (m) => {
      await m.query('SET TRANSACTION READ ONLY');
      const params = [
        date,
        this.config.reportTimeZone,
        this.config.gateway.shops.payment.shopId,
        this.config.gateway.shops.payout.shopId,
      ];
      const [b] = (await m.query(
        `WITH ${DAY_CTE} SELECT from_at, to_at, as_of, from_at > clock_now() AS future FROM day`,
        params.slice(0, 2),
      )) as Bounds[];
      if (b.future)
        throw new ValidationFailed([{ field: 'date', message: 'must not be in the future' }]);
      const [ledger, currencies, open, attention] = [
        await this.ledger(m, params),
        await this.books(m, params),
        await this.open(m, params),
        await this.attention(m, params),
      ];
      return reportInMinorUnits({
        date,
        timeZone: this.config.reportTimeZone,
        from: b.from_at.toISOString(),
        to: b.to_at.toISOString(),
        complete: b.as_of.getTime() === b.to_at.getTime(),
        currencies,
        ledger,
        open,
        attention,
      });
    });
  }

  /** Per account and currency, the sum of the ledger's postings of the day. */
  private async ledger(m: EntityManager, params: unknown[]): Promise<LedgerSum[]> {
    return (await m.query(
      `WITH ${DAY_CTE}
       SELECT p.account, p.currency, SUM(p.amount)::text AS amount
         FROM ledger_entries e ${LEGS}, day
        WHERE e.created_at >= day.from_at AND e.created_at < day.as_of
        GROUP BY p.account, p.currency ORDER BY p.account, p.currency`,
      params.slice(0, 2),
    )) as LedgerSum[];
  }

  /** Per currency: what succeeded that day, and the fees where they can be known exactly. */
  private async books(m: EntityManager, params: unknown[]): Promise<CurrencyBooks[]> {
    const rows = (await m.query(
      `WITH ${DAY_CTE}
       SELECT x.kind, x.currency, count(*)::int AS count,
              COALESCE(SUM(x.amount), 0)::text AS amount,
              (count(*) - count(x.amount))::int AS without_amount,
              count(x.fee)::int AS fee_count, COALESCE(SUM(x.fee), 0)::text AS fee
         FROM (
           -- The day's sums are the ledger's postings of the day (docs/api.md, "Books"): a
           -- payment is an invoice.succeeded entry's debit of gateway_payment_shop, a refund its
           -- refund.succeeded entry's debit (whichever account ledger_position_refund debits: the
           -- report does not name it again), a payout a payout.succeeded entry's credit
           -- of agent_frozen (the write-off). The day is the object's own final time (written
           -- in the transaction that posts its entry). Fees: the payer price is in the payway's currency
           -- (ps_currency), so a payment fee only where that is the invoice's own currency; a
           -- payout's fee is its payout_fees posting, made where its currencies are the same.
           SELECT 'payments' AS kind, lp.currency, lp.amount,
                  CASE WHEN i.ps_currency = i.currency
                       THEN COALESCE(i.payer_price, i.client_price) - i.amount END AS fee
             FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) lp
             JOIN invoices i ON i.id = e.object_pk, day
            WHERE e.kind = 'invoice.succeeded' AND lp.account = 'gateway_payment_shop' AND i.shop_id = $3
              AND i.processed_at >= day.from_at AND i.processed_at < day.as_of
           UNION ALL
           SELECT 'refunds', lp.currency, lp.amount, NULL
             FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) lp
             JOIN refunds r ON r.id = e.object_pk, day
            WHERE e.kind = 'refund.succeeded' AND lp.amount > 0 AND r.shop_id = $3
              AND r.processed_at >= day.from_at AND r.processed_at < day.as_of
           UNION ALL
           SELECT 'payouts', lp.currency, -lp.amount,
                  CASE WHEN p.ps_currency = p.shop_currency
                       THEN COALESCE((SELECT SUM(f.amount) FROM unnest(e.legs) f
                                       WHERE f.account = 'payout_fees'), 0) END
             FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) lp
             JOIN payouts p ON p.id = e.object_pk, day
            WHERE e.kind = 'payout.succeeded' AND lp.account = 'agent_frozen' AND p.shop_id = $4
              AND p.finished_at >= day.from_at AND p.finished_at < day.as_of
           UNION ALL
           -- A chargeback: a dispute.lost entry's debit of chargebacks (a lost or accepted
           -- dispute), on the day the dispute was resolved.
           SELECT 'chargebacks', lp.currency, lp.amount, NULL
             FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) lp
             JOIN disputes d ON d.id = e.object_pk, day
            WHERE e.kind = 'dispute.lost' AND e.object_type = 'dispute' AND lp.account = 'chargebacks'
              AND d.shop_id = $3 AND d.resolved_at >= day.from_at AND d.resolved_at < day.as_of
           UNION ALL
           -- A payout that succeeded without a known write-off moved no money the books know of:
           -- counted, without an amount.
           SELECT 'payouts', p.shop_currency, NULL, NULL
             FROM payouts p, day
            WHERE p.shop_id = $4 AND p.status = 'succeeded' AND p.shop_write_off IS NULL
              AND p.finished_at >= day.from_at AND p.finished_at < day.as_of
         ) x
        GROUP BY x.kind, x.currency
        ORDER BY x.currency, x.kind`,
      params,
    )) as Array<{
      kind: 'payments' | 'refunds' | 'payouts' | 'chargebacks';
      currency: number;
      count: number;
      amount: string;
      without_amount: number;
      fee_count: number;
      fee: string;
    }>;
    const byCurrency = new Map<number, CurrencyBooks>();
    const zero = { count: 0, amount: '0' };
    for (const r of rows) {
      let c = byCurrency.get(r.currency);
      if (c === undefined) {
        c = {
          currency: r.currency,
          payments: { ...zero },
          refunds: { ...zero },
          payouts: { ...zero, withoutAmount: 0 },
          chargebacks: { ...zero },
          fees: { payments: { ...zero, notComputed: 0 }, payouts: { ...zero, notComputed: 0 } },
        };
        byCurrency.set(r.currency, c);
      }
      const tally = { count: r.count, amount: r.amount };
      const fee = { count: r.fee_count, amount: r.fee, notComputed: r.count - r.fee_count };
      if (r.kind === 'payments') {
        c.payments = tally;
        c.fees.payments = fee;
      } else if (r.kind === 'refunds') c.refunds = tally;
      else if (r.kind === 'chargebacks') c.chargebacks = tally;
      else {
        c.payouts = { ...tally, withoutAmount: r.without_amount };
        c.fees.payouts = fee;
      }
    }
    return [...byCurrency.values()];
  }

  /**
   * Objects created before the day's end and not final at it: not final now, or final only at or
   * after the end. Their status then is the audit trail's last entry before the end.
   */
  private async open(
    m: EntityManager,
    params: unknown[],
  ): Promise<{ total: number; items: OpenItem[] }> {
    const rows = (await m.query(
      `WITH ${DAY_CTE},
       open AS (
         SELECT o.*, day.as_of FROM (${OBJECTS}) o, day
          WHERE o.created_at < day.as_of AND NOT (o.final AND o.final_at < day.as_of))
       SELECT open.object_type, open.id, open.amount::text AS amount, open.currency,
              s.to_status AS status_at_end, open.status AS current_status, open.created_at,
              floor(EXTRACT(EPOCH FROM open.as_of - open.created_at))::int AS age_seconds,
              count(*) OVER ()::int AS total
         FROM open
         LEFT JOIN LATERAL (
           SELECT ev.to_status FROM events ev
            WHERE ev.entity_type = open.object_type AND ev.entity_id = open.id
              AND ev.created_at < open.as_of
            ORDER BY ev.id DESC LIMIT 1) s ON true
        ORDER BY open.created_at, open.object_type, open.id
        LIMIT ${MAX_ITEMS}`,
      params,
    )) as Array<{
      object_type: ObjectType;
      id: string;
      amount: string;
      currency: number;
      status_at_end: string | null;
      current_status: string;
      created_at: Date;
      age_seconds: number;
      total: number;
    }>;
    return {
      total: rows[0]?.total ?? 0,
      items: rows.map((r) => ({
        objectType: r.object_type,
        id: r.id,
        amount: r.amount,
        currency: r.currency,
        status: r.status_at_end,
        currentStatus: r.current_status,
        createdAt: r.created_at.toISOString(),
        ageSeconds: r.age_seconds,
      })),
    };
  }

  /**
   * Attention items of the day: every object flagged at the day's end (its last raise/resolve
   * entry before the end is a raise, or its flag now dates from before the end) and every object
   * flagged during the day, even when resolved before its end.
   */
  private async attention(
    m: EntityManager,
    params: unknown[],
  ): Promise<{ total: number; items: AttentionItem[] }> {
    const rows = (await m.query(
      `WITH ${DAY_CTE},
       last_change AS (
         SELECT DISTINCT ON (ev.entity_type, ev.entity_id) ev.entity_type, ev.entity_id, ev.type
           FROM events ev, day
          WHERE ev.type = ANY($5::varchar[]) AND ev.created_at < day.as_of
          ORDER BY ev.entity_type, ev.entity_id, ev.id DESC),
       last_raise AS (
         SELECT DISTINCT ON (ev.entity_type, ev.entity_id) ev.entity_type, ev.entity_id,
                ev.created_at, ev.details
           FROM events ev, day
          WHERE ev.type = ANY($6::varchar[]) AND ev.created_at < day.as_of
          ORDER BY ev.entity_type, ev.entity_id, ev.id DESC),
       candidates AS (
         SELECT 'invoice' AS object_type, i.shop_order_id AS id FROM invoices i, day
          WHERE i.needs_attention AND i.attention_at < day.as_of AND i.shop_id = $3
         UNION
         SELECT 'refund', r.shop_refund_id FROM refunds r, day
          WHERE r.needs_attention AND r.attention_at < day.as_of AND r.shop_id = $3
         UNION
         SELECT 'payout', p.shop_payment_id FROM payouts p, day
          WHERE p.needs_attention AND p.attention_at < day.as_of AND p.shop_id = $4
         UNION
         SELECT entity_type, entity_id FROM last_raise),
       items AS (
         SELECT o.object_type, o.id, o.amount, o.currency, o.status, o.needs_attention,
                (o.needs_attention AND o.attention_at < day.as_of)
                  OR COALESCE(lc.type = ANY($6::varchar[]), false) AS flagged_at_end,
                COALESCE(lr.created_at,
                         CASE WHEN o.attention_at < day.as_of THEN o.attention_at END) AS raised_at,
                COALESCE(NULLIF(concat_ws(': ', lr.details->>'reason', lr.details->>'detail'), ''),
                         o.attention_reason) AS reason,
                lr.created_at >= day.from_at AS raised_that_day
           FROM candidates c
           JOIN (${OBJECTS}) o ON o.object_type = c.object_type AND o.id = c.id
           CROSS JOIN day
           LEFT JOIN last_change lc ON lc.entity_type = o.object_type AND lc.entity_id = o.id
           LEFT JOIN last_raise lr ON lr.entity_type = o.object_type AND lr.entity_id = o.id)
       SELECT object_type, id, amount::text AS amount, currency, status, needs_attention,
              flagged_at_end, raised_at, reason, count(*) OVER ()::int AS total
         FROM items
        WHERE flagged_at_end OR raised_that_day
        ORDER BY raised_at NULLS FIRST, object_type, id
        LIMIT ${MAX_ITEMS}`,
      [...params, ATTENTION_TYPES, RAISE_TYPES],
    )) as Array<{
      object_type: ObjectType;
      id: string;
      amount: string;
      currency: number;
      status: string;
      needs_attention: boolean;
      flagged_at_end: boolean;
      raised_at: Date | null;
      reason: string | null;
      total: number;
    }>;
    return {
      total: rows[0]?.total ?? 0,
      items: rows.map((r) => ({
        objectType: r.object_type,
        id: r.id,
        amount: r.amount,
        currency: r.currency,
        currentStatus: r.status,
        reason: r.reason,
        raisedAt: r.raised_at ? r.raised_at.toISOString() : null,
        flaggedAtEnd: r.flagged_at_end,
        flaggedNow: r.needs_attention,
      })),
    };
  }
}
