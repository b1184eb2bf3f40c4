import { Amount } from '../common/money';
import { sqlList } from '../common/sql';
import { PAYOUT_HOLDING_NOTHING } from '../domain/statuses';
import { nextWatchStep, type WatchStep, type WatchWindow } from '../common/watch';
import type { PayoutStatusConfig } from '../config/config';
import { maskAccount } from './account-mask';
import { statusFromGatewayNumber, type MappedStatus } from './payout.state';

/**
 * The payout control rules (docs/api.md, "Control rules"), each one named function here, used by
 * every path that creates, approves, sends, accepts or settles a payout: the single create
 * (operations/create-payout.ts), batch rows (they go through the same create), the console and
 * the admin routes (operations/approve-payout.ts, reject-payout.ts), the accept guard
 * (src/attention/accept-guard.ts), the poller and its quiet rounds (operations/poll-payout.ts,
 * payout-quiet-round.ts) and recheck (operations/recheck-payout.ts).
 *
 * - Is this gateway record ours: `readPayoutRecord` (amount, currency, account, payway, id;
 *   a foreign record is no record of ours, never agreement). Its status mapping is in it too.
 * - Which day a payout counts on against the daily caps: its send stamp's cap day (`SEND_STAMP_SQL`,
 *   `capDayOf` / `capDaySql`), read by `COUNTS_ON_TODAY_SQL` and `capDayLockKey`.
 * - Whether it holds a share of the caps and of a balance figure: `holdsShare` / `HOLDS_SHARE_SQL`
 *   (not rejected, failed or cancelled, not awaiting approval); how much: `capShare` /
 *   `CAP_SHARE_SQL`.
 * - What is in flight for a balance figure: `IN_FLIGHT_SQL` (holds a share, and still being
 *   sent or sent after the figure in use was read).
 * - How long a just-sent payout is left alone: `firstPollGraceS`.
 * - When its watch starts: `watchStart` (when it was sent, never its wait for approval);
 *   `payoutWatchStep` is the watch that every poll path reads.
 * - Which approvals count: `countingApprovals` (keys still configured, never the creating key);
 *   `mayApprove` (the creating key never approves); how many send it: `approvalsToSend`.
 * - What a payout weighs against the approval thresholds, the daily caps and the balance:
 *   `controlWriteOff` (its write-off: the amount of a `shop_amount`, the quoted write-off of a
 *   `ps_amount`), with `writeOffNeedsQuote` saying when it must be asked of withdraw/try.
 */

/** The stored facts a gateway record is compared with. */
export interface StoredPayoutFacts {
  shopPaymentId: string;
  amount: Amount;
  amountType: 'ps_amount' | 'shop_amount';
  shopCurrency: number;
  payway: string;
  accountMasked: string;
}

/**
 * Why a gateway payout record (create answer, status, the record behind a duplicate) is not the
 * payout we stored, or null. Compared where the record carries the fact: our id, currency, the
 * amount the amount type fixes (payee_receive for ps_amount, shop_write_off for shop_amount),
 * payway, and the account (masked the same way as ours).
 */
export function foreignRecordReason(
  stored: StoredPayoutFacts,
  record: Record<string, unknown>,
  mask: (account: string) => string,
): string | null {
  // An empty value says nothing (the record leaves the fact out), it does not contradict ours.
  const text = (v: unknown): string | null =>
    (typeof v === 'string' && v !== '') || typeof v === 'number' || typeof v === 'bigint'
      ? String(v)
      : null;
  const id = text(record.shop_payment_id);
  if (id !== null && id !== stored.shopPaymentId)
    return `shop_payment_id ${id} is not ${stored.shopPaymentId}`;
  const currency = text(record.shop_currency);
  if (currency !== null && currency !== String(stored.shopCurrency))
    return `shop_currency ${currency} is not ${stored.shopCurrency}`;
  const fixed = text(
    stored.amountType === 'ps_amount' ? record.payee_receive : record.shop_write_off,
  );
  if (fixed !== null) {
    let same: boolean;
    try {
      same = Amount.fromText(fixed).eq(stored.amount);
    } catch {
      same = false;
    }
    if (!same) return `amount ${fixed} is not ${stored.amount.toString()}`;
  }
  const payway = text(record.payway);
  if (payway !== null && payway !== stored.payway)
    return `payway ${payway} is not ${stored.payway}`;
  const account = text(record.account);
  if (account !== null && mask(account) !== stored.accountMasked)
    return `account ${mask(account)} is not ${stored.accountMasked}`;
  return null;
}

/** What a gateway record says about one stored payout. */
export type PayoutRecordReading =
  { ours: false; reason: string } | { ours: true; mapped: MappedStatus };

/**
 * Rule "is this gateway record ours", with its status mapping (PAYOUT_STATUS_*): the one reading
 * of a record that applyRecord, the quiet round, recheck and the accept guard all make. A
 * foreign record maps to no status at all.
 */
export function readPayoutRecord(
  stored: StoredPayoutFacts,
  record: Record<string, unknown> & { status: number },
  cfg: PayoutStatusConfig,
): PayoutRecordReading {
  const reason = foreignRecordReason(stored, record, maskAccount);
  if (reason !== null) return { ours: false, reason };
  return { ours: true, mapped: statusFromGatewayNumber(record.status, cfg) };
}

/**
 * Rule "what a payout counts toward a cap" (the SQL twin: CAP_SHARE_SQL): its write-off
 * (controlWriteOff). A `ps_amount` row without one was sent while no control weighed it (or
 * before the write-off was always quoted) and its create answer is not in yet: the amount is all
 * that is known of it. A payout being admitted is never weighed this way (prepare quotes it).
 */
export function capShare(p: {
  amount: Amount;
  amountType: 'ps_amount' | 'shop_amount';
  shopWriteOff: Amount | null;
}): Amount {
  return controlWriteOff(p) ?? p.amount;
}

/** capShare over a stored `payouts` row, in SQL (test/database/rules-sql.e2e-spec.ts holds the two together). */
export const CAP_SHARE_SQL = `CASE WHEN amount_type = 'ps_amount' THEN COALESCE(shop_write_off, amount) ELSE amount END`;

/**
 * Rule "whether a payout holds a share" of the day's caps and of a balance figure: not once it
 * gave its write-off back (rejected, failed, cancelled), nor while it is not sent (awaiting
 * approval). SQL twin: HOLDS_SHARE_SQL.
 */
export function holdsShare(status: string): boolean {
  return !(PAYOUT_HOLDING_NOTHING as readonly string[]).includes(status);
}

/** holdsShare over a `payouts` row, in SQL: the list written from PAYOUT_HOLDING_NOTHING. */
export const HOLDS_SHARE_SQL = `status NOT IN (${sqlList(PAYOUT_HOLDING_NOTHING)})`;

/**
 * What stamps a payout's send (`sent_at`, with its first create's claim): the service's SQL
 * clock, the clock the cap day is read on. The create that sends at once and the approval that
 * sends one both write it.
 */
export const SEND_STAMP_SQL = 'clock_now()';

/**
 * Rule "the cap day of an instant": its UTC calendar day, `YYYY-MM-DD` (capDaySql in SQL). A
 * payout counts on the cap day of its send stamp.
 */
export function capDayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** capDayOf in SQL, of the timestamptz expression `at` (the send stamp unless told). */
export function capDaySql(at: string = SEND_STAMP_SQL): string {
  return `to_char((${at}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
}

/**
 * Rule "which day a payout counts on": the cap day of `sent_at` (its first create), for a payout
 * that holds a share (holdsShare). One awaiting approval has no `sent_at`: it holds no share.
 * SQL over a `payouts` row: sent on or after the first instant of today's cap day, read on the
 * same clock that stamps a send.
 */
export const COUNTS_ON_TODAY_SQL = `sent_at >= (${capDaySql()})::date::timestamp AT TIME ZONE 'UTC'
  AND ${HOLDS_SHARE_SQL}`;

/**
 * The advisory lock that serialises the sends of one (shop, currency) on the cap day they count
 * on (and, given a recipient index, of one recipient): SQL `hashtext` argument, `$1` shop and
 * `$2` currency, `$3` the recipient index when `recipient`.
 */
export function capDayLockKey(recipient: boolean): string {
  const day = capDaySql();
  return recipient
    ? `'payout-recipient:' || $1 || ':' || $2 || ':' || ${day} || ':' || $3`
    : `'payout-controls:' || $1 || ':' || $2 || ':' || ${day}`;
}

/**
 * Rule "what is in flight for this balance figure": payouts that hold a share (holdsShare: not
 * `rejected`/`failed`/`cancelled`, not awaiting approval) whose create the figure cannot have seen: not yet sent when it
 * was read (a create still being sent then: its call's lease runs past the read's start) or sent
 * after it (the latest create, $4 the read's start). The gateway's `available` already excludes
 * what it had frozen when it answered, so a payout sent before the read and never created there
 * (flagged, absent, a foreign record under its id) holds nothing. One that succeeded since the
 * read still counts (the figure had its money). A payout awaiting approval is not sent and holds
 * nothing: the approval that sends it checks the balance with this same rule. $1 shop,
 * $2 currency, $3 the payout itself (left out).
 */
export const IN_FLIGHT_SQL = `
  SELECT COALESCE(SUM(${CAP_SHARE_SQL}), 0)::text AS sum
    FROM payouts
   WHERE shop_id = $1 AND shop_currency = $2 AND id <> $3
     AND ${HOLDS_SHARE_SQL}
     AND (last_create_at >= $4 OR call_lease_until > $4)`;

/**
 * Rule "does the amount type fix the write-off": a `shop_amount` is what leaves the shop's
 * balance; a `ps_amount` is what the recipient receives, and its write-off (fee, conversion) is
 * what withdraw/try quotes.
 */
export function writeOffNeedsQuote(amountType: 'ps_amount' | 'shop_amount'): boolean {
  return amountType === 'ps_amount';
}

/**
 * Rule "the one figure of the controls": what a payout writes off in its shop currency, the
 * figure the approval thresholds (single and dual), the daily caps and the balance check all
 * hold it to. A `shop_amount` is its own write-off; a `ps_amount` is weighed by its quoted (or
 * recorded) write-off. Null for a `ps_amount` whose write-off is not known: the caller asks
 * withdraw/try, and never weighs the amount (the lower bound) in its place.
 */
export function controlWriteOff(p: {
  amount: Amount;
  amountType: 'ps_amount' | 'shop_amount';
  shopWriteOff: Amount | null;
}): Amount | null {
  return writeOffNeedsQuote(p.amountType) ? p.shopWriteOff : p.amount;
}

/** Rule "when does its watch start": when it was sent; before that (never sent) its creation. */
export function watchStart(p: { sentAt: Date | null; createdAt: Date }): Date {
  return p.sentAt ?? p.createdAt;
}

/**
 * When to poll a non-final payout next (pure): every PAYOUT_POLL_INTERVAL_S until its poll
 * deadline (one poll there), then flagged `deadline` and polled every WATCH_INTERVAL_S until
 * WATCH_MAX_S after its watch started (watchStart), then `watch_ended` and no longer polled.
 */
export function payoutWatchStep(p: {
  now: Date;
  sentAt: Date | null;
  createdAt: Date;
  pollDeadline: Date;
  pollIntervalS: number;
  watch: WatchWindow;
}): WatchStep {
  return nextWatchStep({
    now: p.now,
    start: watchStart(p),
    deadline: p.pollDeadline,
    cadenceAt: new Date(p.now.getTime() + p.pollIntervalS * 1000),
    watch: p.watch,
  });
}

/**
 * Rule "which approvals count": those whose key is still configured as an admin key, never the
 * key that created the payout (or submitted its batch); each key once.
 */
export function countingApprovals(
  approverKeyIds: readonly string[],
  configuredAdminKeyIds: ReadonlySet<string>,
  createdByKeyId: string | null,
): string[] {
  return [...new Set(approverKeyIds)].filter(
    (k) => configuredAdminKeyIds.has(k) && k !== createdByKeyId,
  );
}

/**
 * Rule "how many approvals send it": what the payout was stored with, never fewer than one (a
 * payout awaiting approval always needs an approval to leave that state).
 */
export function approvalsToSend(p: { approvalsRequired: number }): number {
  return Math.max(1, p.approvalsRequired);
}

/**
 * Rule "how long a just-sent payout is left alone by the poller": one gateway time-out (its
 * create request may still be in flight) and one poll interval, in whole seconds.
 */
export function firstPollGraceS(gatewayTimeoutMs: number, pollIntervalS: number): number {
  return Math.ceil(gatewayTimeoutMs / 1000) + pollIntervalS;
}

/** Rule "four eyes": the key that created a payout (or submitted its batch) never approves it. */
export function mayApprove(keyId: string, createdByKeyId: string | null): boolean {
  return createdByKeyId === null || keyId !== createdByKeyId;
}
