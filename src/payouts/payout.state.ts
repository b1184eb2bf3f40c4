import type { PayoutStatusConfig } from '../config/config';
import { PAYOUT_FINAL_STATUSES as FINALS } from '../domain/statuses';
import type { PayoutStatus } from './payout.entity';

/**
 * The payout state machine, pure. `awaiting_approval`: at or above PAYOUT_APPROVAL_THRESHOLD,
 * stored and never sent until admin keys approve it (→ `pending`, then the create path sends it)
 * or an operator rejects it (→ `rejected`, final, never sent). `pending`: written, the gateway has not answered yet;
 * `unknown`: the create may or may not have happened (time-out, reset); `processing`: the gateway
 * has the payout and it is not final; `needs_attention`: no final status by the deadline, an
 * operator must look, and it is still polled (a later answer settles it). Finals are never left.
 */
export const PAYOUT_STATUSES: readonly PayoutStatus[] = [
  'awaiting_approval',
  'pending',
  'processing',
  'succeeded',
  'failed',
  'rejected',
  'unknown',
  'needs_attention',
  'cancelled',
];

/** The final statuses: never left. */
export const PAYOUT_FINAL_STATUSES: readonly PayoutStatus[] = FINALS;
const FINAL: ReadonlySet<PayoutStatus> = new Set<PayoutStatus>(PAYOUT_FINAL_STATUSES);

export function isFinal(status: PayoutStatus): boolean {
  return FINAL.has(status);
}

/**
 * Statuses the poller works on: the gateway still owes us an answer. `needs_attention` too: a
 * flag never stops the watch; past the deadline it is polled every
 * WATCH_INTERVAL_S until WATCH_MAX_S after it was sent (payout.rules.ts `watchStart`).
 */
export function isPolled(status: PayoutStatus): boolean {
  return !isFinal(status) && status !== 'awaiting_approval';
}

/** Never sent to the gateway: nothing to ask about it, nothing to create again. */
export function isUnsent(status: PayoutStatus): boolean {
  return status === 'awaiting_approval';
}

const ALLOWED: Record<PayoutStatus, readonly PayoutStatus[]> = {
  // Approved (then sent by the create path) or rejected by an operator (never sent).
  // Or cancelled with its batch (never sent).
  awaiting_approval: ['pending', 'rejected', 'cancelled'],
  pending: ['processing', 'unknown', 'succeeded', 'failed', 'rejected', 'needs_attention'],
  unknown: ['processing', 'succeeded', 'failed', 'rejected', 'needs_attention'],
  // A repeated create after "absent" can itself time out: processing -> unknown.
  processing: ['unknown', 'succeeded', 'failed', 'rejected', 'needs_attention'],
  // An operator's reconcile may find the final status after the deadline.
  needs_attention: ['succeeded', 'failed', 'rejected'],
  succeeded: [],
  failed: [],
  rejected: [],
  cancelled: [],
};

export type TransitionDecision =
  { allowed: true } | { allowed: false; reason: 'same' | 'final' | 'not_allowed' };

export function decideTransition(from: PayoutStatus, to: PayoutStatus): TransitionDecision {
  if (from === to) return { allowed: false, reason: 'same' };
  if (isFinal(from)) return { allowed: false, reason: 'final' };
  return ALLOWED[from].includes(to) ? { allowed: true } : { allowed: false, reason: 'not_allowed' };
}

/** Status numbers gateway-facts.md lists as non-final; any other non-configured number is logged. */
const KNOWN_NON_FINAL_NUMBERS: ReadonlySet<number> = new Set([1, 2, 3, 4, 7, 9]);

export interface MappedStatus {
  status: PayoutStatus;
  /** False for a number neither configured nor documented: treated as non-final and logged. */
  known: boolean;
}

/** Maps a gateway payout status number through configuration (PAYOUT_STATUS_*). */
export function statusFromGatewayNumber(n: number, cfg: PayoutStatusConfig): MappedStatus {
  if (cfg.success.includes(n)) return { status: 'succeeded', known: true };
  if (cfg.rejected.includes(n)) return { status: 'rejected', known: true };
  if (cfg.failed.includes(n)) return { status: 'failed', known: true };
  return { status: 'processing', known: KNOWN_NON_FINAL_NUMBERS.has(n) };
}

/**
 * After `withdraw/shop_payment_status` said "absent": may the create be sent again now?
 * `wait`: the last create may still be in flight at the gateway and would be paid twice: it
 * went out less than a gateway time-out plus the longer of another time-out and one poll
 * interval ago (an "absent" is only believed an interval after a time-out, however short the
 * time-out is set). Checked first: "absent" says nothing while a create may be in flight, at
 * the cap and at the deadline too. `cap`: PAYOUT_MAX_CREATES creates went out and
 * it is still absent → flagged. `late`: past the poll deadline nothing is sent any more: it is
 * flagged (and still polled). `create`: send it once more (same id).
 */
export function decideRecreate(p: {
  now: number;
  createAttempts: number;
  lastCreateAt: number | null;
  maxCreates: number;
  gatewayTimeoutMs: number;
  pollIntervalMs: number;
  pollDeadline: number;
}): 'create' | 'wait' | 'cap' | 'late' {
  const quietMs = p.gatewayTimeoutMs + Math.max(p.gatewayTimeoutMs, p.pollIntervalMs);
  if (p.lastCreateAt !== null && p.now - p.lastCreateAt < quietMs) return 'wait';
  if (p.createAttempts >= p.maxCreates) return 'cap';
  if (p.now >= p.pollDeadline) return 'late';
  return 'create';
}
