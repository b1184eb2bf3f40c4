/** The payment links' statements (plain SQL, parameters bound). */

/** One link of the shop by its row id; `$3`: lock it for the rest of the transaction. */
export const LINK_BY_ID = `SELECT * FROM payment_links WHERE id = $1 AND shop_id = $2`;
export const LOCK_LINK_BY_ID = `${LINK_BY_ID} FOR UPDATE`;

/** The shopOrderIds of the invoices of some links, oldest first. */
export const INVOICES_OF_LINKS = `SELECT payment_link_id::text AS link_id, shop_order_id
    FROM invoices WHERE payment_link_id = ANY($1::uuid[]) AND shop_id = $2
   ORDER BY created_at, shop_order_id`;

/** The invoice that holds a single-use link's slot (may still be paid, or was), if any. */
export const SLOT_HOLDER = `SELECT shop_order_id, status, pay_token, redirect IS NOT NULL AS has_redirect
    FROM invoices WHERE payment_link_slot = $1`;

/** The link's last succeeded invoice (its receipt). */
export const PAID_INVOICE = `SELECT shop_order_id, amount, currency, payway, payment_id::text AS payment_id, processed_at
    FROM invoices WHERE payment_link_id = $1 AND status = 'succeeded'
   ORDER BY processed_at DESC NULLS LAST LIMIT 1`;

/** An attempt by its token, or the next number for a new one (under the link's row lock). */
export const ATTEMPT_BY_TOKEN = `SELECT n FROM payment_link_attempts WHERE link_id = $1 AND token = $2`;
export const NEW_ATTEMPT = `WITH bumped AS (
      UPDATE payment_links SET attempts = attempts + 1, updated_at = clock_now()
       WHERE id = $1 RETURNING attempts)
    INSERT INTO payment_link_attempts (link_id, token, n) SELECT $1, $2, attempts FROM bumped
    RETURNING n`;

/** Active links whose expiry has come, claimed a few at a time (another instance skips them). */
export const DUE_LINKS = `SELECT id FROM payment_links
   WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= clock_now()
   ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`;

/** The next expiry of an active link (the sandbox clock stops there). */
export const NEXT_EXPIRY = `SELECT min(expires_at) AS at FROM payment_links
   WHERE status = 'active' AND expires_at IS NOT NULL`;
