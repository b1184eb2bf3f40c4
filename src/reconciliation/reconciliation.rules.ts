import DecimalJs from 'decimal.js';
import { minorUnits } from '../common/currency';

/**
 * What a reconciliation compares, as pure functions: the agent shop's balance at the gateway
 * against the ledger's `agent_available` / `agent_frozen`, and one object's status and amount
 * against the gateway's record of it.
 */

export type ItemKind =
  | 'balance'
  | 'status'
  | 'amount'
  | 'missing_ours'
  | 'missing_gateway'
  | 'foreign_record'
  | 'position';
export const ITEM_KINDS: readonly ItemKind[] = [
  'balance',
  'status',
  'amount',
  'missing_ours',
  'missing_gateway',
  'foreign_record',
  'position',
];

export interface ReconciliationItem {
  kind: ItemKind;
  /** A dispute only in a position item (the gateway's interface has no disputes to compare). */
  objectType?: 'invoice' | 'refund' | 'payout' | 'dispute';
  objectId?: string;
  /** A balance item: the ledger account compared (`agent_available` or `agent_frozen`). */
  account?: 'agent_available' | 'agent_frozen';
  currency: number | null;
  ours: string | null;
  gateway: string | null;
  /** gateway − ours, for amounts and balances. */
  amount?: string;
  /** A position item: the object's status and the position it implies. */
  position?: string;
}

export interface BalanceComparison {
  currency: number;
  ours: { available: string; frozen: string };
  gateway: { available: string; hold: string; frozen: string };
  /**
   * Gateway − books, apart (never netted): `available` against `agent_available`, `frozen`
   * (frozen + hold at the gateway) against `agent_frozen`.
   */
  differences: { available: string; frozen: string };
}

const ZERO = '0';
const d = (s: string | undefined | null): DecimalJs => new DecimalJs(s ?? ZERO);
const text = (x: DecimalJs): string => x.toFixed();
/** Money in a currency, written with its minor unit ("5.00"), or as exact as it is when longer. */
const money = (x: DecimalJs, currency: number | null): string => {
  const digits = currency === null ? null : minorUnits(currency);
  return digits === null || x.decimalPlaces() > digits ? x.toFixed() : x.toFixed(digits);
};

/** An account's balance per currency, as the ledger sums it. */
export interface AccountBalance {
  account: string;
  currency: number;
  balance: string;
}

/**
 * What the books say the agent shop holds, per currency: `agent_available` and `agent_frozen`.
 * In a single-shop setup (the payment shop is the agent shop) the gateway credits sales to that
 * same shop's available balance, so `available` is `agent_available + gateway_payment_shop`; and
 * it shows a payer's held funds (a two-step payment not yet charged or released) in that shop's
 * `hold`, so `frozen` also counts the invoices held now (`openHolds`, per currency). A hold is
 * not the shop's money and moves nothing in the books; it only explains the gateway's `hold`.
 */
export function agentBooks(
  balances: readonly AccountBalance[],
  singleShop: boolean,
  openHolds: ReadonlyMap<number, string> = new Map(),
): Map<number, { available: string; frozen: string }> {
  const sums = new Map<number, { available: DecimalJs; frozen: DecimalJs }>();
  const of = (c: number): { available: DecimalJs; frozen: DecimalJs } => {
    let o = sums.get(c);
    if (o === undefined) {
      o = { available: new DecimalJs(0), frozen: new DecimalJs(0) };
      sums.set(c, o);
    }
    return o;
  };
  for (const b of balances) {
    if (b.account === 'agent_available' || (singleShop && b.account === 'gateway_payment_shop')) {
      of(b.currency).available = of(b.currency).available.plus(b.balance);
    } else if (b.account === 'agent_frozen') {
      of(b.currency).frozen = of(b.currency).frozen.plus(b.balance);
    }
  }
  if (singleShop) {
    for (const [c, held] of openHolds) of(c).frozen = of(c).frozen.plus(held);
  }
  const out = new Map<number, { available: string; frozen: string }>();
  for (const [c, o] of sums) out.set(c, { available: text(o.available), frozen: text(o.frozen) });
  return out;
}

/**
 * Rule "the balance equation": per account, gateway − ours, where the gateway's side of
 * `agent_available` is its `available` and of `agent_frozen` its `frozen + hold`. What the
 * opening books (openingBalance) and what each reconciliation compares (compareBalances).
 */
export function balanceDifferences(
  gateway: { available: string; hold: string; frozen: string },
  ours: { available: string; frozen: string },
): { available: DecimalJs; frozen: DecimalJs; gatewayFrozen: DecimalJs } {
  const gatewayFrozen = d(gateway.frozen).plus(d(gateway.hold));
  return {
    available: d(gateway.available).minus(d(ours.available)),
    frozen: gatewayFrozen.minus(d(ours.frozen)),
    gatewayFrozen,
  };
}

/**
 * The opening of the agent shop's accounts in one currency: what the gateway holds (available;
 * frozen + hold) less what the books already hold for the agent shop as agentBooks counts it
 * (payouts sent before the books were opened; in a single-shop setup also the sales in
 * `gateway_payment_shop`, which are in the gateway's available already, and the payers' funds
 * held now, which are in its hold), so that the books and
 * the gateway start equal and the money is not opened twice.
 */
export function openingBalance(
  gateway: { available: string; hold: string; frozen: string },
  currency: number,
  books: readonly AccountBalance[],
  singleShop: boolean,
  openHolds: ReadonlyMap<number, string> = new Map(),
): { available: string; frozen: string } {
  const ours = agentBooks(books, singleShop, openHolds).get(currency) ?? {
    available: ZERO,
    frozen: ZERO,
  };
  const diff = balanceDifferences(gateway, ours);
  return {
    // Written with the currency's minor unit ("1000000.00"), as every other amount of the books.
    available: money(diff.available, currency),
    frozen: money(diff.frozen, currency),
  };
}

/**
 * Per currency of either side: the comparison, and an item for each account that differs
 * (available with available; frozen with frozen + hold).
 */
export function compareBalances(
  ours: ReadonlyMap<number, { available: string; frozen: string }>,
  gateway: ReadonlyMap<number, { available: string; hold: string; frozen: string }>,
): { balances: BalanceComparison[]; items: ReconciliationItem[] } {
  const currencies = [...new Set([...ours.keys(), ...gateway.keys()])].sort((a, b) => a - b);
  const balances: BalanceComparison[] = [];
  const items: ReconciliationItem[] = [];
  for (const currency of currencies) {
    const o = ours.get(currency) ?? { available: ZERO, frozen: ZERO };
    const g = gateway.get(currency) ?? { available: ZERO, hold: ZERO, frozen: ZERO };
    const {
      available: availableDiff,
      frozen: frozenDiff,
      gatewayFrozen: gFrozen,
    } = balanceDifferences(g, o);
    balances.push({
      currency,
      ours: { available: money(d(o.available), currency), frozen: money(d(o.frozen), currency) },
      gateway: {
        available: money(d(g.available), currency),
        hold: money(d(g.hold), currency),
        frozen: money(d(g.frozen), currency),
      },
      differences: {
        available: money(availableDiff, currency),
        frozen: money(frozenDiff, currency),
      },
    });
    if (!availableDiff.isZero()) {
      items.push({
        kind: 'balance',
        account: 'agent_available',
        currency,
        ours: money(d(o.available), currency),
        gateway: money(d(g.available), currency),
        amount: money(availableDiff, currency),
      });
    }
    if (!frozenDiff.isZero()) {
      items.push({
        kind: 'balance',
        account: 'agent_frozen',
        currency,
        ours: money(d(o.frozen), currency),
        gateway: money(gFrozen, currency),
        amount: money(frozenDiff, currency),
      });
    }
  }
  return { balances, items };
}

/**
 * What may explain an available-balance item when the payment shop is the agent shop: a
 * chargeback lowers the payment shop's balance at the gateway when it is reported, but the books
 * post it only when the dispute is recorded lost or accepted (`chargebacks` debited,
 * `gateway_payment_shop` credited). So a balance below ours while disputes are open, or before a
 * reported chargeback is recorded, is said in the item's attention reason; null when nothing
 * open could explain it. `openDisputes`: the sums of the disputes still open, per currency.
 */
export function chargebackHint(
  item: Pick<ReconciliationItem, 'kind' | 'account' | 'currency' | 'amount'>,
  openDisputes: ReadonlyMap<number, string>,
): string | null {
  if (item.kind !== 'balance' || item.account !== 'agent_available' || item.currency === null)
    return null;
  if (item.amount === undefined || !d(item.amount).isNegative()) return null;
  const open = openDisputes.get(item.currency);
  const short = money(d(item.amount).neg(), item.currency);
  if (open === undefined || d(open).isZero())
    return `a chargeback the gateway took (${short}) is booked once its dispute is recorded and resolved lost or accepted`;
  return `disputes open in ${item.currency}: ${money(d(open), item.currency)}; a chargeback the gateway took is booked when its dispute is resolved lost or accepted`;
}

/**
 * A stored comparison with its differences apart, worked out from its two sides (runs stored
 * before the differences were kept apart carry a netted `difference`, which is dropped).
 */
export function withDifferences(b: BalanceComparison & { difference?: string }): BalanceComparison {
  const { difference: _netted, ...rest } = b;
  const c = b.currency;
  return {
    ...rest,
    differences: {
      available: money(d(b.gateway.available).minus(d(b.ours.available)), c),
      frozen: money(d(b.gateway.frozen).plus(d(b.gateway.hold)).minus(d(b.ours.frozen)), c),
    },
  };
}

/**
 * One object against the gateway's record: its final status (a status only one side calls final,
 * or two different final statuses; two non-final statuses agree for now) and then its amount.
 */
export function compareObject(o: {
  objectType: 'invoice' | 'refund' | 'payout';
  objectId: string;
  currency: number | null;
  ours: { status: string; final: boolean; amount: string | null };
  gateway: { status: string; final: boolean; amount: string | null } | null;
}): ReconciliationItem[] {
  const base = { objectType: o.objectType, objectId: o.objectId, currency: o.currency };
  if (o.gateway === null) {
    return [{ ...base, kind: 'missing_gateway', ours: o.ours.status, gateway: null }];
  }
  const g = o.gateway;
  // A contradiction is a final status of ours the gateway does not share. Ours not final yet
  // while the gateway's is final is the object's own watch still to run (its poller or
  // reconciler settles it through its rule); the books show that lag as a balance item.
  if (o.ours.final && o.ours.status !== g.status) {
    return [{ ...base, kind: 'status', ours: o.ours.status, gateway: g.status }];
  }
  if (o.ours.amount !== null && g.amount !== null && !d(o.ours.amount).eq(d(g.amount))) {
    return [
      {
        ...base,
        kind: 'amount',
        ours: money(d(o.ours.amount), o.currency),
        gateway: money(d(g.amount), o.currency),
        amount: money(d(g.amount).minus(d(o.ours.amount)), o.currency),
      },
    ];
  }
  return [];
}

/** The sum of the absolute differences of a currency's balance items (the books_difference metric). */
export function absoluteDifference(items: readonly ReconciliationItem[], currency: number): string {
  return text(
    items
      .filter((i) => i.kind === 'balance' && i.currency === currency)
      .reduce((s, i) => s.plus(d(i.amount).abs()), new DecimalJs(0)),
  );
}
