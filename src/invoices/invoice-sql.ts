import { statement } from '../common/sql';

/**
 * The invoice's hot statements in plain SQL: a create is two round trips, the claim
 * (phase 1) and the answer with its event (phase 3, src/audit/event-write.ts on condition of the
 * row's version); a read is one.
 */

/**
 * The columns an invoice's view reads (INVOICE_VIEW_FIELDS, by their database names): the view
 * read below selects them, and a status change returns them for the view of the row it left.
 */
export const INVOICE_VIEW_COLUMNS = [
  'id',
  'shop_order_id',
  'invoice_id',
  'payment_id',
  'status',
  'gateway_status',
  'amount',
  'currency',
  'payway',
  'description',
  'two_step',
  'metadata',
  'payer_price',
  'ps_currency',
  'refunded_amount',
  'refund_pending_amount',
  'disputed_amount',
  'redirect',
  'pay_token',
  'payment_token_info',
  'payment_token',
  'created_at',
  'updated_at',
  'processed_at',
  'hold_expires_at',
  'needs_attention',
  'attention_reason',
  'payment_link_id',
] as const;

/**
 * What phase 1 returns of the row it inserted: the view's columns, the stored answer's code and a
 * payment link's slot, which is all the usual answer reads of it (answerUsual and the status
 * change it writes, create-invoice-answer.ts and invoice-transitions.ts). Any other path reads
 * the row again under its lock. Every column returned is parsed and hydrated, and `*` was twice
 * as many (request facts, call claim, check schedule: written here, never read back).
 */
export const CLAIMED_COLUMNS = [...INVOICE_VIEW_COLUMNS, 'response_code', 'payment_link_slot'] as const;

const CLAIMED_RETURNING = `${CLAIMED_COLUMNS.join(', ')}, xmin::text AS row_version`;

/**
 * Phase 1: the row and the claim on its gateway call, one statement; nothing when the shop's id
 * exists already. Returns CLAIMED_COLUMNS and the row's version (`xmin`), so phase 3 can write the
 * answer without reading the row again, on condition that nothing changed it in between.
 */
export const INSERT_CLAIMED = statement(
  'invoice_insert_claimed',
  `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, request_facts, metadata, status,
     amount, currency, payway, payer_price, ps_currency, description, two_step, pay_token,
     save_payment_token, used_payment_token, payment_token_info, extras, client_ip, success_url,
     failed_url, call_owner, call_started_at, call_lease_until, next_check_at, check_deadline,
     payment_link_id, payment_link_slot)
   VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, 'pending', $6::numeric, $7, $8, $9::numeric, $10, $11,
     $12, $13, $14, $15, $16::jsonb, $17::jsonb, $18, $19, $20, $21, clock_now(),
     clock_now() + make_interval(secs => $22), $23, $24, $25::uuid, $26::uuid)
   ON CONFLICT DO NOTHING
   RETURNING ${CLAIMED_RETURNING}`,
);

/** INSERT_CLAIMED's parameters by position, with the array type each has in INSERT_CLAIMED_MANY. */
const CLAIM_PARAM_TYPES = [
  'int',
  'text',
  'text',
  'jsonb',
  'jsonb',
  'numeric',
  'int',
  'text',
  'numeric',
  'int',
  'text',
  'bool',
  'text',
  'bool',
  'bool',
  'jsonb',
  'jsonb',
  'text',
  'text',
  'text',
  'text',
  'float8',
  'timestamptz',
  'timestamptz',
  'uuid',
  'uuid',
] as const;

/**
 * Phase 1 for the creates of one turn (BatchedWrite): INSERT_CLAIMED for several rows in one
 * statement and one commit. Parameter n is the array of INSERT_CLAIMED's parameter n over the
 * rows (distinct shop ids); a row whose id exists already is not returned, as one alone.
 */
export const INSERT_CLAIMED_MANY = statement(
  'invoice_insert_claimed_many',
  `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, request_facts, metadata, status,
     amount, currency, payway, payer_price, ps_currency, description, two_step, pay_token,
     save_payment_token, used_payment_token, payment_token_info, extras, client_ip, success_url,
     failed_url, call_owner, call_started_at, call_lease_until, next_check_at, check_deadline,
     payment_link_id, payment_link_slot)
   SELECT v.p1, v.p2, v.p3, v.p4, v.p5, 'pending', v.p6, v.p7, v.p8, v.p9, v.p10, v.p11, v.p12,
     v.p13, v.p14, v.p15, v.p16, v.p17, v.p18, v.p19, v.p20, v.p21, clock_now(),
     clock_now() + make_interval(secs => v.p22), v.p23, v.p24, v.p25, v.p26
   FROM unnest(${CLAIM_PARAM_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
     AS v(${CLAIM_PARAM_TYPES.map((_, i) => `p${i + 1}`).join(', ')})
   ON CONFLICT DO NOTHING
   RETURNING ${CLAIMED_RETURNING}`,
);

/** One invoice by the shop's id (reads and a repeat's look-up). */
export const BY_SHOP_ORDER_ID = statement(
  'invoice_by_shop_order_id',
  `SELECT * FROM invoices WHERE shop_id = $1 AND shop_order_id = $2`,
);

/**
 * Invoices by the shop's ids, only the columns their view reads (INVOICE_VIEW_FIELDS; the e2e
 * test "the view read selects exactly the view's fields" holds the two lists equal): the reads
 * one turn of the event loop asked for, in one statement (BatchedRead).
 */
export const VIEWS_BY_SHOP_ORDER_IDS = statement(
  'invoice_views_by_shop_order_ids',
  `SELECT ${INVOICE_VIEW_COLUMNS.join(', ')}
     FROM invoices WHERE shop_id = $1 AND shop_order_id = ANY($2::varchar[])`,
);

/** One invoice by its primary key (an event's snapshot). */
export const BY_ID = statement('invoice_by_id', `SELECT * FROM invoices WHERE id = $1`);

/** One invoice by the shop's id, locked for the rest of the caller's transaction. */
export const LOCK_BY_SHOP_ORDER_ID = statement(
  'invoice_lock_by_shop_order_id',
  `SELECT * FROM invoices WHERE shop_id = $1 AND shop_order_id = $2 FOR UPDATE`,
);

/**
 * Phase 1 of a charge or unhold: the claim on a held row whose gateway id is known; an unhold
 * also records that it was asked for ($5). Nothing when the row is not held, has no gateway id
 * yet, or another call holds it. Parameters: shop id, shop order id, owner, lease seconds,
 * is-unhold.
 */
export const CLAIM_HOLD_ACTION = `UPDATE invoices SET call_owner = $3, call_started_at = clock_now(),
              call_lease_until = clock_now() + make_interval(secs => $4), updated_at = clock_now(),
              unhold_requested_at = CASE WHEN $5::boolean THEN clock_now() ELSE unhold_requested_at END
        WHERE shop_id = $1 AND shop_order_id = $2 AND status = 'held' AND invoice_id IS NOT NULL
          AND call_lease_until IS NULL
        RETURNING id, invoice_id::text AS invoice_id`;
