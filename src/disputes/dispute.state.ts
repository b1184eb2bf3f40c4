/**
 * A dispute's states, pure: `open` until the operator records the gateway's outcome, then one of
 * the final three. A final dispute never moves again (resolving it twice is refused).
 */
export type DisputeStatus = 'open' | 'won' | 'lost' | 'accepted';
export type DisputeOutcome = Exclude<DisputeStatus, 'open'>;

export const DISPUTE_STATUSES: readonly DisputeStatus[] = ['open', 'won', 'lost', 'accepted'];
export const DISPUTE_OUTCOMES: readonly DisputeOutcome[] = ['won', 'lost', 'accepted'];
/** The final statuses (the position rule in SQL reads the same list: POSITION_FINALS.dispute). */
export const FINAL_DISPUTE_STATUSES: readonly DisputeStatus[] = DISPUTE_OUTCOMES;

/**
 * The disputes whose amount the payer's bank holds or took back: open (held while it is argued)
 * and lost or accepted (charged back for good). A won dispute gives its amount back to the
 * invoice.
 */
export const COUNTED_DISPUTE_STATUSES: readonly DisputeStatus[] = ['open', 'lost', 'accepted'];
/** The chargebacks: a lost or accepted dispute, posted to `chargebacks` by the position rule. */
export const CHARGEBACK_STATUSES: readonly DisputeStatus[] = ['lost', 'accepted'];

export type DisputeTransition =
  | { allowed: true }
  | { allowed: false; reason: 'final' | 'not-an-outcome' };

/** Whether an open dispute may take `to`: only open → won | lost | accepted. */
export function decideDisputeTransition(from: DisputeStatus, to: DisputeStatus): DisputeTransition {
  if (!(DISPUTE_OUTCOMES as readonly DisputeStatus[]).includes(to)) return { allowed: false, reason: 'not-an-outcome' };
  if (from !== 'open') return { allowed: false, reason: 'final' };
  return { allowed: true };
}

export function isFinalDispute(s: DisputeStatus): boolean {
  return FINAL_DISPUTE_STATUSES.includes(s);
}
