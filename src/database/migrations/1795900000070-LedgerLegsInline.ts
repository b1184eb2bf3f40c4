import { MigrationInterface, QueryRunner } from 'typeorm';
import { LEDGER_060 } from './1795900000060-Ledger';

const ACCOUNTS = [
  'gateway_payment_shop',
  'sales',
  'agent_frozen',
  'agent_available',
  'payouts_paid',
  'payout_fees',
  'adjustments',
];
const CHART = ACCOUNTS.map((a) => `'${a}'`).join(',');

/**
 * `ledger_post` for the operator's entries (adjustments, opening) as this migration makes it:
 * LedgerAdjustmentKeys's down() puts it back. Its body must not change.
 */
export const LEDGER_POST_070 = `CREATE OR REPLACE FUNCTION ledger_post(
        p_kind varchar, p_object_type varchar, p_object_pk uuid, p_object_id varchar,
        p_key_id varchar, p_note text, p_postings jsonb, p_at timestamptz DEFAULT now())
      RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        entry bigint;
      BEGIN
        INSERT INTO ledger_entries (created_at, kind, object_type, object_pk, object_id, key_id, note, legs)
          VALUES (p_at, p_kind, p_object_type, p_object_pk, p_object_id, p_key_id, p_note,
            ARRAY(SELECT ROW(x->>'account', (x->>'currency')::int, (x->>'amount')::numeric)::ledger_leg
                    FROM jsonb_array_elements(p_postings) WITH ORDINALITY AS t(x, n)
                   WHERE (x->>'amount')::numeric <> 0 ORDER BY n))
          ON CONFLICT ("object_type", "object_pk", "kind") WHERE "object_pk" IS NOT NULL DO NOTHING
          RETURNING id INTO entry;
        RETURN entry;
      END $$`;

/**
 * The posting functions of the objects as this migration makes them: LedgerPositions's down()
 * puts them back. Their bodies must not change.
 */
export const LEDGER_070 = {
  POST_LEGS: `CREATE FUNCTION ledger_post_legs(p_kind varchar, p_object_type varchar,
        p_object_pk uuid, p_object_id varchar, p_legs ledger_leg[], p_at timestamptz)
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ledger_entries (created_at, kind, object_type, object_pk, object_id, legs)
          VALUES (p_at, p_kind, p_object_type, p_object_pk, p_object_id, p_legs)
          ON CONFLICT ("object_type", "object_pk", "kind") WHERE "object_pk" IS NOT NULL DO NOTHING;
      END $$`,
  POST_INVOICE: `CREATE OR REPLACE FUNCTION ledger_post_invoice(i invoices, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM ledger_post_legs('invoice.succeeded', 'invoice', i.id, i.shop_order_id, ARRAY[
          ROW('gateway_payment_shop', i.currency, i.amount),
          ROW('sales', i.currency, -i.amount)]::ledger_leg[], p_at);
      END $$`,
  POST_REFUND: `CREATE OR REPLACE FUNCTION ledger_post_refund(r refunds, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM ledger_post_legs('refund.succeeded', 'refund', r.id, r.shop_refund_id, ARRAY[
          ROW('sales', r.currency, r.amount),
          ROW('gateway_payment_shop', r.currency, -r.amount)]::ledger_leg[], p_at);
      END $$`,
  POST_PAYOUT: `CREATE OR REPLACE FUNCTION ledger_post_payout(p payouts, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        w numeric := p.shop_write_off;
        c int := p.shop_currency;
        legs ledger_leg[];
        kept ledger_leg[] := '{}';
        l ledger_leg;
      BEGIN
        IF p.withdraw_id IS NULL OR w IS NULL OR w <= 0 THEN
          RETURN;
        END IF;
        PERFORM ledger_post_legs('payout.sent', 'payout', p.id, p.shop_payment_id, ARRAY[
          ROW('agent_frozen', c, w), ROW('agent_available', c, -w)]::ledger_leg[], p_at);
        IF p.status = 'succeeded' THEN
          IF (p.ps_currency IS NULL OR p.ps_currency = c) AND p.payee_receive IS NOT NULL AND p.payee_receive <= w THEN
            legs := ARRAY[ROW('payouts_paid', c, p.payee_receive), ROW('payout_fees', c, w - p.payee_receive),
                          ROW('agent_frozen', c, -w)]::ledger_leg[];
          ELSE
            legs := ARRAY[ROW('payouts_paid', c, w), ROW('agent_frozen', c, -w)]::ledger_leg[];
          END IF;
          FOREACH l IN ARRAY legs LOOP
            IF l.amount <> 0 THEN kept := kept || l; END IF;
          END LOOP;
          PERFORM ledger_post_legs('payout.succeeded', 'payout', p.id, p.shop_payment_id, kept, p_at);
        ELSIF p.status IN ('failed', 'rejected') THEN
          PERFORM ledger_post_legs('payout.failed', 'payout', p.id, p.shop_payment_id, ARRAY[
            ROW('agent_available', c, w), ROW('agent_frozen', c, -w)]::ledger_leg[], p_at);
        END IF;
      END $$`,
};

/**
 * The books, cheaper to post and independent of the planner: an entry carries its postings (its
 * legs, `ledger_leg[]`), and a CHECK on the row refuses one that does not balance per currency.
 *
 * Before, the postings were rows of their own, checked at commit by a deferred trigger per
 * posting (two reads of `ledger_postings` each), tied to their entry by a foreign key (one read of
 * `ledger_entries` each) and linked to the object's newest event by a read of `events`. On a
 * growing table those reads ran on plans cached while it was small (sequential scans of the
 * whole table, for each notification), and even with good plans they cost twice the row they
 * checked. Now posting an entry is one INSERT that reads nothing: the legs are checked in the
 * row, the unique (object, kind) index is the only lookup.
 *
 * `ledger_postings` stays, as a read-only view of the legs (entry_id, leg, account, currency,
 * amount), so readers and the daily report read it as before; writing to it is refused.
 * `event_id` is no longer written: readers find the event of the entry's transaction (same
 * `created_at`, see src/ledger/ledger-sql.ts).
 */
export class LedgerLegsInline1795900000070 implements MigrationInterface {
  name = 'LedgerLegsInline1795900000070';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TYPE ledger_leg AS (account character varying(32), currency integer, amount numeric)`,
    );
    // The entry's own check: legs in the chart, none zero, balanced per currency. One pass over
    // the legs in plain expressions (no query) for the usual entry in one currency, so the check
    // costs the row nothing measurable; an entry in several currencies is summed per currency.
    await q.query(`CREATE FUNCTION ledger_legs_balanced(entry bigint, legs ledger_leg[])
      RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
      DECLARE
        l ledger_leg;
        first_currency int;
        total numeric := 0;
        several boolean := false;
        off record;
      BEGIN
        IF legs IS NULL OR cardinality(legs) = 0 THEN
          RAISE EXCEPTION 'ledger entry % has no postings', entry USING ERRCODE = 'check_violation';
        END IF;
        FOREACH l IN ARRAY legs LOOP
          IF l.account IS NULL OR l.account NOT IN (${CHART}) THEN
            RAISE EXCEPTION 'ledger entry %: % is not an account of the chart', entry, coalesce(l.account, 'null')
              USING ERRCODE = 'check_violation';
          END IF;
          IF l.currency IS NULL OR l.amount IS NULL OR l.amount = 0 THEN
            RAISE EXCEPTION 'ledger entry %: a posting needs a currency and an amount other than 0', entry
              USING ERRCODE = 'check_violation';
          END IF;
          IF first_currency IS NULL THEN first_currency := l.currency; END IF;
          IF l.currency = first_currency THEN total := total + l.amount; ELSE several := true; END IF;
        END LOOP;
        IF total <> 0 THEN
          RAISE EXCEPTION 'ledger entry % does not balance in currency %: debits - credits = %',
            entry, first_currency, total USING ERRCODE = 'check_violation';
        END IF;
        IF several THEN
          SELECT x.currency, sum(x.amount) AS total INTO off FROM unnest(legs) x
           GROUP BY x.currency HAVING sum(x.amount) <> 0 ORDER BY x.currency LIMIT 1;
          IF FOUND THEN
            RAISE EXCEPTION 'ledger entry % does not balance in currency %: debits - credits = %',
              entry, off.currency, off.total USING ERRCODE = 'check_violation';
          END IF;
        END IF;
        RETURN true;
      END $$`);

    // The existing entries take their postings in (the immutability trigger is lifted for it).
    await q.query(`ALTER TABLE "ledger_entries" ADD COLUMN "legs" ledger_leg[]`);
    await q.query(`ALTER TABLE "ledger_entries" DISABLE TRIGGER "tr_ledger_entries_immutable"`);
    await q.query(`UPDATE "ledger_entries" e SET "legs" = (
        SELECT array_agg(ROW(p.account, p.currency, p.amount)::ledger_leg ORDER BY p.id)
          FROM "ledger_postings" p WHERE p.entry_id = e.id)`);
    await q.query(`ALTER TABLE "ledger_entries" ENABLE TRIGGER "tr_ledger_entries_immutable"`);
    await q.query(`DROP TABLE "ledger_postings"`);
    await q.query(`DROP TRIGGER "tr_ledger_entries_balanced" ON "ledger_entries"`);
    await q.query(`DROP FUNCTION ledger_entry_balanced()`);
    await q.query(`ALTER TABLE "ledger_entries" ALTER COLUMN "legs" SET NOT NULL`);
    await q.query(
      `ALTER TABLE "ledger_entries" ADD CONSTRAINT "ck_ledger_entries_balanced" CHECK (ledger_legs_balanced(id, legs))`,
    );

    // Nor emptied at once (the row triggers do not see a TRUNCATE).
    await q.query(
      `CREATE TRIGGER "tr_ledger_entries_no_truncate" BEFORE TRUNCATE ON "ledger_entries" FOR EACH STATEMENT EXECUTE FUNCTION ledger_immutable()`,
    );

    // The postings, read as before; written only with their entry.
    await q.query(`CREATE VIEW "ledger_postings" AS
      SELECT e.id AS entry_id, l.leg, l.account, l.currency, l.amount
        FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) WITH ORDINALITY AS l(account, currency, amount, leg)`);
    await q.query(`CREATE FUNCTION ledger_postings_refused() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the ledger is append-only: % on ledger_postings refused (postings are written with their entry)', TG_OP
          USING ERRCODE = 'restrict_violation';
      END $$`);
    await q.query(
      `CREATE TRIGGER "tr_ledger_postings_refused" INSTEAD OF INSERT OR UPDATE OR DELETE ON "ledger_postings" FOR EACH ROW EXECUTE FUNCTION ledger_postings_refused()`,
    );

    // Posting: one INSERT, no reads. An object's kind posts once (the unique index).
    await q.query(LEDGER_070.POST_LEGS);
    // The operator's entries (adjustments, opening): same signature as before.
    await q.query(LEDGER_POST_070);
    await q.query(LEDGER_070.POST_INVOICE);
    await q.query(LEDGER_070.POST_REFUND);
    // A payout: sent once the gateway has it (its id) with its write-off; then final. A payout the
    // gateway refused in its create answer (no id) froze nothing and posts nothing. The fee line
    // only where the payee's currency is the shop's; a leg of 0 (no fee) is left out.
    await q.query(LEDGER_070.POST_PAYOUT);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION ledger_post_legs(varchar, varchar, uuid, varchar, ledger_leg[], timestamptz)`,
    );
    await q.query(`DROP TRIGGER "tr_ledger_entries_no_truncate" ON "ledger_entries"`);
    await q.query(`DROP VIEW "ledger_postings"`);
    await q.query(`DROP FUNCTION ledger_postings_refused()`);
    await q.query(`CREATE TABLE "ledger_postings" (
      "id" BIGSERIAL PRIMARY KEY,
      "entry_id" bigint NOT NULL REFERENCES "ledger_entries" ("id"),
      "account" character varying(32) NOT NULL,
      "currency" integer NOT NULL,
      "amount" numeric NOT NULL,
      CONSTRAINT "ck_ledger_postings_account" CHECK ("account" IN (${CHART})),
      CONSTRAINT "ck_ledger_postings_amount" CHECK ("amount" <> 0))`);
    await q.query(`CREATE INDEX "ix_ledger_postings_entry" ON "ledger_postings" ("entry_id")`);
    await q.query(
      `CREATE INDEX "ix_ledger_postings_account" ON "ledger_postings" ("account", "currency")`,
    );
    await q.query(`INSERT INTO ledger_postings (entry_id, account, currency, amount)
      SELECT e.id, l.account, l.currency, l.amount
        FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) WITH ORDINALITY AS l(account, currency, amount, n)
       ORDER BY e.id, l.n`);
    await q.query(`ALTER TABLE "ledger_entries" DROP CONSTRAINT "ck_ledger_entries_balanced"`);
    await q.query(`ALTER TABLE "ledger_entries" DROP COLUMN "legs"`);
    await q.query(`DROP FUNCTION ledger_legs_balanced(bigint, ledger_leg[])`);
    // The functions of the migration before, as they were.
    await q.query(LEDGER_060.ENTRY_BALANCED);
    for (const t of ['ledger_entries', 'ledger_postings']) {
      await q.query(
        `CREATE CONSTRAINT TRIGGER "tr_${t}_balanced" AFTER INSERT ON "${t}" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_entry_balanced()`,
      );
    }
    await q.query(
      `CREATE TRIGGER "tr_ledger_postings_immutable" BEFORE UPDATE OR DELETE ON "ledger_postings" FOR EACH ROW EXECUTE FUNCTION ledger_immutable()`,
    );
    await q.query(LEDGER_060.POST);
    await q.query(LEDGER_060.POST_INVOICE);
    await q.query(LEDGER_060.POST_REFUND);
    await q.query(LEDGER_060.POST_PAYOUT);
    await q.query(`DROP TYPE ledger_leg`);
  }
}
