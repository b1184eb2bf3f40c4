import { MigrationInterface, QueryRunner } from 'typeorm';
import { followFunction, POSITION_FINALS } from './1796500000010-LedgerPositions';

const list = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(',');

/** A lost or accepted dispute is a chargeback (dispute.state.ts CHARGEBACK_STATUSES). */
const CHARGEBACKS = ['lost', 'accepted'];

/**
 * The position check (LedgerPositions' `ledger_position_mismatches`) over the given kinds of
 * objects: every object whose entries do not sum to the position of its state, and every object
 * posted that no longer exists.
 */
const mismatches = (objects: ReadonlyArray<readonly [string, string, string]>): string => `CREATE OR REPLACE FUNCTION ledger_position_mismatches()
      RETURNS TABLE (object_type varchar, object_pk uuid, object_id varchar, status varchar,
                     posted ledger_leg[], "position" ledger_leg[])
      LANGUAGE sql STABLE AS $$
      WITH sums AS (
        SELECT e.object_type, e.object_pk, l.account, l.currency, sum(l.amount) AS amount
          FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) l
         WHERE e.object_pk IS NOT NULL AND e.object_type IN (${list(objects.map(([type]) => type))})
         GROUP BY 1, 2, 3, 4 HAVING sum(l.amount) <> 0),
      posted AS (
        SELECT s.object_type, s.object_pk,
               array_agg(ROW(s.account, s.currency, s.amount)::ledger_leg ORDER BY s.account, s.currency) AS legs
          FROM sums s GROUP BY 1, 2),
      objects AS (
        ${objects
          .map(
            ([type, table, idColumn]) =>
              `SELECT '${type}'::varchar AS object_type, o.id AS object_pk, o.${idColumn}::varchar AS object_id,
               o.status::varchar AS status, ledger_position_${type}(o) AS pos FROM ${table} o`,
          )
          .join('\n        UNION ALL\n        ')})
      SELECT COALESCE(o.object_type, p.object_type), COALESCE(o.object_pk, p.object_pk),
             COALESCE(o.object_id, (SELECT e.object_id FROM ledger_entries e
                                     WHERE e.object_type = p.object_type AND e.object_pk = p.object_pk LIMIT 1)),
             o.status, COALESCE(p.legs, '{}'), COALESCE(o.pos, '{}')
        FROM objects o FULL JOIN posted p ON p.object_type = o.object_type AND p.object_pk = o.object_pk
       WHERE cardinality(ledger_legs_minus(COALESCE(o.pos, '{}'), COALESCE(p.legs, '{}'))) > 0
       ORDER BY 1, 3
      $$`;

const OBJECTS_010 = [
  ['invoice', 'invoices', 'shop_order_id'],
  ['refund', 'refunds', 'shop_refund_id'],
  ['payout', 'payouts', 'shop_payment_id'],
] as const;
const OBJECTS = [...OBJECTS_010, ['dispute', 'disputes', 'public_id']] as const;

/**
 * Disputes (docs/api.md, "Disputes"): chargebacks an operator records from the gateway's
 * manager, since the gateway's interface has none.
 *
 * - `disputes`: one row per dispute of a paid invoice, `open` until resolved `won`, `lost` or
 *   `accepted`; idempotent by an operator's `Idempotency-Key` (per admin key) and by the
 *   gateway's reference of the chargeback (per shop), both unique indexes.
 * - `invoices.disputed_amount`: the sum of its disputes open, lost or accepted, kept in the
 *   transaction of every dispute change under the invoice's row lock (the lock the refund cap
 *   takes), so a refund and a dispute at once never together exceed what was paid.
 * - The books: a dispute is a ledger object of its own, posted by position like the others
 *   (`ledger_position_dispute`: lost or accepted, its amount debited to `chargebacks` and
 *   credited to `gateway_payment_shop`; open or won, nothing), its trigger made by the same
 *   generator (`followFunction`), and the position check covers it.
 */
export class DisputesAndChargebacks1796600000200 implements MigrationInterface {
  name = 'DisputesAndChargebacks1796600000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "invoices" ADD "disputed_amount" numeric NOT NULL DEFAULT '0'`);
    await q.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_disputed" CHECK ("disputed_amount" >= 0)`,
    );
    await q.query(`CREATE TABLE "disputes" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(),
      "public_id" character varying(40) NOT NULL,
      "shop_id" integer NOT NULL,
      "invoice_pk" uuid NOT NULL,
      "shop_order_id" character varying(255) NOT NULL,
      "amount" numeric NOT NULL,
      "currency" integer NOT NULL,
      "reason" character varying(500) NOT NULL,
      "status" character varying(16) NOT NULL,
      "reported_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "respond_by" TIMESTAMP WITH TIME ZONE,
      "gateway_reference" character varying(255),
      "notes" jsonb NOT NULL DEFAULT '[]',
      "key_id" character varying(16),
      "idempotency_key" character varying(255),
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_now(),
      "resolved_at" TIMESTAMP WITH TIME ZONE,
      "ledger_legs" ledger_leg[] NOT NULL DEFAULT '{}',
      CONSTRAINT "uq_disputes_public_id" UNIQUE ("public_id"),
      CONSTRAINT "ck_disputes_amount" CHECK ("amount" > 0),
      CONSTRAINT "ck_disputes_status" CHECK ("status" IN ('open','won','lost','accepted')),
      CONSTRAINT "ck_disputes_resolved" CHECK (("status" = 'open') = ("resolved_at" IS NULL)),
      CONSTRAINT "PK_disputes_id" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "ix_disputes_invoice" ON "disputes" ("invoice_pk")`);
    await q.query(
      `CREATE INDEX "ix_disputes_created" ON "disputes" ("shop_id", "created_at", "id")`,
    );
    await q.query(
      `CREATE INDEX "ix_disputes_open_respond_by" ON "disputes" ("respond_by", "created_at") WHERE "status" = 'open'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "uq_disputes_idempotency_key" ON "disputes" ("shop_id", "key_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "uq_disputes_gateway_reference" ON "disputes" ("shop_id", "gateway_reference") WHERE "gateway_reference" IS NOT NULL`,
    );
    await q.query(
      `ALTER TABLE "disputes" ADD CONSTRAINT "fk_disputes_invoice" FOREIGN KEY ("invoice_pk") REFERENCES "invoices"("id")`,
    );
    await q.query(
      `ALTER TABLE "disputes" ADD CONSTRAINT "fk_disputes_invoice_shop" FOREIGN KEY ("invoice_pk", "shop_id") REFERENCES "invoices"("id", "shop_id")`,
    );

    // The position of a dispute: a chargeback once lost or accepted, nothing while open or won.
    await q.query(`CREATE FUNCTION ledger_position_dispute(d disputes) RETURNS ledger_leg[]
      LANGUAGE plpgsql IMMUTABLE AS $$
      BEGIN
        IF d.status IN (${list(CHARGEBACKS)}) THEN
          RETURN ARRAY[ROW('chargebacks', d.currency, d.amount),
                       ROW('gateway_payment_shop', d.currency, -d.amount)]::ledger_leg[];
        END IF;
        RETURN '{}';
      END $$`);
    await q.query(
      followFunction(
        'dispute',
        'public_id',
        `CASE WHEN NEW.status IN (${list(CHARGEBACKS)}) AND (TG_OP = 'INSERT' OR OLD.status NOT IN (${list(POSITION_FINALS.dispute)}))
                 THEN 'dispute.lost' END`,
      ),
    );
    await q.query(`CREATE TRIGGER "tr_disputes_ledger_pos" BEFORE INSERT ON "disputes" FOR EACH ROW
      WHEN (NEW.status IN (${list(CHARGEBACKS)})) EXECUTE FUNCTION ledger_follow_dispute()`);
    await q.query(`CREATE TRIGGER "tr_disputes_ledger_ins" AFTER INSERT ON "disputes" FOR EACH ROW
      WHEN (cardinality(NEW.ledger_legs) > 0) EXECUTE FUNCTION ledger_follow_dispute()`);
    await q.query(`CREATE TRIGGER "tr_disputes_ledger_upd" BEFORE UPDATE ON "disputes" FOR EACH ROW
      WHEN (NEW.status IS DISTINCT FROM OLD.status OR NEW.amount IS DISTINCT FROM OLD.amount
            OR NEW.currency IS DISTINCT FROM OLD.currency)
      EXECUTE FUNCTION ledger_follow_dispute()`);
    await q.query(mismatches(OBJECTS));
  }

  async down(q: QueryRunner): Promise<void> {
    // A chargeback posted stays in the books (entries are immutable): going back would lose the
    // object it belongs to.
    const posted = (await q.query(
      `SELECT count(*)::int AS n FROM ledger_entries WHERE object_type = 'dispute'`,
    )) as { n: number }[];
    if (posted[0].n > 0)
      throw new Error(
        `DisputesAndChargebacks down: ${posted[0].n} ledger entries belong to disputes; entries are immutable, so this migration cannot be reverted`,
      );
    await q.query(mismatches(OBJECTS_010));
    for (const t of ['pos', 'ins', 'upd'])
      await q.query(`DROP TRIGGER "tr_disputes_ledger_${t}" ON "disputes"`);
    await q.query(`DROP FUNCTION ledger_follow_dispute()`);
    await q.query(`DROP FUNCTION ledger_position_dispute(disputes)`);
    await q.query(`DROP TABLE "disputes"`);
    await q.query(`ALTER TABLE "invoices" DROP CONSTRAINT "ck_invoices_disputed"`);
    await q.query(`ALTER TABLE "invoices" DROP COLUMN "disputed_amount"`);
  }
}
