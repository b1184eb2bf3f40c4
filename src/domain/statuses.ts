/**
 * The status sets of the money objects, in a folder that imports nothing: each object's own
 * module (its state machine, its SQL as bound parameters) and any other module that has to ask
 * about it without importing it (invoices/ about refunds, reports about all three) read the same
 * set here. Nothing here knows an entity; the literal types match the entities' columns.
 */

export const INVOICE_FINAL_STATUSES = ['succeeded', 'rejected', 'unheld', 'expired'] as const;

export const REFUND_STATUSES = ['WAITING', 'SUCCESS', 'FAILED'] as const;
export const REFUND_FINAL_STATUSES = ['SUCCESS', 'FAILED'] as const;
/**
 * Rule "which refunds count toward what was paid": every refund not FAILED. Of those, SUCCESS is
 * refunded (refunded_amount) and WAITING pending (refund_pending_amount); the refund cap, the
 * disputable amount and the invoice's sums all read these sets.
 */
export const REFUND_REFUNDED = 'SUCCESS';
export const REFUND_PENDING = 'WAITING';
export const REFUND_COUNTED_STATUSES = [REFUND_REFUNDED, REFUND_PENDING] as const;

/** A refund submit whose outcome is still open: sent or being sent, the gateway's answer not had. */
export const REFUND_OPEN_SUBMIT_STATES = ['pending', 'unknown'] as const;

export const PAYOUT_FINAL_STATUSES = ['succeeded', 'failed', 'rejected', 'cancelled'] as const;
/**
 * Payouts that hold nothing against the daily caps or a balance figure: those that gave their
 * write-off back (`rejected`, `failed`, `cancelled`) and those never sent (`awaiting_approval`).
 */
export const PAYOUT_HOLDING_NOTHING = ['rejected', 'failed', 'cancelled', 'awaiting_approval'] as const;

/**
 * Rule "is this refund open": not final, or its submit's outcome still open. What may still
 * explain a difference between the gateway's refunded sum and ours.
 */
export function isOpenRefund(r: { status: string; submitState: string }): boolean {
  return (
    !(REFUND_FINAL_STATUSES as readonly string[]).includes(r.status) ||
    (REFUND_OPEN_SUBMIT_STATES as readonly string[]).includes(r.submitState)
  );
}

/** SQL twin of isOpenRefund over a `refunds` row: `$final` REFUND_FINAL_STATUSES, `$open` REFUND_OPEN_SUBMIT_STATES. */
export function openRefundSql(final: string, open: string): string {
  return `(status <> ALL(${final}::text[]) OR submit_state = ANY(${open}::text[]))`;
}
