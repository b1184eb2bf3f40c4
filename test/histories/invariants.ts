import Decimal from 'decimal.js';
import type { SandboxHandle } from '../../src/sandbox/sandbox.server';

/**
 * The invariants of the books ("Books that cannot drift"), checked from the outside: the service
 * through its HTTP API (the objects, their ledger entries, the balances, the event feed, and
 * `GET /admin/ledger/check` when it exists), the gateway through the sandbox's memory. Usable by
 * any suite that has a running service and its sandbox: give it an `InvariantWorld` and the ids
 * of the objects the suite made.
 *
 * The position of an object is computed here from the contract's chart (docs/api.md, "Books"),
 * an oracle independent of the service's posting: invoice `succeeded` = its amount in
 * `gateway_payment_shop` against `sales`; refund `SUCCESS` = its amount back; payout sent and not
 * final = its write-off in `agent_frozen` out of `agent_available`; `succeeded` = the write-off
 * out of `agent_available` into `payouts_paid` (payee receive) and `payout_fees` (the rest);
 * every other state = nothing. Money is decimal.js throughout, never a float.
 */

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export interface InvariantWorld {
  /** A call with an admin key, e.g. `admin('GET', '/api/v1/admin/ledger/balances')`. */
  admin(method: string, path: string, body?: unknown): Promise<Answer>;
  /** A call with a shop key that reads every object type (the feed, the objects). */
  api(method: string, path: string, body?: unknown): Promise<Answer>;
  sandbox: Pick<SandboxHandle, 'state'>;
  paymentShopId: number;
  agentShopId: number;
}

export interface TrackedObjects {
  invoices: Iterable<string>;
  /** shopRefundId → the shopOrderId of its invoice. */
  refunds: Iterable<[string, string]>;
  payouts: Iterable<string>;
  /**
   * Dispute id → its invoice, and whether the gateway holds its chargeback now (took it and did
   * not give it back).
   */
  disputes?: Iterable<readonly [string, { invoice: string; taken: boolean }]>;
  /**
   * Invoices whose refunds an operator corrected (Accept): such a correction may count more than
   * was paid until the gateway's books are looked at, so the cap is not held against them.
   */
  corrected?: ReadonlySet<string>;
}

export interface Violation {
  invariant: 'position' | 'ledger-check' | 'books' | 'gateway' | 'settled' | 'events' | 'cap';
  object?: string;
  detail: string;
}

/** account/currency → amount (debit positive). */
export type Position = Map<string, Decimal>;

const key = (account: string, currency: number | string): string => `${account}/${currency}`;

function add(p: Position, account: string, currency: number | string, amount: Decimal.Value): void {
  const k = key(account, currency);
  const v = (p.get(k) ?? new Decimal(0)).plus(amount);
  if (v.isZero()) p.delete(k);
  else p.set(k, v);
}

function minus(a: Position, b: Position): Position {
  const out: Position = new Map(a);
  for (const [k, v] of b) {
    const n = (out.get(k) ?? new Decimal(0)).minus(v);
    if (n.isZero()) out.delete(k);
    else out.set(k, n);
  }
  return out;
}

export function positionText(p: Position): string {
  if (p.size === 0) return 'nothing';
  return [...p.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
}

const samePosition = (a: Position, b: Position): boolean => minus(a, b).size === 0;

// ---- The oracle: the position each state implies (docs/api.md's chart). ----

export function invoicePosition(status: string, amount: string, currency: number): Position {
  const p: Position = new Map();
  if (status === 'succeeded') {
    add(p, 'gateway_payment_shop', currency, amount);
    add(p, 'sales', currency, new Decimal(amount).neg());
  }
  return p;
}

export function refundPosition(status: string, amount: string, currency: number): Position {
  const p: Position = new Map();
  if (status === 'SUCCESS') {
    add(p, 'sales', currency, amount);
    add(p, 'gateway_payment_shop', currency, new Decimal(amount).neg());
  }
  return p;
}

/** A dispute lost or accepted is a chargeback: its amount in `chargebacks`, out of the payment shop. */
export function disputePosition(status: string, amount: string, currency: number): Position {
  const p: Position = new Map();
  if (status === 'lost' || status === 'accepted') {
    add(p, 'chargebacks', currency, amount);
    add(p, 'gateway_payment_shop', currency, new Decimal(amount).neg());
  }
  return p;
}

export interface PayoutFacts {
  status: string;
  writeOff: string | null;
  payeeReceive: string | null;
  shopCurrency: number;
  psCurrency: number | null;
  /** Whether its create may have reached the gateway (sent, also with the answer lost). */
  sent: boolean;
}

const FINAL_FAILED_PAYOUT = new Set(['failed', 'rejected', 'cancelled']);

export function payoutPosition(f: PayoutFacts): Position {
  const p: Position = new Map();
  if (f.writeOff === null || f.status === 'awaiting_approval') return p;
  if (FINAL_FAILED_PAYOUT.has(f.status)) return p;
  const c = f.shopCurrency;
  const w = new Decimal(f.writeOff);
  if (f.status === 'succeeded') {
    add(p, 'agent_available', c, w.neg());
    const same = f.psCurrency === null || f.psCurrency === c;
    if (same && f.payeeReceive !== null && new Decimal(f.payeeReceive).lte(w)) {
      add(p, 'payouts_paid', c, f.payeeReceive);
      add(p, 'payout_fees', c, w.minus(f.payeeReceive));
    } else add(p, 'payouts_paid', c, w);
    return p;
  }
  // pending, processing, unknown, needs_attention: frozen once the create may have been sent.
  if (f.sent) {
    add(p, 'agent_frozen', c, w);
    add(p, 'agent_available', c, w.neg());
  }
  return p;
}

// ---- What the gateway's record implies, in the same chart. ----

const SANDBOX_INVOICE_PAID = 4;
const SANDBOX_PAYOUT = { NEW: 1, SENT: 3, SUCCESS: 5 } as const;

// ---- Reading the service. ----

async function entriesPosition(
  w: InvariantWorld,
  objectType: string,
  objectId: string,
): Promise<{ position: Position; kinds: string[] } | string> {
  const position: Position = new Map();
  const kinds: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const q = new URLSearchParams({ objectType, objectId, limit: '500' });
    if (cursor !== null) q.set('cursor', cursor);
    const res = await w.admin('GET', `/api/v1/admin/ledger/entries?${q.toString()}`);
    if (res.status !== 200) return `entries of ${objectType} ${objectId}: HTTP ${res.status}`;
    const items = res.body.items as Array<{
      kind: string;
      postings: Array<{ account: string; currency: number; amount: string }>;
    }>;
    for (const e of items) {
      kinds.push(e.kind);
      for (const leg of e.postings) add(position, leg.account, leg.currency, leg.amount);
    }
    cursor = (res.body.nextCursor as string | null) ?? null;
    if (cursor === null) break;
  }
  return { position, kinds };
}

interface ObjectReport {
  label: string;
  objectType: 'invoice' | 'refund' | 'payout' | 'dispute';
  id: string;
  status: string;
  flagged: boolean;
  /** The object is final (or in a state that waits for someone by design). */
  settled: boolean;
  ours: Position;
  posted: Position;
  gateway: Position;
  /** The gateway's record says money moved to the shop or the payee (paid, refunded, paid out). */
  gatewayPaid: boolean;
  gatewayText: string;
}

const FINAL_INVOICE = new Set(['succeeded', 'rejected', 'unheld', 'expired']);
const FINAL_REFUND = new Set(['SUCCESS', 'FAILED']);
const FINAL_PAYOUT = new Set(['succeeded', 'failed', 'rejected', 'cancelled']);

/** Creates of a payout that reached the gateway (its request log), done or not. */
function payoutCreateReached(w: InvariantWorld, shopPaymentId: string): boolean {
  return w.sandbox.state.requests.some(
    (r) =>
      r.path === 'withdraw/create' &&
      (r.body as Record<string, unknown> | null)?.shop_payment_id === shopPaymentId,
  );
}

async function readInvoice(w: InvariantWorld, id: string): Promise<ObjectReport | string> {
  const res = await w.api('GET', `/api/v1/invoices/${encodeURIComponent(id)}`);
  const g = w.sandbox.state.findInvoiceByOrder(w.paymentShopId, id);
  if (res.status === 404) {
    // Never stored: the gateway must have nothing paid for it either.
    const gatewayPaid = g?.status === SANDBOX_INVOICE_PAID;
    const gateway = gatewayPaid
      ? invoicePosition('succeeded', g.amount.toString(), g.currency)
      : new Map<string, Decimal>();
    return {
      label: `invoice ${id}`,
      objectType: 'invoice',
      id,
      status: 'absent',
      flagged: false,
      settled: true,
      ours: new Map(),
      posted: new Map(),
      gateway,
      gatewayPaid,
      gatewayText: g ? String(g.status) : 'absent',
    };
  }
  if (res.status !== 200) return `invoice ${id}: HTTP ${res.status}`;
  const b = res.body;
  const status = String(b.status);
  const amount = String(b.amount);
  const currency = Number(b.currency);
  const entries = await entriesPosition(w, 'invoice', id);
  if (typeof entries === 'string') return entries;
  const gatewayPaid = g?.status === SANDBOX_INVOICE_PAID;
  return {
    label: `invoice ${id}`,
    objectType: 'invoice',
    id,
    status,
    flagged: b.needsAttention === true,
    // A hold both sides still hold waits for the shop's charge or unhold by design, and an
    // invoice both sides say awaits its payer waits for the payer.
    settled:
      FINAL_INVOICE.has(status) ||
      (status === 'held' && g?.status === 8) ||
      ((status === 'created' || status === 'awaiting_payer') &&
        (g?.status === 1 || g?.status === 2)),
    ours: invoicePosition(status, amount, currency),
    posted: entries.position,
    gateway: gatewayPaid
      ? invoicePosition('succeeded', g.amount.toString(), g.currency)
      : new Map(),
    gatewayPaid,
    gatewayText: g ? String(g.status) : 'absent',
  };
}

async function readRefunds(
  w: InvariantWorld,
  invoiceId: string,
): Promise<Map<string, Record<string, unknown>> | string> {
  const res = await w.api('GET', `/api/v1/invoices/${encodeURIComponent(invoiceId)}/refunds`);
  if (res.status === 404) return new Map();
  if (res.status !== 200) return `refunds of ${invoiceId}: HTTP ${res.status}`;
  const items = (Array.isArray(res.body) ? res.body : (res.body.items ?? [])) as Array<
    Record<string, unknown>
  >;
  return new Map(items.map((r) => [String(r.shopRefundId), r]));
}

async function readRefund(
  w: InvariantWorld,
  id: string,
  row: Record<string, unknown> | undefined,
): Promise<ObjectReport | string> {
  const g = w.sandbox.state.refunds.get(id);
  const gatewayPaid = g?.status === 'SUCCESS';
  const gateway = gatewayPaid
    ? refundPosition('SUCCESS', g.amount.toString(), g.currency)
    : new Map<string, Decimal>();
  if (row === undefined)
    return {
      label: `refund ${id}`,
      objectType: 'refund',
      id,
      status: 'absent',
      flagged: false,
      settled: true,
      ours: new Map(),
      posted: new Map(),
      gateway,
      gatewayPaid,
      gatewayText: g?.status ?? 'absent',
    };
  const status = String(row.status);
  const entries = await entriesPosition(w, 'refund', id);
  if (typeof entries === 'string') return entries;
  return {
    label: `refund ${id}`,
    objectType: 'refund',
    id,
    status,
    flagged: row.needsAttention === true,
    settled: FINAL_REFUND.has(status),
    ours: refundPosition(status, String(row.amount), Number(row.currency)),
    posted: entries.position,
    gateway,
    gatewayPaid,
    gatewayText: g?.status ?? 'absent',
  };
}

async function readPayout(w: InvariantWorld, id: string): Promise<ObjectReport | string> {
  const res = await w.api('GET', `/api/v1/payouts/${encodeURIComponent(id)}`);
  const g = w.sandbox.state.findPayoutByShopPaymentId(w.agentShopId, id);
  const gatewayFacts = (status: string): PayoutFacts | null =>
    g === undefined
      ? null
      : {
          status,
          writeOff: g.shopWriteOff.toString(),
          payeeReceive: g.payeeReceive.toString(),
          shopCurrency: g.shopCurrency,
          psCurrency: g.psCurrency,
          sent: true,
        };
  const gStatus =
    g === undefined
      ? 'absent'
      : g.status === SANDBOX_PAYOUT.SUCCESS
        ? 'succeeded'
        : g.status === SANDBOX_PAYOUT.SENT || g.status === SANDBOX_PAYOUT.NEW
          ? 'processing'
          : 'failed';
  const gf = gatewayFacts(gStatus);
  const gateway = gf === null ? new Map<string, Decimal>() : payoutPosition(gf);
  const gatewayPaid = g?.status === SANDBOX_PAYOUT.SUCCESS;
  if (res.status === 404)
    return {
      label: `payout ${id}`,
      objectType: 'payout',
      id,
      status: 'absent',
      flagged: false,
      settled: true,
      ours: new Map(),
      posted: new Map(),
      gateway,
      gatewayPaid,
      gatewayText: g ? String(g.status) : 'absent',
    };
  if (res.status !== 200) return `payout ${id}: HTTP ${res.status}`;
  const b = res.body;
  const status = String(b.status);
  const entries = await entriesPosition(w, 'payout', id);
  if (typeof entries === 'string') return entries;
  const ours = payoutPosition({
    status,
    writeOff: (b.shopWriteOff as string | null) ?? g?.shopWriteOff.toString() ?? null,
    payeeReceive: (b.payeeReceive as string | null) ?? g?.payeeReceive.toString() ?? null,
    shopCurrency: Number(b.shopCurrency),
    psCurrency: b.psCurrency === null || b.psCurrency === undefined ? null : Number(b.psCurrency),
    sent: b.withdrawId !== null || payoutCreateReached(w, id),
  });
  return {
    label: `payout ${id}`,
    objectType: 'payout',
    id,
    status,
    flagged: b.needsAttention === true || status === 'needs_attention',
    // Waiting for an admin's approval is a wait for a person by design.
    settled: FINAL_PAYOUT.has(status) || status === 'awaiting_approval',
    ours,
    posted: entries.position,
    gateway,
    gatewayPaid,
    gatewayText: g ? String(g.status) : 'absent',
  };
}

/** An invoice's disputes as the admin list gives them, by id. */
async function readDisputes(
  w: InvariantWorld,
  invoiceId: string,
): Promise<Map<string, Record<string, unknown>> | string> {
  const res = await w.admin(
    'GET',
    `/api/v1/admin/disputes?shopOrderId=${encodeURIComponent(invoiceId)}&limit=500`,
  );
  if (res.status !== 200) return `disputes of ${invoiceId}: HTTP ${res.status}`;
  const items = (res.body.items ?? []) as Array<Record<string, unknown>>;
  return new Map(items.map((d) => [String(d.id), d]));
}

/**
 * A dispute: its entries against the chart's position of its status; the gateway's side is the
 * chargeback it holds now. An open dispute waits for the gateway's decision (an operator's) by
 * design: what its chargeback moved at the gateway is explained, as a flagged object's is.
 */
async function readDispute(
  w: InvariantWorld,
  id: string,
  row: Record<string, unknown> | undefined,
  taken: boolean,
): Promise<ObjectReport | string> {
  if (row === undefined) return `dispute ${id}: not listed`;
  const status = String(row.status);
  const amount = String(row.amount);
  const currency = Number(row.currency);
  const entries = await entriesPosition(w, 'dispute', id);
  if (typeof entries === 'string') return entries;
  return {
    label: `dispute ${id}`,
    objectType: 'dispute',
    id,
    status,
    flagged: status === 'open',
    settled: true,
    ours: disputePosition(status, amount, currency),
    posted: entries.position,
    gateway: taken ? disputePosition('lost', amount, currency) : new Map(),
    gatewayPaid: false,
    gatewayText: taken ? 'chargeback taken' : 'no chargeback',
  };
}

/** Every event of the feed, in commit order (the shop key sees every object type). */
async function readFeed(w: InvariantWorld): Promise<Array<Record<string, unknown>> | string> {
  const all: Array<Record<string, unknown>> = [];
  let after: string | null = null;
  for (let page = 0; page < 200; page++) {
    const q = new URLSearchParams({ limit: '500' });
    if (after !== null) q.set('after', after);
    const res = await w.api('GET', `/api/v1/events?${q.toString()}`);
    if (res.status !== 200) return `the event feed: HTTP ${res.status}`;
    const items = res.body.items as Array<Record<string, unknown>>;
    all.push(...items);
    const next = (res.body.nextCursor as string | null) ?? null;
    if (items.length === 0 || next === null || next === after) break;
    after = next;
  }
  return all;
}

const FAILURE_EVENTS: Record<string, readonly string[]> = {
  invoice: ['invoice.rejected'],
  refund: ['refund.failed'],
  payout: ['payout.failed', 'payout.rejected', 'payout.cancelled'],
  dispute: [],
};
const NOT_A_STATUS =
  /\.(attention_raised|attention_resolved|refund_updated|hold_expiring|hold_updated)$/;
const eventOfStatus = (objectType: string, status: string): string =>
  objectType === 'dispute' && status === 'open'
    ? 'dispute.opened'
    : `${objectType}.${status.toLowerCase()}`;

export interface InvariantOptions {
  /**
   * After the settle phase: also require every object final or flagged, every final unflagged
   * object to agree with the gateway, and the books to equal the gateway's balances. Before
   * it (mid-history), only what must hold at every moment is checked.
   */
  settled: boolean;
}

export interface InvariantReport {
  violations: Violation[];
  /** `GET /admin/ledger/check` was answered (it does not exist before posting by position). */
  ledgerCheck: 'checked' | 'absent';
  objects: number;
}

/** Checks invariants 1–5 over the tracked objects; the violations, none when healthy. */
export async function checkInvariants(
  w: InvariantWorld,
  tracked: TrackedObjects,
  opts: InvariantOptions,
): Promise<InvariantReport> {
  const violations: Violation[] = [];
  const reports: ObjectReport[] = [];
  const fail = (v: Violation): void => {
    violations.push(v);
  };
  for (const id of tracked.invoices) {
    const r = await readInvoice(w, id);
    if (typeof r === 'string') fail({ invariant: 'position', object: `invoice ${id}`, detail: r });
    else reports.push(r);
  }
  const byInvoice = new Map<string, string[]>();
  for (const [refundId, invoiceId] of tracked.refunds)
    byInvoice.set(invoiceId, [...(byInvoice.get(invoiceId) ?? []), refundId]);
  for (const [invoiceId, refundIds] of byInvoice) {
    const rows = await readRefunds(w, invoiceId);
    if (typeof rows === 'string') {
      fail({ invariant: 'position', object: `invoice ${invoiceId}`, detail: rows });
      continue;
    }
    for (const id of refundIds) {
      const r = await readRefund(w, id, rows.get(id));
      if (typeof r === 'string') fail({ invariant: 'position', object: `refund ${id}`, detail: r });
      else reports.push(r);
    }
  }
  for (const id of tracked.payouts) {
    const r = await readPayout(w, id);
    if (typeof r === 'string') fail({ invariant: 'position', object: `payout ${id}`, detail: r });
    else reports.push(r);
  }
  const disputesByInvoice = new Map<string, Array<[string, boolean]>>();
  for (const [id, d] of tracked.disputes ?? [])
    disputesByInvoice.set(d.invoice, [...(disputesByInvoice.get(d.invoice) ?? []), [id, d.taken]]);
  for (const [invoiceId, ids] of disputesByInvoice) {
    const rows = await readDisputes(w, invoiceId);
    if (typeof rows === 'string') {
      fail({ invariant: 'position', object: `invoice ${invoiceId}`, detail: rows });
      continue;
    }
    for (const [id, taken] of ids) {
      const r = await readDispute(w, id, rows.get(id), taken);
      if (typeof r === 'string') fail({ invariant: 'position', object: `dispute ${id}`, detail: r });
      else reports.push(r);
    }
  }

  // 6. The refund cap with disputes: for a paid invoice, the refunds not FAILED and the disputes
  // open, lost or accepted never exceed the amount, and the invoice's disputedAmount is the sum
  // of those disputes.
  const capInvoices = new Set([...byInvoice.keys(), ...disputesByInvoice.keys()]);
  for (const invoiceId of capInvoices) {
    const inv = await w.api('GET', `/api/v1/invoices/${encodeURIComponent(invoiceId)}`);
    if (inv.status !== 200) continue;
    const refunds = await readRefunds(w, invoiceId);
    const disputes = await readDisputes(w, invoiceId);
    if (typeof refunds === 'string' || typeof disputes === 'string') continue;
    const sum = (rows: Iterable<Record<string, unknown>>, counts: (s: string) => boolean): Decimal =>
      [...rows]
        .filter((r) => counts(String(r.status)))
        .reduce((acc, r) => acc.plus(String(r.amount)), new Decimal(0));
    const refunded = sum(refunds.values(), (st) => st !== 'FAILED');
    const disputed = sum(disputes.values(), (st) => st === 'open' || st === 'lost' || st === 'accepted');
    if (!disputed.eq(String(inv.body.disputedAmount ?? '0')))
      fail({
        invariant: 'cap',
        object: `invoice ${invoiceId}`,
        detail: `disputedAmount ${String(inv.body.disputedAmount)}, its disputes open, lost or accepted ${disputed.toFixed(2)}`,
      });
    if (
      inv.body.status === 'succeeded' &&
      !(tracked.corrected?.has(invoiceId) ?? false) &&
      refunded.plus(disputed).gt(String(inv.body.amount))
    )
      fail({
        invariant: 'cap',
        object: `invoice ${invoiceId}`,
        detail: `refunds not FAILED ${refunded.toFixed(2)} + disputes ${disputed.toFixed(2)} above the paid ${String(inv.body.amount)}`,
      });
  }

  // 1. Every object's entries sum to the position its state implies.
  for (const r of reports) {
    if (!samePosition(r.posted, r.ours))
      fail({
        invariant: 'position',
        object: r.label,
        detail: `${r.status}${r.flagged ? ' (flagged)' : ''}: posted ${positionText(r.posted)}; its state implies ${positionText(r.ours)}`,
      });
  }
  // 1b. The service's own check, once it exists: empty when healthy.
  let ledgerCheck: InvariantReport['ledgerCheck'] = 'absent';
  const check = await w.admin('GET', '/api/v1/admin/ledger/check');
  if (check.status === 200) {
    ledgerCheck = 'checked';
    const mismatches = (check.body.mismatches ?? []) as Array<Record<string, unknown>>;
    for (const m of mismatches)
      fail({
        invariant: 'ledger-check',
        object: `${String(m.objectType)} ${String(m.objectId)}`,
        detail: `GET /admin/ledger/check lists it: ${JSON.stringify(m)}`,
      });
  } else if (check.status !== 404) {
    fail({ invariant: 'ledger-check', detail: `GET /admin/ledger/check: HTTP ${check.status}` });
  }

  // 3. The gateway never holds two payouts for one shop payment id, nor refunds more than paid.
  const state = w.sandbox.state;
  const payoutIds = new Map<string, number>();
  for (const p of state.payouts.values()) {
    const k = `${p.shopId}/${p.shopPaymentId}`;
    payoutIds.set(k, (payoutIds.get(k) ?? 0) + 1);
  }
  for (const [k, n] of payoutIds)
    if (n > 1)
      fail({ invariant: 'gateway', object: `payout ${k}`, detail: `${n} payouts at the gateway` });
  for (const inv of state.invoices.values()) {
    const committed = state.committedRefunds(inv.id);
    if (committed.compare(inv.amount) > 0)
      fail({
        invariant: 'gateway',
        object: `invoice ${inv.shopOrderId}`,
        detail: `refunds not FAILED ${committed.toString()} above the paid ${inv.amount.toString()}`,
      });
  }

  // 5. Events: gap-free per object, in the feed, and never a failure for money the gateway paid.
  const feed = await readFeed(w);
  if (typeof feed === 'string') fail({ invariant: 'events', detail: feed });
  else {
    const byObject = new Map<string, Array<Record<string, unknown>>>();
    for (const e of feed) {
      const k = `${String(e.objectType)} ${String(e.objectId)}`;
      byObject.set(k, [...(byObject.get(k) ?? []), e]);
    }
    for (const r of reports) {
      if (r.status === 'absent') continue;
      const events = byObject.get(r.label) ?? [];
      const seqs = events.map((e) => Number(e.sequence)).sort((a, b) => a - b);
      const gap = seqs.findIndex((s, i) => s !== i + 1);
      if (seqs.length === 0)
        fail({ invariant: 'events', object: r.label, detail: 'no event in the feed' });
      else if (gap >= 0)
        fail({
          invariant: 'events',
          object: r.label,
          detail: `sequences ${seqs.join(',')} are not 1..${seqs.length}`,
        });
      const statusEvents = events.map((e) => String(e.type)).filter((t) => !NOT_A_STATUS.test(t));
      if (
        opts.settled &&
        r.settled &&
        r.status !== 'held' &&
        r.status !== 'awaiting_approval' &&
        statusEvents[statusEvents.length - 1] !== eventOfStatus(r.objectType, r.status)
      )
        fail({
          invariant: 'events',
          object: r.label,
          detail: `status ${r.status}, its last status event is ${statusEvents[statusEvents.length - 1] ?? 'none'}`,
        });
      if (r.gatewayPaid) {
        const claimed = statusEvents.filter((t) => FAILURE_EVENTS[r.objectType].includes(t));
        if (claimed.length > 0)
          fail({
            invariant: 'events',
            object: r.label,
            detail: `the gateway paid it (${r.gatewayText}), the shop was told ${claimed.join(', ')}`,
          });
      }
    }
  }

  if (!opts.settled) return { violations, ledgerCheck, objects: reports.length };

  // 4. Every object final or flagged; a final object nobody is told about agrees with the gateway.
  for (const r of reports) {
    if (!r.settled && !r.flagged)
      fail({
        invariant: 'settled',
        object: r.label,
        detail: `${r.status}, not final and not flagged (gateway ${r.gatewayText})`,
      });
    if (r.settled && !r.flagged && !samePosition(r.ours, r.gateway))
      fail({
        invariant: 'settled',
        object: r.label,
        detail: `${r.status}, unflagged, implies ${positionText(r.ours)}; the gateway's record (${r.gatewayText}) implies ${positionText(r.gateway)}`,
      });
  }

  // 2. The books equal the gateway's balances, but for what flagged objects explain.
  const balances = await w.admin('GET', '/api/v1/admin/ledger/balances');
  if (balances.status !== 200) {
    fail({ invariant: 'books', detail: `GET /admin/ledger/balances: HTTP ${balances.status}` });
    return { violations, ledgerCheck, objects: reports.length };
  }
  const books: Position = new Map();
  for (const b of balances.body.balances as Array<{
    account: string;
    currency: number;
    balance: string;
  }>)
    add(books, b.account, b.currency, b.balance);
  let explained: Position = new Map();
  for (const r of reports) if (r.flagged) explained = minus(explained, minus(r.gateway, r.posted));
  const expected = minus(books, explained);
  const currencies = new Set<number>();
  for (const k of expected.keys()) currencies.add(Number(k.split('/')[1]));
  for (const [shop] of state.balances) for (const [c] of state.balancesOf(shop)) currencies.add(c);
  const get = (p: Position, account: string, c: number): Decimal =>
    p.get(key(account, c)) ?? new Decimal(0);
  for (const c of currencies) {
    const pay = state.balancesOf(w.paymentShopId).get(c);
    const agent = state.balancesOf(w.agentShopId).get(c);
    const pairs: Array<[string, Decimal, Decimal]> = [
      [
        'gateway_payment_shop vs the payment shop available',
        get(expected, 'gateway_payment_shop', c),
        new Decimal(pay?.available.toString() ?? '0'),
      ],
      [
        'agent_available vs the agent shop available',
        get(expected, 'agent_available', c),
        new Decimal(agent?.available.toString() ?? '0'),
      ],
      [
        'agent_frozen vs the agent shop frozen + hold',
        get(expected, 'agent_frozen', c),
        new Decimal(agent?.frozen.toString() ?? '0').plus(agent?.hold.toString() ?? '0'),
      ],
    ];
    for (const [what, ours, theirs] of pairs)
      if (!ours.eq(theirs))
        fail({
          invariant: 'books',
          detail: `${what} in ${c}: books ${ours.toFixed(2)} (less what flagged objects explain), gateway ${theirs.toFixed(2)}, difference ${theirs.minus(ours).toFixed(2)}`,
        });
  }
  return { violations, ledgerCheck, objects: reports.length };
}
