/**
 * The payment link's states, pure: `active` until a single-use link's invoice succeeds (`paid`),
 * its `expiresAt` passes (`expired`) or the shop deactivates it (`deactivated`). Only `active`
 * moves; every other state is final.
 */
export const PAYMENT_LINK_STATUSES = ['active', 'paid', 'expired', 'deactivated'] as const;
export type PaymentLinkStatus = (typeof PAYMENT_LINK_STATUSES)[number];

/** May a link in `from` move to `to`? Only an active link moves, and never to itself. */
export function linkMayMove(from: PaymentLinkStatus, to: PaymentLinkStatus): boolean {
  return from === 'active' && to !== 'active';
}
