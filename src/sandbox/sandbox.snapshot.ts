import type { AmountType, PaymentPayway, PayoutPayway } from './payway-catalogue';
import { Decimal } from './decimal';
import { CallFault, parsePayway } from './faults';
import { JsonIn, JsonObject, JsonOut, parseJson, toJsonText } from './json-text';
import type {
  Balance,
  DeliveryLogEntry,
  Invoice,
  Notice,
  Payout,
  PaymentToken,
  PendingDelivery,
  Refund,
  RequestLogEntry,
  SandboxState,
  Settings,
} from './sandbox.state';

/**
 * The sandbox's state as plain JSON and back, so a sandbox kept under the data directory
 * remembers across restarts. Exact by construction: amounts are decimal text (`Decimal` keeps its
 * scale), times ISO text to the millisecond, and values that came as JSON (request bodies,
 * notification fields, the catalogue entry) are kept as their JSON text, numbers digit for digit.
 * Pure: the file itself is written by state-file.ts.
 */

export const SNAPSHOT_VERSION = 1;

type Dated<T, K extends keyof T> = Omit<T, K> & { [P in K]: string };

interface InvoiceSnap extends Omit<
  Invoice,
  | 'payway'
  | 'paywayConfig'
  | 'amount'
  | 'clientPrice'
  | 'clientInfo'
  | 'created'
  | 'updated'
  | 'processed'
  | 'expiresAt'
  | 'completesAt'
> {
  payway: string;
  paywayConfig: Omit<PaymentPayway, 'listed'> & { listed: string };
  amount: string;
  clientPrice: string;
  clientInfo?: string;
  created: string;
  updated: string;
  processed?: string;
  expiresAt: string;
  completesAt?: string;
}

interface RefundSnap extends Omit<Refund, 'amount' | 'createdAt' | 'processedAt'> {
  amount: string;
  createdAt: string;
  processedAt?: string;
}

interface PayoutSnap extends Omit<
  Payout,
  | 'payway'
  | 'paywayConfig'
  | 'amount'
  | 'payeeReceive'
  | 'shopWriteOff'
  | 'created'
  | 'updated'
  | 'finalAt'
> {
  payway: string;
  paywayConfig: Omit<PayoutPayway, 'listed'> & { listed: string };
  amount: string;
  payeeReceive: string;
  shopWriteOff: string;
  created: string;
  updated: string;
  finalAt?: string;
}

interface NoticeSnap extends Omit<Notice, 'fields'> {
  fields: string;
}

export interface StateSnapshot {
  version: number;
  savedAt: string;
  lastId: number;
  invoices: InvoiceSnap[];
  refunds: RefundSnap[];
  payouts: PayoutSnap[];
  tokens: Dated<PaymentToken, 'expiresAt'>[];
  balances: { shopId: number; currency: number; available: string; hold: string; frozen: string }[];
  requests: (Omit<RequestLogEntry, 'body'> & { body: string })[];
  deliveries: (Omit<DeliveryLogEntry, 'body'> & { body: string })[];
  notices: NoticeSnap[];
  outbox: { notice: NoticeSnap; attempt: number; dueAt: string }[];
  withheld: { group: string; notices: NoticeSnap[] }[];
  faults: { path: string; fault: CallFault; remaining: number; delayMs?: number }[];
  /** The settings, and the start-up settings they were changed from. */
  settings: Settings;
  initialSettings: Settings;
}

const iso = (d: Date): string => d.toISOString();
const isoOpt = (d: Date | undefined): string | undefined => (d === undefined ? undefined : iso(d));
const date = (text: string): Date => new Date(text);
const dateOpt = (text: string | undefined): Date | undefined =>
  text === undefined ? undefined : date(text);
const fieldsText = (fields: Record<string, JsonOut>): string => toJsonText(fields);
const fieldsOf = (text: string): Record<string, JsonOut> => parseJson(text) as JsonObject;

function noticeSnap(n: Notice): NoticeSnap {
  return { ...n, fields: fieldsText(n.fields) };
}

function noticeOf(n: NoticeSnap): Notice {
  return { ...n, fields: fieldsOf(n.fields) };
}

export function snapshotOf(state: SandboxState, now: Date = new Date()): StateSnapshot {
  // One notice object may sit in the log, the outbox and the withheld lists: each is written
  // where it is and comes back as its own equal copy, which is all the sandbox needs of it.
  return {
    version: SNAPSHOT_VERSION,
    savedAt: iso(now),
    lastId: state.lastId,
    invoices: [...state.invoices.values()].map((i): InvoiceSnap => ({
      ...i,
      payway: i.payway.requested,
      paywayConfig: { ...i.paywayConfig, listed: toJsonText(i.paywayConfig.listed) },
      amount: i.amount.toString(),
      clientPrice: i.clientPrice.toString(),
      clientInfo: i.clientInfo === undefined ? undefined : toJsonText(i.clientInfo),
      created: iso(i.created),
      updated: iso(i.updated),
      processed: isoOpt(i.processed),
      expiresAt: iso(i.expiresAt),
      completesAt: isoOpt(i.completesAt),
    })),
    refunds: [...state.refunds.values()].map((r): RefundSnap => ({
      ...r,
      amount: r.amount.toString(),
      createdAt: iso(r.createdAt),
      processedAt: isoOpt(r.processedAt),
    })),
    payouts: [...state.payouts.values()].map((p): PayoutSnap => ({
      ...p,
      payway: p.payway.requested,
      paywayConfig: { ...p.paywayConfig, listed: toJsonText(p.paywayConfig.listed) },
      amount: p.amount.toString(),
      payeeReceive: p.payeeReceive.toString(),
      shopWriteOff: p.shopWriteOff.toString(),
      created: iso(p.created),
      updated: iso(p.updated),
      finalAt: isoOpt(p.finalAt),
    })),
    tokens: [...state.tokens.values()].map((t) => ({
      ...t,
      cardInfo: { ...t.cardInfo },
      expiresAt: iso(t.expiresAt),
    })),
    balances: [...state.balances.entries()].flatMap(([shopId, byCurrency]) =>
      [...byCurrency.entries()].map(([currency, b]) => ({
        shopId,
        currency,
        available: b.available.toString(),
        hold: b.hold.toString(),
        frozen: b.frozen.toString(),
      })),
    ),
    requests: state.requests.map((r) => ({ ...r, body: toJsonText(r.body) })),
    deliveries: state.deliveries.map((d) => ({ ...d, body: fieldsText(d.body) })),
    notices: state.notices.map(noticeSnap),
    outbox: state.outbox.map((p) => ({
      notice: noticeSnap(p.notice),
      attempt: p.attempt,
      dueAt: iso(p.dueAt),
    })),
    withheld: [...state.withheld.entries()].map(([group, notices]) => ({
      group,
      notices: notices.map(noticeSnap),
    })),
    faults: state.faults.list(),
    settings: { ...state.settings },
    initialSettings: { ...state.initialSettings },
  };
}

/**
 * Replaces the state's contents with the snapshot's. A setting changed at run time (through the
 * control API) keeps its value; one left as it started takes this start's value, so a changed
 * SANDBOX_* variable still applies after a restart.
 */
export function restoreSnapshot(state: SandboxState, snap: StateSnapshot): void {
  if (snap.version !== SNAPSHOT_VERSION)
    throw new Error(`unknown sandbox state version ${String(snap.version)}`);
  state.reset();
  state.balances.clear();
  state.lastId = snap.lastId;
  for (const i of snap.invoices) {
    const invoice: Invoice = {
      ...i,
      payway: parsePayway(i.payway),
      paywayConfig: { ...i.paywayConfig, listed: parseJson(i.paywayConfig.listed) },
      amount: Decimal.parse(i.amount),
      clientPrice: Decimal.parse(i.clientPrice),
      clientInfo: i.clientInfo === undefined ? undefined : (parseJson(i.clientInfo) as JsonObject),
      created: date(i.created),
      updated: date(i.updated),
      processed: dateOpt(i.processed),
      expiresAt: date(i.expiresAt),
      completesAt: dateOpt(i.completesAt),
    };
    state.invoices.set(invoice.id, invoice);
  }
  for (const r of snap.refunds) {
    state.refunds.set(r.shopRefundId, {
      ...r,
      amount: Decimal.parse(r.amount),
      createdAt: date(r.createdAt),
      processedAt: dateOpt(r.processedAt),
    });
  }
  for (const p of snap.payouts) {
    const payout: Payout = {
      ...p,
      payway: parsePayway(p.payway),
      paywayConfig: { ...p.paywayConfig, listed: parseJson(p.paywayConfig.listed) },
      amountType: p.amountType as AmountType,
      amount: Decimal.parse(p.amount),
      payeeReceive: Decimal.parse(p.payeeReceive),
      shopWriteOff: Decimal.parse(p.shopWriteOff),
      created: date(p.created),
      updated: date(p.updated),
      finalAt: dateOpt(p.finalAt),
    };
    state.payouts.set(payout.id, payout);
  }
  for (const t of snap.tokens) state.tokens.set(t.token, { ...t, expiresAt: date(t.expiresAt) });
  for (const b of snap.balances) {
    const balance: Balance = state.balance(b.shopId, b.currency);
    balance.available = Decimal.parse(b.available);
    balance.hold = Decimal.parse(b.hold);
    balance.frozen = Decimal.parse(b.frozen);
  }
  state.requests = snap.requests.map((r) => ({ ...r, body: parseJson(r.body) as JsonIn }));
  state.deliveries = snap.deliveries.map((d) => ({ ...d, body: fieldsOf(d.body) }));
  state.notices = snap.notices.map(noticeOf);
  state.outbox = snap.outbox.map((p): PendingDelivery => ({
    notice: noticeOf(p.notice),
    attempt: p.attempt,
    dueAt: date(p.dueAt),
  }));
  for (const w of snap.withheld) state.withheld.set(w.group, w.notices.map(noticeOf));
  for (const f of snap.faults) state.faults.add(f);
  const settings: Record<string, unknown> = { ...state.initialSettings };
  const saved = snap.settings as unknown as Record<string, unknown>;
  const savedInitial = snap.initialSettings as unknown as Record<string, unknown>;
  for (const key of Object.keys(settings)) {
    if (key in saved && saved[key] !== savedInitial[key]) settings[key] = saved[key];
  }
  state.settings = settings as unknown as Settings;
}

/** The snapshot's JSON text (plain JSON: every value in it is text, number or boolean). */
export function snapshotText(snap: StateSnapshot): string {
  return JSON.stringify(snap);
}

export function parseSnapshot(text: string): StateSnapshot {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || !('version' in value))
    throw new Error('not a sandbox state');
  return value as StateSnapshot;
}
