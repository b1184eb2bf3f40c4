import type { PayoutStatusConfig } from '../config/config';
import type { PayoutStatus } from './payout.entity';

/**
 * The payout state machine, pure. `pending`: written, the gateway has not answered yet;
 * `unknown`: the create may or may not have happened (time-out, reset); `processing`: the gateway
 * has the payout and it is not final; `needs_attention`: no final status by the deadline, an
 * operator must look (a later reconcile may still settle it). Finals are never left.
 */
export const PAYOUT_STATUSES: readonly PayoutStatus[] = [
  'pending',
  'processing',
  'succeeded',
  'failed',
  'rejected',
  'unknown',
  'needs_attention',
];

const FINAL: ReadonlySet<PayoutStatus> = new Set<PayoutStatus>(['succeeded', 'failed', 'rejected']);

export function isFinal(status: PayoutStatus): boolean {
  return FINAL.has(status);
}

/** Statuses the poller works on: the gateway still owes us an answer. */
export function isPolled(status: PayoutStatus): boolean {
  return status === 'pending' || status === 'unknown' || status === 'processing';
}

const ALLOWED: Record<PayoutStatus, readonly PayoutStatus[]> = {
  pending: ['processing', 'unknown', 'succeeded', 'failed', 'rejected', 'needs_attention'],
  unknown: ['processing', 'succeeded', 'failed', 'rejected', 'needs_attention'],
  // A repeated create after "absent" can itself time out: processing -> unknown.
  processing: ['unknown', 'succeeded', 'failed', 'rejected', 'needs_attention'],
  // An operator's reconcile may find the final status after the deadline.
  needs_attention: ['succeeded', 'failed', 'rejected'],
  succeeded: [],
  failed: [],
  rejected: [],
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
