/**
 * TEST ONLY: the chart of accounts of docs/api.md ("Books: ledger and reconciliation") written out
 * as a table in code, used only by tests that hold the database's postings equal to it. The rule
 * itself lives in one place, the database's position functions (`ledger_position_*`, migration
 * 1796500000010-LedgerPositions); no runtime path imports this file or carries a second copy.
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
 * The position docs/api.md's chart gives an object's state (a test's own table, apart from the
 * database's `ledger_position_*`): the invoice's sale when `succeeded`, the refund's when
 * `SUCCESS`, a payout's write-off frozen from its send until it is final, paid (and its fee) when
 * `succeeded`, nothing when it failed, was rejected, cancelled or never sent.
 */
export function positionOf(
  o:
    | { type: 'invoice' | 'refund'; status: string; amount: string; currency: number }
    | {
        type: 'payout';
        status: string;
        sent: boolean;
        writeOff: string;
        payeeReceive: string | null;
        shopCurrency: number;
        psCurrency: number | null;
      },
): ChartPosting[] {
  if (o.type !== 'payout') {
    const done = o.type === 'invoice' ? o.status === 'succeeded' : o.status === 'SUCCESS';
    const kind = o.type === 'invoice' ? 'invoice.succeeded' : 'refund.succeeded';
    return done ? chartPostings({ kind, amount: o.amount, currency: o.currency }) : [];
  }
  const move = {
    writeOff: o.writeOff,
    payeeReceive: o.payeeReceive,
    shopCurrency: o.shopCurrency,
    psCurrency: o.psCurrency,
  };
  const sent = chartPostings({ kind: 'payout.sent', ...move });
  if (o.status === 'succeeded')
    return sum([...sent, ...chartPostings({ kind: 'payout.succeeded', ...move })]);
  if (['failed', 'rejected', 'cancelled', 'awaiting_approval'].includes(o.status) || !o.sent)
    return [];
  return sent;
}

/** Postings summed per account and currency, zeros left out. */
function sum(ps: ChartPosting[]): ChartPosting[] {
  const m = new Map<string, Decimal>();
  for (const p of ps) {
    const k = `${p.account}/${Number(p.currency)}`;
    m.set(k, (m.get(k) ?? new Decimal(0)).plus(p.amount));
  }
  return [...m]
    .filter(([, v]) => !v.isZero())
    .map(([k, v]) => {
      const [account, currency] = k.split('/');
      return { account, currency: Number(currency), amount: v.toFixed() };
    });
}

const FORWARD_KINDS = new Set([
  'invoice.succeeded',
  'refund.succeeded',
  'payout.sent',
  'payout.succeeded',
  'payout.failed',
]);

/**
 * The database's books against the chart: for every object, its entries sum to the position its
 * state implies (positionOf), no forward kind is posted twice, and every entry balances per
 * currency. The differences, one line each; none when the books are right.
 */
export async function booksAgainstChart(q: Query): Promise<string[]> {
  const expected = new Map<string, ChartPosting[]>();
  for (const i of await q<{ id: string; status: string; amount: string; currency: number }>(
    `SELECT id, status, amount::text AS amount, currency FROM invoices`,
  ))
    expected.set(`invoice/${i.id}`, positionOf({ type: 'invoice', ...i }));
  for (const r of await q<{ id: string; status: string; amount: string; currency: number }>(
    `SELECT id, status, amount::text AS amount, currency FROM refunds`,
  ))
    expected.set(`refund/${r.id}`, positionOf({ type: 'refund', ...r }));
  for (const p of await q<{
    id: string;
    status: string;
    sent: boolean;
    write_off: string;
    payee_receive: string | null;
    shop_currency: number;
    ps_currency: number | null;
  }>(
    `SELECT id, status, sent_at IS NOT NULL AS sent, COALESCE(shop_write_off, amount)::text AS write_off,
            payee_receive::text AS payee_receive, shop_currency, ps_currency
       FROM payouts`,
  ))
    expected.set(
      `payout/${p.id}`,
      positionOf({
        type: 'payout',
        status: p.status,
        sent: p.sent,
        writeOff: p.write_off,
        payeeReceive: p.payee_receive,
        shopCurrency: p.shop_currency,
        psCurrency: p.ps_currency,
      }),
    );

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
  const posted = new Map<string, ChartPosting[]>();
  for (const e of entries) {
    const k = key(e.object_type, e.object_pk, e.kind);
    if (FORWARD_KINDS.has(e.kind) && seen.has(k)) problems.push(`${k}: posted twice`);
    seen.add(k);
    const o = `${e.object_type}/${e.object_pk}`;
    posted.set(o, [...(posted.get(o) ?? []), ...e.postings]);
  }
  for (const [o, want] of expected) {
    const got = sum(posted.get(o) ?? []);
    if (canonical(got) !== canonical(want))
      problems.push(`${o}: posted ${canonical(got)}, its state implies ${canonical(want)}`);
  }
  for (const o of posted.keys())
    if (!expected.has(o) && sum(posted.get(o) ?? []).length > 0)
      problems.push(`${o}: entries of an object that does not exist`);
  const unbalanced = await q<{ entry_id: string; currency: number }>(
    `SELECT entry_id::text, currency FROM ledger_postings GROUP BY entry_id, currency HAVING sum(amount) <> 0`,
  );
  for (const u of unbalanced)
    problems.push(`entry ${u.entry_id}: does not balance in ${u.currency}`);
  return problems;
}
