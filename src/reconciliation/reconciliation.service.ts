import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { raiseAttention } from '../common/attention';
import { GatewayFailure, NotFound, ValidationFailed } from '../common/errors';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayError, GatewayTransportError } from '../gateway/gateway.errors';
import { GatewayService } from '../gateway/gateway.service';
import { openingPostings } from '../ledger/ledger.chart';
import { balancesAt, hasOpening, positionMismatches, postEntry } from '../ledger/ledger-sql';
import {
  booksDifference,
  ledgerPositionMismatches,
  reconciliationItems,
  reconciliationLastFinished,
} from '../metrics/metrics';
import { dayBefore, REPORT_DAY_BOUNDS_SQL, reportDayProblem } from '../reports/daily-report';
import { reconcileObjects, type FlaggableItem } from './reconciliation-objects';
import {
  absoluteDifference,
  agentBooks,
  chargebackHint,
  compareBalances,
  openingBalance,
  withDifferences,
  ITEM_KINDS,
  type BalanceComparison,
  type ReconciliationItem,
} from './reconciliation.rules';
import { clock } from '../common/clock';

const log = logger.child({ component: 'reconciliation' });

export interface Reconciliation {
  id: string;
  date: string;
  status: 'balanced' | 'variances';
  startedAt: string;
  finishedAt: string;
  balances: BalanceComparison[];
  items: ReconciliationItem[];
}

interface Row {
  id: string;
  date: string;
  status: 'balanced' | 'variances';
  started_at: Date;
  finished_at: Date;
  balances: BalanceComparison[];
  items: ReconciliationItem[];
}

const view = (r: Row): Reconciliation => ({
  id: r.id,
  date: r.date,
  status: r.status,
  startedAt: new Date(r.started_at).toISOString(),
  finishedAt: new Date(r.finished_at).toISOString(),
  balances: r.balances.map(withDifferences),
  items: r.items,
});

const audit = new AuditService();

@Injectable()
export class ReconciliationService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly ds: DataSource,
    private readonly gateway: GatewayService,
  ) {}

  /** The last finished day in REPORT_TIMEZONE. */
  defaultDay(now = clock.date()): string {
    return dayBefore(now, this.config.reportTimeZone);
  }

  async dayBounds(date: string): Promise<{ from: Date; to: Date; future: boolean }> {
    const rows = (await this.ds.query(
      `SELECT b.from_at, b.to_at, b.from_at > clock_now() AS future FROM (${REPORT_DAY_BOUNDS_SQL}) b`,
      [date, this.config.reportTimeZone],
    )) as { from_at: Date; to_at: Date; future: boolean }[];
    return { from: rows[0].from_at, to: rows[0].to_at, future: rows[0].future };
  }

  /**
   * One run: the agent shop's balance against the books (opening entries the first time), then
   * every object that moved in the day or is not final against the gateway's record. Stored with
   * its items; each item flagged; `reconciliation.completed` written in the same transaction.
   */
  async run(date: string | undefined, keyId: string | null): Promise<Reconciliation> {
    if (date !== undefined) {
      const problem = reportDayProblem(date);
      if (problem !== null) throw new ValidationFailed([{ field: 'date', message: problem }]);
      // As the daily report: a day that has not begun has nothing to reconcile.
      if ((await this.dayBounds(date)).future)
        throw new ValidationFailed([{ field: 'date', message: 'must not be in the future' }]);
    }
    const day = date ?? this.defaultDay();
    try {
      return await this.reconcile(day, keyId);
    } catch (e) {
      throw unanswered(e);
    }
  }

  private async reconcile(day: string, keyId: string | null): Promise<Reconciliation> {
    const bounds = await this.dayBounds(day);
    const startedAt = clock.date();
    // The balance and the books at one instant: read while no payout create is on its way (a
    // create sent just before the read may or may not be in the gateway's figure), and the books
    // taken as of the moment the read was sent (payouts sent after it are in flight, outside both).
    await this.quietCreates();
    const readAt = clock.date();
    const gatewayBalance = await this.gateway.shopBalance();
    const gw = new Map<number, { available: string; hold: string; frozen: string }>();
    for (const b of gatewayBalance.balances) {
      gw.set(b.currency, {
        available: String(b.available),
        hold: String(b.hold),
        frozen: String(b.frozen),
      });
    }
    const single = this.singleShop();
    if (!(await hasOpening(this.ds))) await this.postOpening(gw, single, readAt);
    const ours = agentBooks(
      await balancesAt(this.ds, readAt),
      single,
      single ? await this.openHolds(this.ds) : undefined,
    );
    const objectItems = await reconcileObjects(this.ds, this.gateway, this.config, bounds);
    const { balances, items: compared } = compareBalances(ours, gw);
    // In a single-shop setup the sales are in the agent shop's balance, and so are chargebacks.
    const openDisputes = single ? await this.openDisputes() : new Map<number, string>();
    const balanceItems: FlaggableItem[] = compared.map((i) => {
      const hint = chargebackHint(i, openDisputes);
      return hint === null ? i : { ...i, hint };
    });
    const items: FlaggableItem[] = [
      ...balanceItems,
      ...objectItems,
      ...(await this.positionItems()),
    ];
    const status = items.length === 0 ? 'balanced' : 'variances';
    const stored = await this.ds.transaction(async (m) => {
      const rows = (await m.query(
        `INSERT INTO reconciliations (date, status, started_at, finished_at, balances, items, key_id)
         VALUES ($1, $2, $3, clock_now(), $4::jsonb, $5::jsonb, $6)
         RETURNING id, date::text AS date, status, started_at, finished_at, balances, items`,
        [
          day,
          status,
          startedAt,
          JSON.stringify(balances),
          JSON.stringify(items.map(publicItem)),
          keyId,
        ],
      )) as Row[];
      const rec = view(rows[0]);
      await this.flag(m, rec, items);
      await audit.record(m, {
        entityType: 'reconciliation',
        entityId: rec.id,
        fromStatus: null,
        toStatus: 'completed',
        cause: 'reconciliation',
        details: { date: rec.date, status: rec.status, items: rec.items.length },
        committedView: { ...rec },
      });
      return rec;
    });
    this.observe(stored);
    log.info(
      { id: stored.id, date: stored.date, status: stored.status, items: stored.items.length },
      'reconciliation finished',
    );
    return stored;
  }

  /**
   * Waits (up to one gateway time-out) until no payout create of the agent shop is on its way,
   * so that the balance read next sees every create sent before it.
   */
  private async quietCreates(): Promise<void> {
    const until = Date.now() + this.config.gateway.timeoutMs;
    for (;;) {
      const [row] = (await this.ds.query(
        `SELECT EXISTS (SELECT 1 FROM payouts
                         WHERE shop_id = $1 AND call_owner IS NOT NULL AND call_lease_until > clock_now()) AS busy`,
        [this.config.gateway.shops.payout.shopId],
      )) as { busy: boolean }[];
      if (!row.busy || Date.now() >= until) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The position check (the books against the objects' states), as reconciliation items. */
  private async positionItems(): Promise<FlaggableItem[]> {
    const { mismatches } = await positionMismatches(this.ds);
    const legs = (ps: readonly { account: string; amount: string }[]): string =>
      ps.length === 0 ? 'nothing' : ps.map((p) => `${p.account} ${p.amount}`).join(', ');
    return mismatches.map((m) => ({
      kind: 'position' as const,
      objectType: m.object_type as 'invoice' | 'refund' | 'payout' | 'dispute',
      objectId: m.object_id,
      currency: m.posted[0]?.currency ?? m.position[0]?.currency ?? null,
      ours: `posted ${legs(m.posted)}`,
      gateway: null,
      position: `${m.status ?? 'no object'}: ${legs(m.position)}`,
      // A dispute has no attention flag of its own: its item flags the run.
      ...(m.status === null || m.object_type === 'dispute'
        ? {}
        : { rowId: m.object_pk, rowStatus: m.status }),
    }));
  }

  /** The payment shop's invoices held now, per currency: a payer's funds in the gateway's hold. */
  private async openHolds(q: Pick<EntityManager, 'query'>): Promise<Map<number, string>> {
    const rows = (await q.query(
      `SELECT currency, sum(amount)::text AS amount FROM invoices
        WHERE shop_id = $1 AND status = 'held' GROUP BY currency`,
      [this.config.gateway.shops.payment.shopId],
    )) as { currency: number; amount: string }[];
    return new Map(rows.map((r) => [r.currency, r.amount]));
  }

  /** The payment shop's disputes still open, per currency (a chargeback's amount while argued). */
  private async openDisputes(): Promise<Map<number, string>> {
    const rows = (await this.ds.query(
      `SELECT currency, sum(amount)::text AS amount FROM disputes
        WHERE shop_id = $1 AND status = 'open' GROUP BY currency`,
      [this.config.gateway.shops.payment.shopId],
    )) as { currency: number; amount: string }[];
    return new Map(rows.map((r) => [r.currency, r.amount]));
  }

  /** One gateway shop takes the payments and pays out: the payment shop is the agent shop. */
  private singleShop(): boolean {
    const { payment, payout } = this.config.gateway.shops;
    return payment.shopId === payout.shopId;
  }

  /**
   * The gateway's balance as the books' opening (openingBalance): what the agent shop held
   * before the books knew of it, that is the gateway's balance less what the books already hold
   * for it (payouts posted before the first reconciliation; in a single-shop setup, the sales in
   * `gateway_payment_shop`), so the next comparison starts equal.
   */
  private async postOpening(
    gw: ReadonlyMap<number, { available: string; hold: string; frozen: string }>,
    single: boolean,
    /** When the gateway's balance was read: the opening is dated then, against the books then. */
    at: Date,
  ): Promise<void> {
    await this.ds.transaction(async (m) => {
      // Two instances opening at once: the second waits, then finds the first's entries.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('ledger_opening'))`);
      if (await hasOpening(m)) return;
      const books = await balancesAt(m, at);
      const holds = single ? await this.openHolds(m) : undefined;
      for (const [currency, b] of gw) {
        const postings = openingPostings({
          currency,
          ...openingBalance(b, currency, books, single, holds),
        });
        if (postings.length === 0) continue;
        await postEntry(m, {
          kind: 'opening',
          note: 'opening balance of the agent shop (first reconciliation)',
          postings,
          at,
        });
      }
    });
  }

  /** Every item raises attention: on its object, or on the reconciliation for the others. */
  private async flag(m: EntityManager, rec: Reconciliation, items: FlaggableItem[]): Promise<void> {
    const own: string[] = [];
    // An object flagged once a run, by its first item (its status before its books).
    const flagged = new Set<string>();
    for (const item of items) {
      const detail = describe(item);
      if (item.rowId !== undefined && flagged.has(item.rowId)) continue;
      if (item.rowId !== undefined) flagged.add(item.rowId);
      if (
        item.rowId !== undefined &&
        item.objectType !== undefined &&
        item.objectType !== 'dispute' &&
        item.objectId !== undefined
      ) {
        await raiseAttention(
          m,
          {
            object: item.objectType,
            id: item.rowId,
            shopId: item.objectId,
            status: item.rowStatus ?? '',
          },
          'reconciliation',
          detail,
          'reconciliation',
          { reconciliation: rec.id, date: rec.date },
        );
      } else {
        own.push(detail);
      }
    }
    // A run without balance variances settles the flags of earlier runs' balance items.
    if (!items.some((i) => i.kind === 'balance')) {
      await m.query(
        `UPDATE reconciliations SET needs_attention = false, attention_reason = NULL, attention_at = NULL
          WHERE needs_attention AND id <> $1`,
        [rec.id],
      );
    }
    if (own.length > 0) {
      await m.query(
        `UPDATE reconciliations SET needs_attention = true, attention_reason = $2, attention_at = clock_now() WHERE id = $1`,
        [rec.id, `reconciliation: ${own.join('; ')}`.slice(0, 2000)],
      );
    }
  }

  /**
   * The metrics from the last stored run, so every instance reports the same values (not only the
   * one that ran it), also after a restart; without any run, the last finished time is 0.
   */
  async refreshMetrics(): Promise<void> {
    const [last] = await this.list(1);
    if (last === undefined) reconciliationLastFinished.set(0);
    else this.observe(last);
  }

  private observe(rec: Reconciliation): void {
    reconciliationLastFinished.set(new Date(rec.finishedAt).getTime() / 1000);
    for (const b of rec.balances) {
      booksDifference.set(
        { currency: String(b.currency) },
        Number(absoluteDifference(rec.items, b.currency)),
      );
    }
    for (const kind of ITEM_KINDS) {
      reconciliationItems.set({ kind }, rec.items.filter((i) => i.kind === kind).length);
    }
    ledgerPositionMismatches.set(rec.items.filter((i) => i.kind === 'position').length);
  }

  async get(id: string): Promise<Reconciliation> {
    const rows = /^[0-9a-f-]{36}$/.test(id)
      ? ((await this.ds.query(
          `SELECT id, date::text AS date, status, started_at, finished_at, balances, items FROM reconciliations WHERE id = $1`,
          [id],
        )) as Row[])
      : [];
    if (rows.length === 0) throw new NotFound('Reconciliation', id);
    return view(rows[0]);
  }

  async list(limit: number): Promise<Reconciliation[]> {
    const rows = (await this.ds.query(
      `SELECT id, date::text AS date, status, started_at, finished_at, balances, items
         FROM reconciliations ORDER BY finished_at DESC, id DESC LIMIT $1`,
      [limit],
    )) as Row[];
    return rows.map(view);
  }
}

/**
 * A run the gateway could not answer stores nothing (a result is never built on a partial view):
 * the caller hears 502 (the gateway refused a call) or 503 (it could not be reached; retry), and
 * the daily job tries the day again at its next tick.
 */
function unanswered(e: unknown): unknown {
  if (e instanceof GatewayError) {
    return new GatewayFailure(
      `reconciliation not run: ${e.call} failed with gateway error ${e.errorCode}; nothing was stored, run it again later`,
      e.errorCode,
      e.gatewayMessage,
      e.fatal,
      502,
    );
  }
  if (e instanceof GatewayTransportError) {
    return new GatewayFailure(
      `reconciliation not run: the gateway did not answer (${e.kind}); nothing was stored, run it again later`,
      null,
      null,
      null,
      503,
    );
  }
  return e;
}

/** The item as the API shows it (without the row's internal id). */
function publicItem(i: FlaggableItem): ReconciliationItem {
  const { rowId: _rowId, rowStatus: _rowStatus, hint: _hint, ...rest } = i;
  return rest;
}

function describe(i: FlaggableItem): string {
  const what =
    i.objectType !== undefined
      ? `${i.objectType} ${i.objectId}`
      : `${i.account ?? 'balance'} ${i.currency}`;
  return `${i.kind} of ${what}: ours ${i.ours ?? 'none'}, gateway ${i.gateway ?? 'none'}${i.amount !== undefined ? ` (${i.amount})` : ''}${i.hint !== undefined ? ` (${i.hint})` : ''}`;
}
