/** The disputes table's statements (plain parameterised SQL). */

/** The columns a dispute's view and its rules read, as TypeORM's entity names them. */
const DISPUTE_COLUMNS = `id, public_id, shop_id, invoice_pk, shop_order_id, amount::text AS amount, currency,
  reason, status, reported_at, respond_by, gateway_reference, notes, key_id, idempotency_key,
  created_at, updated_at, resolved_at`;

/** The amounts of an invoice's disputes that count against what was paid ($2: those statuses). */
export const COUNTED_DISPUTES_SQL = `SELECT amount::text AS amount FROM disputes WHERE invoice_pk = $1 AND status = ANY($2::varchar[])`;

/** A new open dispute; nothing when its idempotency key or gateway reference was taken meanwhile. */
export const INSERT_DISPUTE_SQL = `INSERT INTO disputes (public_id, shop_id, invoice_pk, shop_order_id, amount, currency, reason, status,
                       reported_at, respond_by, gateway_reference, notes, key_id, idempotency_key)
   VALUES ($1, $2, $3, $4, $5, $6, $7, 'open', $8, $9, $10, $11::jsonb, $12, $13)
   ON CONFLICT DO NOTHING
   RETURNING ${DISPUTE_COLUMNS}`;

/** The dispute an earlier create recorded under this key (of this admin key) or this reference. */
export const DISPUTE_BY_CREATE_KEY_SQL = `SELECT ${DISPUTE_COLUMNS} FROM disputes
  WHERE shop_id = $1 AND (($2::varchar IS NOT NULL AND idempotency_key = $2 AND key_id IS NOT DISTINCT FROM $3)
                       OR ($4::varchar IS NOT NULL AND gateway_reference = $4))
  ORDER BY created_at LIMIT 1`;

/** One dispute by its public id, locked (the caller holds its invoice's lock first). */
export const LOCK_DISPUTE_SQL = `SELECT ${DISPUTE_COLUMNS} FROM disputes WHERE shop_id = $1 AND public_id = $2 FOR UPDATE`;

/** A dispute resolved: its outcome, when, and the note appended. */
export const RESOLVE_DISPUTE_SQL = `UPDATE disputes SET status = $2, resolved_at = clock_now(), updated_at = clock_now(),
       notes = notes || $3::jsonb
   WHERE id = $1
   RETURNING ${DISPUTE_COLUMNS}`;

/**
 * The invoice's disputed amount recomputed from its disputes that count ($2), written only when
 * it differs; returns the invoice's id and status when it did.
 */
export const SYNC_DISPUTED_SQL = `UPDATE invoices i SET disputed_amount = s.disputed, updated_at = clock_now()
     FROM (SELECT COALESCE(SUM(amount), 0) AS disputed FROM disputes
            WHERE invoice_pk = $1 AND status = ANY($2::varchar[])) s
    WHERE i.id = $1 AND i.disputed_amount <> s.disputed
    RETURNING i.shop_order_id, i.status, i.disputed_amount::text AS disputed`;
