import Decimal from 'decimal.js';
import type { RequestLogEntry } from '../../../src/sandbox/sandbox.state';
import { SHOP_ID, World } from './world';

/**
 * The service's books against the gateway's (the sandbox's memory), object by object and summed
 * per currency, for the objects a scenario made. What counts:
 *
 * - created twice: a create the gateway carried out more than once for one shop id (a create
 *   that did its work: answered `result: true`, or a fault that lets the operation run);
 * - re-sent: creates for an id the gateway already had (answered error 6): caught by the
 *   sandbox's duplicate check, which a gateway without one would not catch;
 * - lost: the gateway took the money (paid, refunded, paid out) and the service says otherwise
 *   without flagging it; wrong: the service says money moved and the gateway says it did not;
 * - unsettled: the service has no final status and no attention flag.
 */

export interface Tracked {
  invoices: Set<string>;
  refunds: Set<string>;
  payouts: Set<string>;
}

export const newTracked = (): Tracked => ({
  invoices: new Set(),
  refunds: new Set(),
  payouts: new Set(),
});

export interface Problem {
  kind: 'created_twice' | 'lost' | 'wrong' | 'unsettled';
  object: string;
  id: string;
  detail: string;
}

export interface Books {
  paid: Record<string, string>;
  refunded: Record<string, string>;
  paidOut: Record<string, string>;
}

export interface Reconciliation {
  objects: number;
  createdTwice: number;
  resent: number;
  lost: number;
  wrong: number;
  unsettled: number;
  flagged: number;
  /** Flagged objects whose status differs from the gateway's: why the books may differ. */
  flaggedApart: string[];
  problems: Problem[];
  service: Books;
  gateway: Books;
  booksEqual: boolean;
}

/** The gateway did the work: a success answer, or the nonfatal fault's code 100 (done, answer failed). */
function performed(r: RequestLogEntry): boolean {
  return r.result === true || (r.fault === 'nonfatal' && r.error_code === 100);
}

const CREATE_PATHS: Record<string, { object: string; key: string }> = {
  'invoice/create': { object: 'invoice', key: 'shop_order_id' },
  'invoice/hold': { object: 'invoice', key: 'shop_order_id' },
  'invoice/create-refund': { object: 'refund', key: 'shop_refund_id' },
  'withdraw/create': { object: 'payout', key: 'shop_payment_id' },
};

function add(book: Record<string, Decimal>, currency: number | string, amount: string): void {
  const k = String(currency);
  book[k] = (book[k] ?? new Decimal(0)).plus(new Decimal(amount));
}

const text = (book: Record<string, Decimal>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(book)
      .sort()
      .map(([k, v]) => [k, v.toFixed(2)]),
  );

const flaggedRow = (r: Record<string, unknown>): boolean =>
  r.needs_attention === true || r.status === 'needs_attention';

export async function reconcile(world: World, tracked: Tracked): Promise<Reconciliation> {
  const problems: Problem[] = [];
  const state = world.sandbox.state;

  // Creates the gateway carried out, per shop id.
  const done = new Map<string, number>();
  let resent = 0;
  for (const r of state.requests) {
    const spec = CREATE_PATHS[r.path];
    if (!spec) continue;
    const id = String((r.body as Record<string, unknown>)[spec.key]);
    if (r.error_code === 6) resent += 1;
    if (performed(r)) done.set(`${spec.object}:${id}`, (done.get(`${spec.object}:${id}`) ?? 0) + 1);
  }
  for (const [key, n] of done) {
    if (n < 2) continue;
    const [object, id] = key.split(/:(.*)/s);
    if (
      (object === 'invoice' && tracked.invoices.has(id)) ||
      (object === 'refund' && tracked.refunds.has(id)) ||
      (object === 'payout' && tracked.payouts.has(id))
    )
      problems.push({ kind: 'created_twice', object, id, detail: `${n} creates carried out` });
  }

  const sPaid: Record<string, Decimal> = {};
  const sRefunded: Record<string, Decimal> = {};
  const sPaidOut: Record<string, Decimal> = {};
  const gPaid: Record<string, Decimal> = {};
  const gRefunded: Record<string, Decimal> = {};
  const gPaidOut: Record<string, Decimal> = {};
  let flagged = 0;
  const flaggedApart: string[] = [];

  const invoices = await world.query<Record<string, unknown>>(
    `SELECT *, amount::text AS amount_text FROM invoices WHERE shop_order_id = ANY($1)`,
    [[...tracked.invoices]],
  );
  const invoiceRows = new Map(invoices.map((r) => [String(r.shop_order_id), r]));
  for (const id of tracked.invoices) {
    const row = invoiceRows.get(id);
    const g = state.findInvoiceByOrder(SHOP_ID, id);
    const gPaidNow = g !== undefined && g.status === 4;
    if (gPaidNow) add(gPaid, g.currency, g.amount.toString());
    if (row === undefined) {
      if (gPaidNow)
        problems.push({
          kind: 'lost',
          object: 'invoice',
          id,
          detail: 'paid at the gateway, no row',
        });
      continue;
    }
    const status = String(row.status);
    const flag = flaggedRow(row);
    if (flag) flagged += 1;
    if (status === 'succeeded') add(sPaid, Number(row.currency), String(row.amount_text));
    if (gPaidNow && status !== 'succeeded' && flag)
      flaggedApart.push(
        `invoice ${id}: ${status}, paid at the gateway; flagged ${String(row.attention_reason ?? '')}; gateway message ${String(row.gateway_message ?? '-')}`,
      );
    if (gPaidNow && status !== 'succeeded' && !flag)
      problems.push({
        kind: 'lost',
        object: 'invoice',
        id,
        detail: `paid at the gateway, service says ${status}`,
      });
    if (!gPaidNow && status === 'succeeded')
      problems.push({
        kind: 'wrong',
        object: 'invoice',
        id,
        detail: `service says succeeded, gateway says ${g?.status ?? 'absent'}`,
      });
    const heldBoth = status === 'held' && g?.status === 8;
    if (!['succeeded', 'rejected', 'unheld'].includes(status) && !flag && !heldBoth)
      problems.push({
        kind: 'unsettled',
        object: 'invoice',
        id,
        detail: `service says ${status}, gateway ${g?.status ?? 'absent'}`,
      });
  }

  const refunds = await world.query<Record<string, unknown>>(
    `SELECT *, amount::text AS amount_text FROM refunds WHERE shop_refund_id = ANY($1)`,
    [[...tracked.refunds]],
  );
  const refundRows = new Map(refunds.map((r) => [String(r.shop_refund_id), r]));
  for (const id of tracked.refunds) {
    const row = refundRows.get(id);
    const g = state.refunds.get(id);
    const gDone = g !== undefined && g.status === 'SUCCESS';
    if (gDone) add(gRefunded, g.currency, g.amount.toString());
    if (row === undefined) {
      if (gDone)
        problems.push({
          kind: 'lost',
          object: 'refund',
          id,
          detail: 'refunded at the gateway, no row',
        });
      continue;
    }
    const status = String(row.status);
    const flag = flaggedRow(row);
    if (flag) flagged += 1;
    if (status === 'SUCCESS') add(sRefunded, Number(row.currency), String(row.amount_text));
    if (gDone && status !== 'SUCCESS' && flag)
      flaggedApart.push(
        `refund ${id}: ${status}, refunded at the gateway; flagged ${String(row.attention_reason ?? '')}; gateway message ${String(row.gateway_message ?? '-')}`,
      );
    if (gDone && status !== 'SUCCESS' && !flag)
      problems.push({
        kind: 'lost',
        object: 'refund',
        id,
        detail: `refunded at the gateway, service says ${status}`,
      });
    if (!gDone && status === 'SUCCESS')
      problems.push({
        kind: 'wrong',
        object: 'refund',
        id,
        detail: `service says SUCCESS, gateway says ${g?.status ?? 'absent'}`,
      });
    if (status === 'WAITING' && !flag)
      problems.push({
        kind: 'unsettled',
        object: 'refund',
        id,
        detail: `service says WAITING (${String(row.submit_state)}), gateway ${g?.status ?? 'absent'}`,
      });
  }

  const payouts = await world.query<Record<string, unknown>>(
    `SELECT *, amount::text AS amount_text FROM payouts WHERE shop_payment_id = ANY($1)`,
    [[...tracked.payouts]],
  );
  const payoutRows = new Map(payouts.map((r) => [String(r.shop_payment_id), r]));
  for (const id of tracked.payouts) {
    const row = payoutRows.get(id);
    const g = state.findPayoutByShopPaymentId(SHOP_ID, id);
    const gDone = g !== undefined && g.status === 5;
    if (gDone) add(gPaidOut, g.shopCurrency, g.amount.toString());
    if (row === undefined) {
      if (gDone)
        problems.push({
          kind: 'lost',
          object: 'payout',
          id,
          detail: 'paid out at the gateway, no row',
        });
      continue;
    }
    const status = String(row.status);
    const flag = flaggedRow(row);
    if (flag) flagged += 1;
    if (status === 'succeeded') add(sPaidOut, Number(row.shop_currency), String(row.amount_text));
    if (gDone && status !== 'succeeded' && flag)
      flaggedApart.push(
        `payout ${id}: ${status}, paid at the gateway; flagged ${String(row.attention_reason ?? '')}; ${String(row.create_attempts)} creates, last error ${String(row.last_error ?? '-')}`,
      );
    if (gDone && status !== 'succeeded' && !flag)
      problems.push({
        kind: 'lost',
        object: 'payout',
        id,
        detail: `paid out at the gateway, service says ${status}`,
      });
    if (!gDone && status === 'succeeded')
      problems.push({
        kind: 'wrong',
        object: 'payout',
        id,
        detail: `service says succeeded, gateway says ${g?.status ?? 'absent'}`,
      });
    if (!['succeeded', 'failed', 'rejected'].includes(status) && !flag)
      problems.push({
        kind: 'unsettled',
        object: 'payout',
        id,
        detail: `service says ${status}, gateway ${g?.status ?? 'absent'}`,
      });
  }

  const service = { paid: text(sPaid), refunded: text(sRefunded), paidOut: text(sPaidOut) };
  const gateway = { paid: text(gPaid), refunded: text(gRefunded), paidOut: text(gPaidOut) };
  const count = (k: Problem['kind']): number => problems.filter((p) => p.kind === k).length;
  return {
    objects: tracked.invoices.size + tracked.refunds.size + tracked.payouts.size,
    createdTwice: count('created_twice'),
    resent,
    lost: count('lost'),
    wrong: count('wrong'),
    unsettled: count('unsettled'),
    flagged,
    flaggedApart,
    problems,
    service,
    gateway,
    booksEqual: JSON.stringify(service) === JSON.stringify(gateway),
  };
}

export const booksText = (b: Books): string =>
  (['paid', 'refunded', 'paidOut'] as const)
    .map(
      (k) =>
        `${k} ${
          Object.entries(b[k])
            .map(([c, v]) => `${v} (${c})`)
            .join(', ') || '0'
        }`,
    )
    .join('; ');

/** Waits until nothing is unsettled (or the time is up); returns the last reconciliation. */
export async function settle(
  world: World,
  tracked: Tracked,
  timeoutMs: number,
): Promise<Reconciliation> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await reconcile(world, tracked);
    // The books too: a flagged object counts as settled, yet one flagged at its watch deadline is
    // still watched, and a late payment to it lands a moment after the gateway has it (and the
    // service's rows are read before the gateway's memory). A difference that lasts until the
    // end fails the scenario.
    if ((r.unsettled === 0 && r.lost === 0 && r.wrong === 0 && r.booksEqual) || Date.now() > end)
      return r;
    await new Promise((res) => setTimeout(res, 1000));
  }
}
