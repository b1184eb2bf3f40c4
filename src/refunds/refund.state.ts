/**
 * The refund state machine, pure (gateway-interface.md, "Refund statuses"): WAITING moves to
 * SUCCESS or FAILED, and a final status is never left. Also how a creation answer maps onto
 * status + submit state, and whether a gateway message describes the refund we stored.
 * Services only orchestrate I/O around these functions.
 */
import { backoffSeconds } from '../common/backoff';
import { nextWatchStep, type WatchStep, type WatchWindow } from '../common/watch';
import { Amount } from '../common/money';
import {
  REFUND_FINAL_STATUSES,
  REFUND_OPEN_SUBMIT_STATES,
  REFUND_STATUSES as ALL_REFUND_STATUSES,
} from '../domain/statuses';
import type { RefundStatus, RefundSubmitState } from './refund.entity';

export const REFUND_STATUSES: readonly RefundStatus[] = ALL_REFUND_STATUSES;
export const FINAL_REFUND_STATUSES: readonly RefundStatus[] = REFUND_FINAL_STATUSES;

export function isFinalRefund(status: RefundStatus): boolean {
  return FINAL_REFUND_STATUSES.includes(status);
}

/** FAILED refunds return nothing to the payer, so only they leave room under the paid amount. */
export function countsTowardPaid(status: RefundStatus): boolean {
  return status !== 'FAILED';
}

export type RefundTransition = { allowed: true } | { allowed: false; reason: 'same' | 'final' };

/** May a refund in `from` move to `to`? */
export function decideRefundTransition(from: RefundStatus, to: RefundStatus): RefundTransition {
  if (from === to) return { allowed: false, reason: 'same' };
  if (isFinalRefund(from)) return { allowed: false, reason: 'final' };
  return { allowed: true };
}

/** The gateway's status text (records and notifications); null for a word we do not know. */
export function refundStatusFromGateway(text: unknown): RefundStatus | null {
  if (typeof text !== 'string') return null;
  const upper = text.trim().toUpperCase();
  return (REFUND_STATUSES as readonly string[]).includes(upper) ? (upper as RefundStatus) : null;
}

/** What the creation call answered, reduced to what decides the refund's state. */
export type CreateAnswer =
  /** result: true with a refund record. */
  | { kind: 'accepted'; status: RefundStatus | null }
  /** result: false with a fatal code; `recordStatus` when `data` carries the refund record. */
  | { kind: 'fatal'; recordStatus: RefundStatus | null }
  /** Non-fatal error, unknown code, time-out, reset: the gateway may have created it. */
  | { kind: 'unknown' };

export interface CreateOutcome {
  status: RefundStatus;
  submitState: RefundSubmitState;
  /** True when the shop gets a problem instead of the refund: nothing was created. */
  rejected: boolean;
}

/**
 * Maps the creation answer per the spec's table: basic checks failed (fatal, no record) → not
 * created, stored FAILED/rejected; fatal with a FAILED record → FAILED; accepted → the status
 * returned; anything not known → WAITING/unknown, settled by notification or reconciliation.
 */
export function outcomeOfCreate(answer: CreateAnswer): CreateOutcome {
  switch (answer.kind) {
    case 'accepted':
      // An accepted answer with an unreadable status is still a created refund: wait for its status.
      return { status: answer.status ?? 'WAITING', submitState: 'accepted', rejected: false };
    case 'fatal':
      return answer.recordStatus === null
        ? { status: 'FAILED', submitState: 'rejected', rejected: true }
        : { status: 'FAILED', submitState: 'accepted', rejected: false };
    case 'unknown':
      return { status: 'WAITING', submitState: 'unknown', rejected: false };
  }
}

export interface StoredRefundFacts {
  shopId: number;
  amount: Amount;
  gatewayInvoiceId: string | null;
}

export interface ReportedRefundFacts {
  shopId?: string;
  amount?: string;
  invoiceId?: string;
}

/**
 * Why a gateway message (notification or status record) does not describe the stored refund,
 * or null when it matches. Amounts are compared exactly ("100" equals "100.00").
 */
export function mismatchOf(
  stored: StoredRefundFacts,
  reported: ReportedRefundFacts,
): string | null {
  if (reported.shopId !== undefined && reported.shopId !== String(stored.shopId)) {
    return `shop_id ${reported.shopId} is not ${stored.shopId}`;
  }
  if (reported.amount !== undefined) {
    let amount: Amount;
    try {
      amount = Amount.fromText(reported.amount);
    } catch {
      return `amount ${reported.amount} is not a decimal`;
    }
    if (!amount.eq(stored.amount))
      return `amount ${reported.amount} is not ${stored.amount.toString()}`;
  }
  if (
    reported.invoiceId !== undefined &&
    stored.gatewayInvoiceId !== null &&
    reported.invoiceId !== stored.gatewayInvoiceId
  ) {
    return `invoice_id ${reported.invoiceId} is not ${stored.gatewayInvoiceId}`;
  }
  return null;
}

/** Next reconciliation delay: the grace period doubled per attempt, capped at an hour (src/common/backoff.ts). */
export { backoffSeconds };

/**
 * When to ask about a WAITING refund again (pure): with backoff before its check deadline;
 * from the deadline on flagged and asked every WATCH_INTERVAL_S; after WATCH_MAX_S from its
 * creation no longer asked (a flag never stops the watch before that).
 */
export function nextRefundCheck(p: {
  now: Date;
  attempts: number;
  graceS: number;
  deadline: Date | null;
  createdAt: Date;
  watch: WatchWindow;
}): WatchStep {
  return nextWatchStep({
    now: p.now,
    start: p.createdAt,
    deadline: p.deadline,
    cadenceAt: new Date(p.now.getTime() + backoffSeconds(p.graceS, p.attempts) * 1000),
    watch: p.watch,
  });
}

export interface RefundRuleFacts extends StoredRefundFacts {
  status: RefundStatus;
  submitState: RefundSubmitState;
  absentCount: number;
  firstAbsentAt: Date | null;
}

export type RefundEvidence =
  | {
      kind: 'record';
      status: RefundStatus | null;
      statusText: string;
      reported: ReportedRefundFacts;
    }
  | { kind: 'absent' };

export type RefundVerdict =
  /** Apply through the state machine (also a same-status record: it proves the refund exists). */
  | { kind: 'apply'; to: RefundStatus }
  | { kind: 'ignore'; reason: string }
  | { kind: 'attention'; reason: 'mismatch' | 'contradiction'; detail: string }
  | { kind: 'absent'; count: number; firstAt: Date }
  | { kind: 'never_created'; count: number };

/**
 * What a gateway message about a refund means — the one rule for the notification, the
 * reconciler and `?refresh=true`. Not ours → attention; unknown word → not final; a final status
 * contradicting ours → attention, no money state changed; "not listed" is evidence over time: a
 * refund whose submit may not have reached the gateway fails only after `checks` absent answers
 * spread over `windowS` (one missing listing right after a time-out proves nothing).
 */
/** Submit states in which the refund's create may not have reached the gateway (its outcome is open). */
export const OPEN_SUBMIT_STATES: readonly RefundSubmitState[] = REFUND_OPEN_SUBMIT_STATES;

export function judgeRefund(
  refund: RefundRuleFacts,
  ev: RefundEvidence,
  policy: { checks: number; windowS: number; now: Date },
): RefundVerdict {
  if (ev.kind === 'absent') {
    if (!OPEN_SUBMIT_STATES.includes(refund.submitState))
      return {
        kind: 'ignore',
        reason: `not listed, but the gateway accepted it (${refund.submitState})`,
      };
    if (isFinalRefund(refund.status)) return { kind: 'ignore', reason: `already ${refund.status}` };
    const count = refund.absentCount + 1;
    const firstAt = refund.firstAbsentAt ?? policy.now;
    const spread = policy.now.getTime() - firstAt.getTime() >= policy.windowS * 1000;
    return count >= policy.checks && spread
      ? { kind: 'never_created', count }
      : { kind: 'absent', count, firstAt };
  }
  const mismatch = mismatchOf(refund, ev.reported);
  if (mismatch !== null) return { kind: 'attention', reason: 'mismatch', detail: mismatch };
  if (ev.status === null)
    return { kind: 'ignore', reason: `unknown refund status ${ev.statusText}: not final` };
  const d = decideRefundTransition(refund.status, ev.status);
  if (d.allowed || d.reason === 'same') return { kind: 'apply', to: ev.status };
  if (!isFinalRefund(ev.status))
    return { kind: 'ignore', reason: `refund already ${refund.status}: ${ev.status} is late` };
  return {
    kind: 'attention',
    reason: 'contradiction',
    detail: `the gateway says ${ev.status}, the refund is ${refund.status}`,
  };
}
