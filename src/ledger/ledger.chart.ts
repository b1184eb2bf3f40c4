import DecimalJs from 'decimal.js';
import { minorUnitsProblem, parseCurrencyInput, CURRENCY_MESSAGE } from '../common/currency';
import type { FieldError } from '../common/errors';

/**
 * The chart of accounts and the entry kinds of the books (docs/api.md, "Books: ledger and
 * reconciliation"). One balance per account and currency: debits − credits.
 *
 * The movements of invoices, refunds, payouts and disputes are posted by the database itself, in the
 * statement that changes their row: each object's state implies a position, and every change
 * posts the difference from what the object posted so far (`ledger_position_*` and
 * `ledger_follow_*`, migrations 1796500000010-LedgerPositions and 1796600000200-DisputesAndChargebacks). Those functions are the one place
 * of that rule, and nothing here repeats it. Adjustments and opening balances are posted from
 * here.
 */
export const ACCOUNTS = [
  'gateway_payment_shop',
  'sales',
  'agent_frozen',
  'agent_available',
  'payouts_paid',
  'payout_fees',
  'chargebacks',
  'adjustments',
] as const;
export type Account = (typeof ACCOUNTS)[number];

/** The objects whose state the books follow by position (each has `ledger_position_<type>`). */
export const LEDGER_OBJECT_TYPES = ['invoice', 'refund', 'payout', 'dispute'] as const;
export type LedgerObjectType = (typeof LEDGER_OBJECT_TYPES)[number];

export const ENTRY_KINDS = [
  'invoice.succeeded',
  'refund.succeeded',
  'payout.sent',
  'payout.succeeded',
  'payout.failed',
  'dispute.lost',
  'invoice.corrected',
  'refund.corrected',
  'payout.corrected',
  'dispute.corrected',
  'opening',
  'adjustment',
] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

/** One leg of an entry: `amount` signed, a debit positive, as a decimal string. */
export interface Posting {
  account: Account;
  currency: number;
  amount: string;
}

/** The opposite of a decimal string, written with the same digits ("5.00" → "-5.00"). */
const neg = (a: string): string => (a.startsWith('-') ? a.slice(1) : `-${a}`);
/** Per currency, debits − credits of the postings: every value zero when they balance. */
export function imbalance(postings: readonly Posting[]): Map<number, string> {
  const sums = new Map<number, DecimalJs>();
  for (const p of postings) {
    sums.set(p.currency, (sums.get(p.currency) ?? new DecimalJs(0)).plus(p.amount));
  }
  const out = new Map<number, string>();
  for (const [c, s] of sums) if (!s.isZero()) out.set(c, s.toFixed());
  return out;
}

const SIGNED = /^-?(0|[1-9]\d{0,17})(\.\d{1,8})?$/;

export interface AdjustmentInput {
  account: Account;
  currency: number;
  amount: string;
  note: string;
}

/** An `Idempotency-Key`: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` header of an adjustment, when sent: the key, or the error naming it.
 * Sent twice (two header lines) is refused, as is anything but visible ASCII.
 */
export function parseIdempotencyKey(header: unknown): { key?: string; errors: FieldError[] } {
  if (header === undefined) return { errors: [] };
  if (typeof header === 'string' && IDEMPOTENCY_KEY.test(header))
    return { key: header, errors: [] };
  return {
    errors: [
      {
        field: 'Idempotency-Key',
        message: 'must be sent once, 1 to 255 visible ASCII characters (a UUID will do)',
      },
    ],
  };
}

/**
 * An adjustment's facts as a repeat under its `Idempotency-Key` is compared with them (by
 * differingFields): the amount by value, so "25.0" repeats "25.00".
 */
export function adjustmentFacts(a: AdjustmentInput): Record<string, unknown> {
  return {
    account: a.account,
    currency: a.currency,
    amount: new DecimalJs(a.amount).toFixed(),
    note: a.note,
  };
}

/** The adjustment an entry posted (adjustmentPostings read back): its moved account's leg and note. */
export function adjustmentOfEntry(e: {
  postings: readonly Posting[];
  note: string | null;
}): AdjustmentInput {
  const moved = e.postings.find((p) => p.account !== 'adjustments');
  if (moved === undefined) throw new Error('adjustmentOfEntry: an entry without a moved account');
  return {
    account: moved.account,
    currency: moved.currency,
    amount: moved.amount,
    note: e.note ?? '',
  };
}

/**
 * An adjustment as an operator asks for it: a known account other than `adjustments`, a
 * currency, a signed non-zero decimal string within the currency's minor unit, and a note. The
 * field errors, or the adjustment.
 */
export function parseAdjustment(body: unknown): { errors: FieldError[] } | AdjustmentInput {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  const account = b.account;
  if (typeof account !== 'string' || !(ACCOUNTS as readonly string[]).includes(account)) {
    errors.push({
      field: 'account',
      message: `must be one of ${ACCOUNTS.filter((a) => a !== 'adjustments').join(', ')}`,
    });
  } else if (account === 'adjustments') {
    errors.push({
      field: 'account',
      message: 'is the other side of every adjustment: name the account it moves',
    });
  }
  const currency = parseCurrencyInput(b.currency);
  if (currency === null) errors.push({ field: 'currency', message: CURRENCY_MESSAGE });
  const amount = b.amount;
  if (typeof amount !== 'string' || !SIGNED.test(amount) || new DecimalJs(amount).isZero()) {
    errors.push({
      field: 'amount',
      message: 'must be a non-zero decimal string, signed (a debit positive): "5.00" or "-5.00"',
    });
  } else if (currency !== null) {
    const problem = minorUnitsProblem(amount.replace(/^-/, ''), currency);
    if (problem !== null) errors.push({ field: 'amount', message: problem });
  }
  const note = b.note;
  if (typeof note !== 'string' || note.trim() === '') {
    errors.push({ field: 'note', message: 'is required: what the adjustment explains' });
  } else if (note.length > 1000) {
    errors.push({ field: 'note', message: 'must be at most 1000 characters' });
  }
  for (const k of Object.keys(b)) {
    if (!['account', 'currency', 'amount', 'note'].includes(k)) {
      errors.push({ field: k, message: 'is not a field of an adjustment' });
    }
  }
  if (errors.length > 0) return { errors };
  return {
    account: account as Account,
    currency: currency!,
    amount: amount as string,
    note: note as string,
  };
}

/** An adjustment's two legs: the account moves by `amount`, `adjustments` by its opposite. */
export function adjustmentPostings(a: AdjustmentInput): Posting[] {
  return [
    { account: a.account, currency: a.currency, amount: a.amount },
    { account: 'adjustments', currency: a.currency, amount: neg(a.amount) },
  ];
}

/** Opening entries: the gateway's agent-shop balance, credited to `adjustments`. */
export function openingPostings(b: {
  currency: number;
  available: string;
  frozen: string;
}): Posting[] {
  const all: Posting[] = [
    { account: 'agent_available', currency: b.currency, amount: b.available },
    { account: 'agent_frozen', currency: b.currency, amount: b.frozen },
  ];
  const legs = all.filter((p) => !new DecimalJs(p.amount).isZero());
  const total = legs.reduce((s, p) => s.plus(p.amount), new DecimalJs(0));
  if (total.isZero()) return [];
  return [...legs, { account: 'adjustments', currency: b.currency, amount: total.neg().toFixed() }];
}
