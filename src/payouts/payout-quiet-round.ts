import { watchMayFlag } from '../common/attention';
import { Amount } from '../common/money';
import type { WatchWindow } from '../common/watch';
import type { PayoutStatusConfig } from '../config/config';
import type { PayoutRecord } from '../gateway/gateway.types';
import type { AmountType, PayoutStatus } from './payout.entity';
import { payoutWatchStep, readPayoutRecord } from './payout.rules';
import { decideTransition, isPolled } from './payout.state';

/**
 * Most status rounds of the poller change nothing: the gateway answers the same non-final status
 * with the same data, and the round only counts the poll, sets the next one and releases the
 * lease. Such "quiet" rounds of a whole batch are finished by one statement
 * (PayoutProcessor.finishQuietRounds); every other round goes through the processor's per-row
 * path, with its events, flags and audit. The functions here decide which is which, purely, from
 * the row as the claim returned it and the gateway's answer.
 */

/** What the poller's claim returns per row (SQL expressions; constants, never input). */
export const POLLED_COLUMNS = [
  'xmin::text AS xmin',
  'status',
  'shop_payment_id',
  'withdraw_id::text AS withdraw_id',
  'gateway_status',
  'amount::text AS amount',
  'amount_type',
  'shop_currency',
  'payway',
  'account_masked',
  'ps_currency',
  'payee_receive::text AS payee_receive',
  'shop_write_off::text AS shop_write_off',
  'error_code',
  'gateway_message',
  'last_error',
  'needs_attention',
  'attention_reason',
  'call_lease_until',
  'created_at',
  'sent_at',
  'poll_deadline',
] as const;

/** A claimed payout: the columns a status round reads. */
export interface PolledRow {
  id: string;
  /** The row version the claim left: the quiet write applies only while it is unchanged. */
  xmin: string;
  status: PayoutStatus;
  shopPaymentId: string;
  withdrawId: string | null;
  gatewayStatus: number | null;
  /** Exact decimal text, as stored. */
  amount: string;
  amountType: AmountType;
  shopCurrency: number;
  payway: string;
  accountMasked: string;
  psCurrency: number | null;
  payeeReceive: string | null;
  shopWriteOff: string | null;
  errorCode: number | null;
  gatewayMessage: string | null;
  lastError: string | null;
  needsAttention: boolean;
  attentionReason: string | null;
  callLeaseUntil: Date | null;
  createdAt: Date;
  /** When it was sent: its watch starts there (payout.rules.ts). */
  sentAt: Date | null;
  pollDeadline: Date;
}

/** The claim's raw row (pg types: ints as numbers, timestamps as Dates) as a PolledRow. */
export function toPolledRow(r: Record<string, unknown>): PolledRow {
  return {
    id: r.id as string,
    xmin: r.xmin as string,
    status: r.status as PayoutStatus,
    shopPaymentId: r.shop_payment_id as string,
    withdrawId: r.withdraw_id as string | null,
    gatewayStatus: r.gateway_status as number | null,
    amount: r.amount as string,
    amountType: r.amount_type as AmountType,
    shopCurrency: r.shop_currency as number,
    payway: r.payway as string,
    accountMasked: r.account_masked as string,
    psCurrency: r.ps_currency as number | null,
    payeeReceive: r.payee_receive as string | null,
    shopWriteOff: r.shop_write_off as string | null,
    errorCode: r.error_code as number | null,
    gatewayMessage: r.gateway_message as string | null,
    lastError: r.last_error as string | null,
    needsAttention: r.needs_attention as boolean,
    attentionReason: r.attention_reason as string | null,
    callLeaseUntil: r.call_lease_until as Date | null,
    createdAt: r.created_at as Date,
    sentAt: (r.sent_at as Date | null | undefined) ?? null,
    pollDeadline: r.poll_deadline as Date,
  };
}

/**
 * Before the call: a round that may turn out quiet asks `withdraw/status` about a polled payout
 * with no call of its own in flight. Any other row (no gateway id yet: the answer teaches it,
 * "absent" may repeat the create; a create in flight; not polled) takes the per-row path whole.
 */
export function mayBeQuiet(row: PolledRow, now: Date): boolean {
  const inFlight = row.callLeaseUntil !== null && row.callLeaseUntil.getTime() > now.getTime();
  return isPolled(row.status) && row.withdrawId !== null && !inFlight;
}

export interface QuietContext {
  now: Date;
  pollIntervalS: number;
  watch: WatchWindow;
  status: PayoutStatusConfig;
}

/**
 * After the answer: when the per-row path (applyRecord, then finishRound) would write nothing
 * but the poll count, the next poll time and the lease release — the record is ours, maps to
 * the status the row keeps, carries the data the row has, no error to clear, no flag to raise
 * by the watch — the next poll time it would set; otherwise null (the per-row path decides).
 */
export function quietRoundNext(
  row: PolledRow,
  record: PayoutRecord,
  ctx: QuietContext,
): Date | null {
  try {
    if (!mayBeQuiet(row, ctx.now) || row.lastError !== null) return null;
    const reading = readPayoutRecord(
      { ...row, amount: Amount.fromText(row.amount) },
      record,
      ctx.status,
    );
    if (!reading.ours) return null;
    const mapped = reading.mapped;
    // An unknown number is logged by the per-row path.
    if (!mapped.known) return null;
    const move = decideTransition(row.status, mapped.status);
    // `needs_attention` stays while the gateway says processing (not a warning there).
    const kept =
      !move.allowed &&
      (move.reason === 'same' ||
        (move.reason === 'not_allowed' && row.status === 'needs_attention'));
    if (!kept || !sameData(row, record)) return null;
    const step = payoutWatchStep({
      now: ctx.now,
      sentAt: row.sentAt,
      createdAt: row.createdAt,
      pollDeadline: row.pollDeadline,
      pollIntervalS: ctx.pollIntervalS,
      watch: ctx.watch,
    });
    if (step.nextAt === null || step.flag === 'watch_ended') return null;
    // Past the deadline the watch flags the row `needs_attention`: quiet only when it already is
    // (status and flag), so the flag and its event are never skipped.
    if (
      step.flag === 'deadline' &&
      !(row.status === 'needs_attention' && !watchMayFlag(row, 'deadline'))
    )
      return null;
    return step.nextAt;
  } catch {
    // Whatever the per-row path would make of a record this cannot read, it decides it.
    return null;
  }
}

/** Whether applyRecord would write the row's own values back (texts compared exactly). */
function sameData(row: PolledRow, record: PayoutRecord): boolean {
  const errorCode =
    typeof record.error_code === 'number' && record.error_code > 0 ? record.error_code : null;
  return (
    String(record.id) === row.withdrawId &&
    record.status === row.gatewayStatus &&
    (record.ps_currency ?? row.psCurrency) === row.psCurrency &&
    (amountOf(record.payee_receive)?.toString() ?? row.payeeReceive) === row.payeeReceive &&
    (amountOf(record.shop_write_off)?.toString() ?? row.shopWriteOff) === row.shopWriteOff &&
    errorCode === row.errorCode &&
    (errorCode !== null || row.gatewayMessage === null)
  );
}

/** A gateway amount (decimal text or number) as an Amount; null when the record leaves it out. */
export function amountOf(v: unknown): Amount | null {
  if (typeof v === 'string' && v !== '') return Amount.fromText(v);
  if (typeof v === 'number' || typeof v === 'bigint') return Amount.fromText(String(v));
  return null;
}
