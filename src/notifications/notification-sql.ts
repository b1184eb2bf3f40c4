import { planEachTime, statement } from '../common/sql';

/**
 * The inbox's statements (plain SQL, prepared once per connection). The upsert: a new
 * row, or one more delivery of a stored one (its lock taken either way).
 */
export const UPSERT_SQL = `INSERT INTO notifications (type, content_key, payload, content_type, source_ip, verified, status, outcome, shop_order_id, shop_refund_id, id, shop_id, key_version)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   ON CONFLICT (content_key) DO UPDATE
     SET delivery_count = notifications.delivery_count + 1, last_received_at = clock_now()
   RETURNING id, status, (xmax = 0) AS inserted`;
export const UPSERT = statement('notification_upsert', UPSERT_SQL);
/**
 * The upsert, and in the same statement the invoice it is about read and locked for the
 * applier, when the notification is new or not applied yet (a redelivery of an applied one
 * locks nothing). Same order of locks as before: the inbox row, then the invoice.
 */
export const UPSERT_LOCKING_INVOICE = statement(
  'notification_upsert_locking_invoice',
  `WITH n AS (${UPSERT_SQL})
   SELECT n.id AS n_id, n.status AS n_status, n.inserted AS n_inserted, i.*
     FROM n LEFT JOIN LATERAL (
       SELECT * FROM invoices WHERE shop_id = $14 AND shop_order_id = $15 AND n.status = 'pending'
       FOR UPDATE) i ON true`,
);

export const RECORD_OUTCOME = statement(
  'notification_record_outcome',
  `UPDATE notifications
      SET status = $2::varchar, outcome = $3, applied_at = CASE WHEN $2::varchar = 'applied' THEN clock_now() END,
          shop_order_id = $4, shop_refund_id = $5, status_effect = $6
    WHERE id = $1`,
);

/**
 * UPSERT_LOCKING_INVOICE for the invoice notifications of one turn (the inbox batch): parameter
 * n is the array of the single statement's parameter n over the notifications (distinct
 * invoices, so distinct content keys); each comes back by its ordinal, with its invoice when it
 * is to be applied.
 */
export const UPSERT_MANY_LOCKING_INVOICES = statement(
  'notification_upsert_many_locking_invoices',
  `WITH v AS (
     SELECT * FROM unnest($1::text[], $2::bpchar[], $3::jsonb[], $4::text[], $5::text[],
       $6::bool[], $7::text[], $8::text[], $9::text[], $10::text[], $11::uuid[], $12::int[],
       $13::int[], $14::int[], $15::text[]) WITH ORDINALITY
       AS v(type, content_key, payload, content_type, source_ip, verified, status, outcome,
            shop_order_id, shop_refund_id, id, shop_id, key_version, lock_shop_id,
            lock_shop_order_id, ord__)),
   n AS (
     INSERT INTO notifications (type, content_key, payload, content_type, source_ip, verified,
       status, outcome, shop_order_id, shop_refund_id, id, shop_id, key_version)
     SELECT type, content_key, payload, content_type, source_ip, verified, status, outcome,
       shop_order_id, shop_refund_id, id, shop_id, key_version FROM v ORDER BY ord__
     ON CONFLICT (content_key) DO UPDATE
       SET delivery_count = notifications.delivery_count + 1, last_received_at = clock_now()
     RETURNING id, status, (xmax = 0) AS inserted, content_key)
   SELECT v.ord__, n.id AS n_id, n.status AS n_status, n.inserted AS n_inserted, i.*
     FROM v JOIN n ON n.content_key = v.content_key
     LEFT JOIN LATERAL (
       SELECT * FROM invoices
        WHERE shop_id = v.lock_shop_id AND shop_order_id = v.lock_shop_order_id
          AND n.status = 'pending'
        FOR UPDATE) i ON true`,
);

/**
 * RECORD_OUTCOME for several notifications: parameter n is the array of its parameter n. Planned
 * at each execution (planEachTime): a generic plan made while the inbox was small kept scanning
 * the whole of it for each batch.
 */
export const RECORD_OUTCOMES = planEachTime(
  `UPDATE notifications n
      SET status = v.status, outcome = v.outcome,
          applied_at = CASE WHEN v.status = 'applied' THEN clock_now() END,
          shop_order_id = v.shop_order_id, shop_refund_id = v.shop_refund_id,
          status_effect = v.status_effect
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
       AS v(id, status, outcome, shop_order_id, shop_refund_id, status_effect)
    WHERE n.id = v.id`,
);

/**
 * The unverified sample beyond NOTIFY_UNVERIFIED_KEEP (each stored unverified notification trims
 * it; notification-retention.ts catches up in batches after the setting is lowered).
 */
export const TRIM_UNVERIFIED = `DELETE FROM notifications WHERE id IN (
   SELECT id FROM notifications WHERE verified = false
   ORDER BY received_at DESC, id DESC OFFSET $1)`;
