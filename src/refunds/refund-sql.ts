import { REFUND_COUNTED_STATUSES } from '../domain/statuses';

/** The refunds table's statements (plain parameterised SQL). */

/** The amounts of an invoice's refunds that count toward what was paid (REFUND_COUNTED_STATUSES, bound as $2). */
export const COUNTED_REFUNDS_SQL = `SELECT amount::text AS amount FROM refunds WHERE invoice_pk = $1 AND status = ANY($2::text[])`;

/** COUNTED_REFUNDS_SQL's parameters for one invoice. */
export function countedRefundsParams(invoicePk: string): [string, readonly string[]] {
  return [invoicePk, REFUND_COUNTED_STATUSES];
}

/**
 * A new refund, WAITING and pending, with the claim on its gateway call (owner, start, lease);
 * nothing when the same shopRefundId was committed meanwhile.
 */
export const INSERT_REFUND_SQL = `INSERT INTO refunds (shop_id, shop_refund_id, invoice_pk, shop_order_id, gateway_invoice_id, request_fingerprint,
                      amount, currency, status, submit_state, next_check_at, check_deadline,
                      call_owner, call_started_at, call_lease_until, metadata)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'WAITING', 'pending',
           clock_now() + make_interval(secs => $9), clock_now() + make_interval(secs => $10),
           $11, clock_now(), clock_now() + make_interval(secs => $12), $13)
   ON CONFLICT (shop_id, shop_refund_id) DO NOTHING
   RETURNING id`;

/** The answer replayed to a repeated request (same status code, same body). */
export const STORE_RESPONSE_SQL = `UPDATE refunds SET response_code = $2, response_body = $3 WHERE id = $1`;
