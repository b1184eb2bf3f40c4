/**
 * The invoice state machine, pure: which status changes are allowed, and how the gateway's
 * numbers and notification words map onto the shop-facing statuses of shared/API.md.
 * Services only orchestrate I/O around these functions.
 */
import { INVOICE_FINAL_STATUSES } from '../domain/statuses';
export type InvoiceStatus =
  | 'pending' // row written, the gateway has not answered yet
  | 'created' // 1
  | 'awaiting_payer' // 2
  | 'ps_create_failed' // 3
  | 'succeeded' // 4, final
  | 'ps_notice_failed' // 5
  | 'rejected' // 6, final
  | 'held' // 8
  | 'unheld' // hold cancelled, final
  | 'expired' // the hold lapsed at the gateway (released after its expires_at, no unhold of ours), final
  | 'unknown'; // outcome not known (time-out); reconciliation settles it

export const INVOICE_STATUSES: readonly InvoiceStatus[] = [
  'pending',
  'created',
  'awaiting_payer',
  'ps_create_failed',
  'succeeded',
  'ps_notice_failed',
  'rejected',
  'held',
  'unheld',
  'expired',
  'unknown',
];

export const FINAL_INVOICE_STATUSES: readonly InvoiceStatus[] = INVOICE_FINAL_STATUSES;

export function isFinal(status: InvoiceStatus): boolean {
  return FINAL_INVOICE_STATUSES.includes(status);
}

/**
 * Progress rank: a status never moves to a lower rank, so a late or out-of-order message
 * (e.g. "created" after "held") cannot move an invoice back. Finals rank highest and are never left.
 */
const RANK: Record<InvoiceStatus, number> = {
  pending: 0,
  unknown: 0,
  created: 1,
  awaiting_payer: 2,
  ps_create_failed: 2,
  ps_notice_failed: 2,
  held: 3,
  succeeded: 4,
  rejected: 4,
  unheld: 4,
  expired: 4,
};

export type TransitionDecision =
  { allowed: true } | { allowed: false; reason: 'same' | 'final' | 'backwards' | 'not_held' };

/** May an invoice in `from` move to `to`? */
export function decideTransition(from: InvoiceStatus, to: InvoiceStatus): TransitionDecision {
  if (from === to) return { allowed: false, reason: 'same' };
  if (isFinal(from)) return { allowed: false, reason: 'final' };
  // Only a hold can be cancelled.
  if ((to === 'unheld' || to === 'expired') && from !== 'held') return { allowed: false, reason: 'not_held' };
  // `unknown` is only where a create whose answer was lost starts; nothing moves back into it.
  if (to === 'pending' || (to === 'unknown' && from !== 'pending'))
    return { allowed: false, reason: 'backwards' };
  if (RANK[to] < RANK[from]) return { allowed: false, reason: 'backwards' };
  return { allowed: true };
}

/** Statuses from which a charge or an unhold may be asked. */
export function canCaptureOrRelease(status: InvoiceStatus): boolean {
  return status === 'held';
}

/**
 * Has this charge or unhold happened already? A two-step invoice is `succeeded` only by a charge
 * of its hold, `unheld` only by a release: a repeat of the request answers the invoice as it is.
 */
export function holdActionDone(
  inv: { status: InvoiceStatus; twoStep: boolean },
  action: 'charge' | 'unhold',
): boolean {
  return action === 'charge' ? inv.twoStep && inv.status === 'succeeded' : inv.status === 'unheld';
}

/** The gateway's numeric invoice status (invoice/check, invoice/charge); null for a number we do not know. */
export function statusFromGatewayNumber(n: number | null | undefined): InvoiceStatus | null {
  switch (n) {
    case 1:
      return 'created';
    case 2:
      return 'awaiting_payer';
    case 3:
      return 'ps_create_failed';
    case 4:
      return 'succeeded';
    case 5:
      return 'ps_notice_failed';
    case 6:
      return 'rejected';
    case 8:
      return 'held';
    default:
      return null;
  }
}

/** The gateway's number for a status, where one exists. */
export function gatewayNumberOf(status: InvoiceStatus): number | null {
  const map: Partial<Record<InvoiceStatus, number>> = {
    created: 1,
    awaiting_payer: 2,
    ps_create_failed: 3,
    succeeded: 4,
    ps_notice_failed: 5,
    rejected: 6,
    held: 8,
  };
  return map[status] ?? null;
}

/**
 * The `status` word of a payment notification (the spec shows `success`; the same family uses
 * `rejected`; a hold is reported as `hold`). Numbers sent as text are read as gateway numbers.
 * Null for a word we do not know: the notification is stored, not applied.
 */
export function statusFromNotification(word: string | undefined): InvoiceStatus | null {
  if (word === undefined) return null;
  const w = word.trim().toLowerCase();
  if (/^\d+$/.test(w)) return statusFromGatewayNumber(Number(w));
  switch (w) {
    case 'success':
    case 'succeeded':
    case 'paid':
      return 'succeeded';
    // Only the word the gateway family is known to send: `fail`, `failed`, `declined` may well
    // describe one attempt of a payer who then pays, so they are not read as a final rejection.
    case 'rejected':
      return 'rejected';
    case 'hold':
    case 'held':
      return 'held';
    case 'waiting':
    case 'pending':
      return 'awaiting_payer';
    case 'created':
    case 'new':
      return 'created';
    default:
      return null;
  }
}
