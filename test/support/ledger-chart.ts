/**
 * TEST ONLY: the chart of accounts of docs/api.md ("Books: ledger and reconciliation") written out
 * as a table in code, used only by tests that hold the database's postings equal to it. The rule
 * itself lives in one place, the database's triggers (`ledger_post_*`, migration
 * 1795900000060-Ledger); no runtime path imports this file or carries a second copy of the rule.
 */
import Decimal from 'decimal.js';

export interface ChartPosting {
  account: string;
  currency: number;
  amount: string;
}

type Move =
  | { kind: 'invoice.succeeded' | 'refund.succeeded'; amount: string; currency: number }
  | {
      kind: 'payout.sent' | 'payout.succeeded' | 'payout.failed';
      writeOff: string;
      payeeReceive: string | null;
      shopCurrency: number;
      psCurrency: number | null;
    };

const neg = (a: string): string => new Decimal(a).neg().toFixed();

/** The postings docs/api.md's table gives one movement of an object. */
export function chartPostings(move: Move): ChartPosting[] {
  switch (move.kind) {
    case 'invoice.succeeded':
      // gateway_payment_shop debited when an invoice succeeds; sales credited.
      return [
        { account: 'gateway_payment_shop', currency: move.currency, amount: move.amount },
        { account: 'sales', currency: move.currency, amount: neg(move.amount) },
      ];
    case 'refund.succeeded':
      return [
        { account: 'sales', currency: move.currency, amount: move.amount },
        { account: 'gateway_payment_shop', currency: move.currency, amount: neg(move.amount) },
      ];
    case 'payout.sent':
      return [
        { account: 'agent_frozen', currency: move.shopCurrency, amount: move.writeOff },
        { account: 'agent_available', currency: move.shopCurrency, amount: neg(move.writeOff) },
      ];
    case 'payout.failed':
      return [
        { account: 'agent_available', currency: move.shopCurrency, amount: move.writeOff },
        { account: 'agent_frozen', currency: move.shopCurrency, amount: neg(move.writeOff) },
      ];
    case 'payout.succeeded': {
      const c = move.shopCurrency;
      const frozen = { account: 'agent_frozen', currency: c, amount: neg(move.writeOff) };
      // payouts_paid takes payeeReceive and payout_fees the rest in the shop's currency; the
      // whole write-off when the payee's currency differs.
      const same = move.psCurrency === null || move.psCurrency === c;
      if (same && move.payeeReceive !== null && new Decimal(move.payeeReceive).lte(move.writeOff)) {
        return [
          { account: 'payouts_paid', currency: c, amount: move.payeeReceive },
          {
            account: 'payout_fees',
            currency: c,
            amount: new Decimal(move.writeOff).minus(move.payeeReceive).toFixed(),
          },
          frozen,
        ].filter((p) => !new Decimal(p.amount).isZero());
      }
      return [{ account: 'payouts_paid', currency: c, amount: move.writeOff }, frozen];
    }
  }
}

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

const key = (type: string, pk: string, kind: string): string => `${type}/${pk}/${kind}`;
const canonical = (ps: ChartPosting[]): string =>
  JSON.stringify(
    ps
      .map((p) => ({ ...p, currency: Number(p.currency), amount: new Decimal(p.amount).toFixed() }))
      .sort((a, b) => `${a.account}/${a.currency}`.localeCompare(`${b.account}/${b.currency}`)),
  );

/**
 * The database's books against the chart: for every object, the entries its state calls for
 * (nothing more, nothing less, each with the chart's postings), and every entry balanced per
 * currency. The differences, one line each; none when the books are right.
 */
export async function booksAgainstChart(q: Query): Promise<string[]> {
  const expected = new Map<string, ChartPosting[]>();
  const invoices = await q<{ id: string; amount: string; currency: number }>(
    `SELECT id, amount::text AS amount, currency FROM invoices WHERE status = 'succeeded'`,
  );
  for (const i of invoices)
    expected.set(
      key('invoice', i.id, 'invoice.succeeded'),
      chartPostings({ kind: 'invoice.succeeded', amount: i.amount, currency: i.currency }),
    );
  const refunds = await q<{ id: string; amount: string; currency: number }>(
    `SELECT id, amount::text AS amount, currency FROM refunds WHERE status = 'SUCCESS'`,
  );
  for (const r of refunds)
    expected.set(
      key('refund', r.id, 'refund.succeeded'),
      chartPostings({ kind: 'refund.succeeded', amount: r.amount, currency: r.currency }),
    );
  const payouts = await q<{
    id: string;
    status: string;
    write_off: string;
    payee_receive: string | null;
    shop_currency: number;
    ps_currency: number | null;
  }>(
    `SELECT id, status, shop_write_off::text AS write_off, payee_receive::text AS payee_receive,
            shop_currency, ps_currency
       FROM payouts WHERE withdraw_id IS NOT NULL AND shop_write_off > 0`,
  );
  for (const p of payouts) {
    const move = {
      writeOff: p.write_off,
      payeeReceive: p.payee_receive,
      shopCurrency: p.shop_currency,
      psCurrency: p.ps_currency,
    };
    expected.set(
      key('payout', p.id, 'payout.sent'),
      chartPostings({ kind: 'payout.sent', ...move }),
    );
    if (p.status === 'succeeded')
      expected.set(
        key('payout', p.id, 'payout.succeeded'),
        chartPostings({ kind: 'payout.succeeded', ...move }),
      );
    if (p.status === 'failed' || p.status === 'rejected')
      expected.set(
        key('payout', p.id, 'payout.failed'),
        chartPostings({ kind: 'payout.failed', ...move }),
      );
  }

  const entries = await q<{
    object_type: string;
    object_pk: string;
    kind: string;
    postings: ChartPosting[];
  }>(
    `SELECT e.object_type, e.object_pk::text AS object_pk, e.kind,
            json_agg(json_build_object('account', p.account, 'currency', p.currency, 'amount', p.amount::text)) AS postings
       FROM ledger_entries e JOIN ledger_postings p ON p.entry_id = e.id
      WHERE e.object_pk IS NOT NULL
      GROUP BY e.id`,
  );
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    const k = key(e.object_type, e.object_pk, e.kind);
    if (seen.has(k)) problems.push(`${k}: posted twice`);
    seen.add(k);
    const want = expected.get(k);
    if (want === undefined) problems.push(`${k}: an entry whose object is not in that state`);
    else if (canonical(want) !== canonical(e.postings))
      problems.push(`${k}: postings ${canonical(e.postings)}, the chart says ${canonical(want)}`);
  }
  for (const k of expected.keys()) if (!seen.has(k)) problems.push(`${k}: no entry`);
  const unbalanced = await q<{ entry_id: string; currency: number }>(
    `SELECT entry_id::text, currency FROM ledger_postings GROUP BY entry_id, currency HAVING sum(amount) <> 0`,
  );
  for (const u of unbalanced)
    problems.push(`entry ${u.entry_id}: does not balance in ${u.currency}`);
  return problems;
}
