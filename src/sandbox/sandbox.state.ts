import type { AmountType, PaymentPayway, PayoutPayway } from './payway-catalogue';
import { Decimal } from './decimal';
import { FaultQueue, PaywayChoice } from './faults';
import type { JsonIn, JsonObject, JsonOut } from './json-text';

/**
 * The sandbox's whole memory: invoices, refunds, payouts, tokens, balances, logs, queued faults
 * and settings, with the status rules and balance moves as small methods. Nothing here does I/O.
 */

export const INVOICE_STATUS = {
  CREATED: 1,
  AWAITING_PAYER: 2,
  PAID: 4,
  REJECTED: 6,
  HELD: 8,
} as const;

/** Text of an invoice status in notifications. */
export function invoiceStatusText(status: number): string {
  if (status === INVOICE_STATUS.PAID) return 'success';
  if (status === INVOICE_STATUS.REJECTED) return 'rejected';
  if (status === INVOICE_STATUS.HELD) return 'hold';
  return 'waiting';
}

/** The payer (or a scenario) may complete only an invoice that has not completed yet. */
export function awaitsPayment(status: number): boolean {
  return status === INVOICE_STATUS.CREATED || status === INVOICE_STATUS.AWAITING_PAYER;
}

export const PAYOUT_STATUS = {
  NEW: 1,
  SENT: 3,
  SUCCESS: 5,
  REJECTED: 6,
  CANCELLED: 8,
} as const;

export function payoutIsFinal(status: number): boolean {
  return (
    status === PAYOUT_STATUS.SUCCESS ||
    status === PAYOUT_STATUS.REJECTED ||
    status === PAYOUT_STATUS.CANCELLED
  );
}

export interface InvoiceUrls {
  success?: string;
  failed?: string;
  callback?: string;
  callbackRejected?: string;
}

export interface Invoice {
  id: number;
  shopId: number;
  shopOrderId: string;
  payway: PaywayChoice;
  paywayConfig: PaymentPayway;
  amount: Decimal;
  currency: number;
  clientPrice: Decimal;
  description: string;
  twoStep: boolean;
  status: number;
  errorCode: number;
  urls: InvoiceUrls;
  /** Extra request parameters (URLs, description, add-ons), sent back as `addons`. */
  addons: Record<string, string>;
  /** Masked card number when a card was given or used; the number itself is never kept. */
  cardMask?: string;
  clientInfo?: JsonObject;
  issueToken: boolean;
  /** The token this invoice issued (after success, when asked to). */
  issuedToken?: string;
  /** The token this invoice was charged with (a recurrent charge, no payer). */
  chargedWithToken?: string;
  /** `session_id` of the checkout URL a card payway sends the payer to. */
  sessionId?: string;
  /** Set while the payer still has to pass the 3-D Secure page. */
  needs3ds: boolean;
  created: Date;
  updated: Date;
  processed?: Date;
  expiresAt: Date;
  /** A charge still queued at the gateway: the shop's invoice/unhold charges the hold instead. */
  chargeOnUnhold?: boolean;
  /** When a payer-less completion (token charge, nonfatal answer) is due, in real time. */
  completesAt?: Date;
  /**
   * What the gateway's manager charged back of this payment so far (decimal text), taken from
   * the shop's available balance; the interface has no call that reports it.
   */
  chargedBack?: string;
}

export type RefundStatus = 'WAITING' | 'SUCCESS' | 'FAILED';

export interface Refund {
  shopRefundId: string;
  invoiceId: number;
  amount: Decimal;
  currency: number;
  status: RefundStatus;
  errorCode: number;
  callbackUrl?: string;
  createdAt: Date;
  processedAt?: Date;
}

export interface Payout {
  id: number;
  shopId: number;
  shopPaymentId: string;
  payway: PaywayChoice;
  paywayConfig: PayoutPayway;
  accountMask: string;
  amountType: AmountType;
  amount: Decimal;
  payeeReceive: Decimal;
  shopWriteOff: Decimal;
  psCurrency: number;
  shopCurrency: number;
  status: number;
  errorCode: number;
  rrn: string;
  bankTransactionId: string;
  created: Date;
  updated: Date;
  /** The final status a sent payout is due to reach, and when (real time); unset: never by itself. */
  finalStatus?: number;
  finalAt?: Date;
}

export interface PaymentToken {
  token: string;
  shopId: number;
  paywayAlias: string;
  accountMask: string;
  expiresAt: Date;
  cardInfo: Record<string, string>;
}

export interface Balance {
  available: Decimal;
  hold: Decimal;
  frozen: Decimal;
}

export interface RequestLogEntry {
  time: string;
  path: string;
  /** The body with the card number masked and cvv and sign removed. */
  body: JsonIn;
  /** The hosted shop whose secret the request's signature matches; null when none does. */
  signed_by: number | null;
  http_status: number | null;
  result: boolean | null;
  error_code: number | null;
  fault: string | null;
  /** The W3C `traceparent` the caller sent (well-formed ones only): a traced service's calls show here. */
  traceparent?: string;
}

export type NoticeType = 'invoice' | 'refund';

/** One notification as built at the moment of its event (fields signed). */
export interface Notice {
  type: NoticeType;
  /** `invoice:<shop_order_id>` or `refund:<shop_refund_id>`. */
  group: string;
  /** Target without the `type` parameter; null when the shop gave none. */
  url: string | null;
  fields: Record<string, JsonOut>;
}

export interface DeliveryLogEntry {
  time: string;
  url: string;
  type: NoticeType;
  format: NotifyFormat;
  body: Record<string, JsonOut>;
  attempt: number;
  /** HTTP status of the reply; null when none came (refused, time-out). */
  status: number | null;
  reply: string;
  ok: boolean;
}

export type NotifyFormat = 'json' | 'form';

/** A delivery attempt still owed: kept in the state so a restarted sandbox sends it again. */
export interface PendingDelivery {
  notice: Notice;
  attempt: number;
  /** When the attempt is due, in real time. */
  dueAt: Date;
}

export interface Settings {
  notifyFormat: NotifyFormat;
  suppressNotifications: boolean;
  /** Shop-level notification URL: takes priority over the URLs of requests. */
  shopNotifyUrl: string | null;
  timeScale: number;
  /** Delay of the time-out faults in real milliseconds; null: 35 s × timeScale. */
  timeoutDelayMs: number | null;
  /** Real milliseconds added before every gateway answer (a slow gateway under load); 0: none. */
  latencyMs: number;
  /** How long a hold lasts before the gateway would release it (invoice/check's `expires_at`). */
  holdLifetimeS: number;
}

export class InsufficientFunds extends Error {
  constructor(readonly currency: number) {
    super(`insufficient funds on the shop balance in currency ${currency}`);
  }
}

/**
 * A map by id that also finds its values by a second key (the shop's own id for an object), in
 * constant time: a gateway that scanned every object it ever made for each create slowed down
 * as a load went on, so whatever ran later in one run met a slower gateway (the load benchmark).
 * The first value set under a key keeps it, as a scan in insertion order would find.
 */
export class KeyedMap<V extends { id: number }> extends Map<number, V> {
  private readonly byKey = new Map<string, V>();

  constructor(private readonly keyOf: (v: V) => string) {
    super();
  }

  override set(id: number, value: V): this {
    if (super.get(id) === value) return this;
    this.forget(id);
    super.set(id, value);
    const key = this.keyOf(value);
    if (!this.byKey.has(key)) this.byKey.set(key, value);
    return this;
  }

  override delete(id: number): boolean {
    this.forget(id);
    return super.delete(id);
  }

  /**
   * Before the value under `id` goes: when it holds its key, the key passes to the next value
   * of that key in insertion order, if any (a scan, on the rare removal of a key's holder).
   */
  private forget(id: number): void {
    const old = super.get(id);
    if (old === undefined) return;
    const key = this.keyOf(old);
    if (this.byKey.get(key) !== old) return;
    this.byKey.delete(key);
    for (const v of super.values()) {
      if (v !== old && this.keyOf(v) === key) {
        this.byKey.set(key, v);
        return;
      }
    }
  }

  override clear(): void {
    this.byKey.clear();
    super.clear();
  }

  findByKey(key: string): V | undefined {
    return this.byKey.get(key);
  }
}

const shopKey = (shopId: number, own: string): string => `${shopId}\u0000${own}`;

export class SandboxState {
  invoices = new KeyedMap<Invoice>((i) => shopKey(i.shopId, i.shopOrderId));
  refunds = new Map<string, Refund>();
  payouts = new KeyedMap<Payout>((p) => shopKey(p.shopId, p.shopPaymentId));
  tokens = new Map<string, PaymentToken>();
  /** Per shop, per currency. */
  balances = new Map<number, Map<number, Balance>>();
  requests: RequestLogEntry[] = [];
  deliveries: DeliveryLogEntry[] = [];
  notices: Notice[] = [];
  /** Delivery attempts scheduled and not yet made (or cut short by a shutdown). */
  outbox: PendingDelivery[] = [];
  /** Notices held back by the out_of_order scenario, by group. */
  withheld = new Map<string, Notice[]>();
  faults = new FaultQueue();
  /**
   * Payees check_account refuses (`POST /sandbox/payees/refuse`), by the SHA-256 of the account
   * with spaces and dashes removed: never the account itself. Not kept across a restart.
   */
  refusedPayees = new Set<string>();
  settings: Settings;
  /** The last id given out; kept across restarts with the rest. */
  lastId = 0;

  constructor(
    /** The start-up settings, to which a reset returns. */
    readonly initialSettings: Settings,
    private readonly seedBalances: { currency: number; available: string }[],
    /** The shop the seed balances belong to: the agent shop, which pays out. */
    private readonly seedShopId: number,
  ) {
    this.settings = { ...initialSettings };
    this.reset();
  }

  /** Forgets everything and returns to the start-up settings and seed balances. */
  reset(): void {
    this.invoices.clear();
    this.refunds.clear();
    this.payouts.clear();
    this.tokens.clear();
    this.balances.clear();
    this.requests = [];
    this.deliveries = [];
    this.notices = [];
    this.outbox = [];
    this.withheld.clear();
    this.faults.clear();
    this.refusedPayees.clear();
    this.settings = { ...this.initialSettings };
    // Ids grow from the start time so a restarted sandbox does not reuse the ids of a shop's old rows.
    this.lastId = Date.now();
    for (const seed of this.seedBalances) {
      this.balance(this.seedShopId, seed.currency).available = Decimal.parse(seed.available);
    }
  }

  newId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  findInvoiceByOrder(shopId: number, shopOrderId: string): Invoice | undefined {
    return this.invoices.findByKey(shopKey(shopId, shopOrderId));
  }

  findPayoutByShopPaymentId(shopId: number, shopPaymentId: string): Payout | undefined {
    return this.payouts.findByKey(shopKey(shopId, shopPaymentId));
  }

  refundsOf(invoiceId: number): Refund[] {
    return [...this.refunds.values()].filter((r) => r.invoiceId === invoiceId);
  }

  /** Successful refunds of the invoice. */
  refundedAmount(invoiceId: number): Decimal {
    return this.sumRefunds(invoiceId, (r) => r.status === 'SUCCESS');
  }

  /** Refunds that count against the paid amount: successful and still waiting. */
  committedRefunds(invoiceId: number): Decimal {
    return this.sumRefunds(invoiceId, (r) => r.status !== 'FAILED');
  }

  private sumRefunds(invoiceId: number, include: (r: Refund) => boolean): Decimal {
    return this.refundsOf(invoiceId)
      .filter(include)
      .reduce((sum, r) => sum.plus(r.amount), Decimal.ZERO);
  }

  balance(shopId: number, currency: number): Balance {
    let shop = this.balances.get(shopId);
    if (shop === undefined) {
      shop = new Map();
      this.balances.set(shopId, shop);
    }
    let b = shop.get(currency);
    if (b === undefined) {
      b = { available: Decimal.ZERO, hold: Decimal.ZERO, frozen: Decimal.ZERO };
      shop.set(currency, b);
    }
    return b;
  }

  /** One shop's balances, by currency. */
  balancesOf(shopId: number): Map<number, Balance> {
    return this.balances.get(shopId) ?? new Map();
  }

  /** The agent shop: the seed balances' holder, which pays out. */
  get agentShopId(): number {
    return this.seedShopId;
  }

  /**
   * A change of a shop's available balance that no call made: a top-up (positive), or an
   * unexplained drift injected as a fault (either sign), for reconciliation to catch.
   */
  changeAvailable(shopId: number, currency: number, amount: Decimal): Balance {
    const b = this.balance(shopId, currency);
    b.available = b.available.plus(amount);
    return b;
  }

  /** A paid invoice credits the shop. */
  credit(shopId: number, currency: number, amount: Decimal): void {
    const b = this.balance(shopId, currency);
    b.available = b.available.plus(amount);
  }

  /** A successful refund debits the shop. */
  debit(shopId: number, currency: number, amount: Decimal): void {
    const b = this.balance(shopId, currency);
    b.available = b.available.minus(amount);
  }

  /** Held invoice funds: shown as `hold` until charged (to available) or released. */
  hold(shopId: number, currency: number, amount: Decimal): void {
    const b = this.balance(shopId, currency);
    b.hold = b.hold.plus(amount);
  }

  settleHold(shopId: number, currency: number, amount: Decimal, charged: boolean): void {
    const b = this.balance(shopId, currency);
    b.hold = b.hold.minus(amount);
    if (charged) b.available = b.available.plus(amount);
  }

  /** A payout freezes its write-off; throws InsufficientFunds when available is short. */
  freeze(shopId: number, currency: number, amount: Decimal): void {
    const b = this.balance(shopId, currency);
    if (b.available.compare(amount) < 0) throw new InsufficientFunds(currency);
    b.available = b.available.minus(amount);
    b.frozen = b.frozen.plus(amount);
  }

  /** At the payout's final status the frozen funds are debited, or returned to available. */
  unfreeze(shopId: number, currency: number, amount: Decimal, debited: boolean): void {
    const b = this.balance(shopId, currency);
    b.frozen = b.frozen.minus(amount);
    if (!debited) b.available = b.available.plus(amount);
  }
}
