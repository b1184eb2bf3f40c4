import { statement } from '../common/sql';

/**
 * The invoice's hot statements in plain SQL (issue #23): a create is two round trips, the claim
 * (phase 1) and the answer with its event (phase 3); a read is one.
 */

/**
 * Phase 1: the row and the claim on its gateway call, one statement; nothing when the shop's id
 * exists already. Returns the whole row and its version (`xmin`), so phase 3 can write the answer
 * without reading the row again, on condition that nothing changed it in between.
 */
export const INSERT_CLAIMED = statement(
  'invoice_insert_claimed',
  `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, request_facts, metadata, status,
     amount, currency, payway, payer_price, ps_currency, description, two_step, pay_token,
     save_payment_token, used_payment_token, payment_token_info, extras, client_ip, success_url,
     failed_url, call_owner, call_started_at, call_lease_until, next_check_at, check_deadline)
   VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, 'pending', $6::numeric, $7, $8, $9::numeric, $10, $11,
     $12, $13, $14, $15, $16::jsonb, $17::jsonb, $18, $19, $20, $21, now(),
     now() + make_interval(secs => $22), $23, $24)
   ON CONFLICT DO NOTHING
   RETURNING *, xmin::text AS row_version`,
);

/**
 * Phase 3 of a create the gateway answered, in one round trip: status, facts, released claim and
 * the stored answer on the row, and its event (the shop event with the answer as its view and the
 * object's next sequence) in the same statement. Written only when the row is still the version
 * phase 1 inserted (`xmin`): anything that touched it meanwhile (a notification, a repeat, an
 * operator) sends the answer down the locked path instead, which reads the row as it is now.
 */
export const CREATE_ANSWERED = statement(
  'invoice_create_answered',
  `WITH u AS (
     UPDATE invoices
        SET status = $3::varchar, gateway_status = $4, invoice_id = $5, redirect = $6::jsonb,
            call_owner = NULL, call_lease_until = NULL, response_code = 201,
            response_body = $7::jsonb, updated_at = $8
      WHERE id = $1 AND xmin = $2::text::xid AND status = 'pending' AND response_code IS NULL
      RETURNING shop_order_id)
   INSERT INTO events (entity_type, entity_id, from_status, to_status, cause, details, type, data, key_id, sequence)
   SELECT 'invoice', u.shop_order_id, 'pending', $3::varchar, 'gateway', $9::jsonb, $10::varchar, $7::jsonb, $11,
          (SELECT COALESCE(MAX(e.sequence), 0) + 1 FROM events e
            WHERE e.entity_type = 'invoice' AND e.entity_id = u.shop_order_id AND e.sequence IS NOT NULL)
     FROM u
   RETURNING id`,
);

/** One invoice by the shop's id (reads and a repeat's look-up). */
export const BY_SHOP_ORDER_ID = statement(
  'invoice_by_shop_order_id',
  `SELECT * FROM invoices WHERE shop_id = $1 AND shop_order_id = $2`,
);

/** One invoice by its primary key (an event's snapshot). */
export const BY_ID = statement('invoice_by_id', `SELECT * FROM invoices WHERE id = $1`);

/** One invoice by the shop's id, locked for the rest of the caller's transaction. */
export const LOCK_BY_SHOP_ORDER_ID = statement(
  'invoice_lock_by_shop_order_id',
  `SELECT * FROM invoices WHERE shop_id = $1 AND shop_order_id = $2 FOR UPDATE`,
);
