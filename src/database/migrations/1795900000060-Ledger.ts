import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The functions this migration creates, as it creates them: LedgerLegsInline's down() puts them
 * back. Their bodies must not change (a database that ran this migration holds them).
 */
export const LEDGER_060 = {
  ENTRY_BALANCED: `CREATE OR REPLACE FUNCTION ledger_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        entry bigint := (to_jsonb(NEW) ->> CASE WHEN TG_TABLE_NAME = 'ledger_entries' THEN 'id' ELSE 'entry_id' END)::bigint;
        off record;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM ledger_postings WHERE entry_id = entry) THEN
          RAISE EXCEPTION 'ledger entry % has no postings', entry USING ERRCODE = 'check_violation';
        END IF;
        SELECT currency, sum(amount) AS total INTO off FROM ledger_postings
          WHERE entry_id = entry GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'ledger entry % does not balance in currency %: debits - credits = %',
            entry, off.currency, off.total USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`,
  POST: `CREATE OR REPLACE FUNCTION ledger_post(
        p_kind varchar, p_object_type varchar, p_object_pk uuid, p_object_id varchar,
        p_key_id varchar, p_note text, p_postings jsonb, p_at timestamptz DEFAULT now())
      RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        entry bigint;
        ev bigint;
      BEGIN
        IF p_object_pk IS NOT NULL THEN
          SELECT max(id) INTO ev FROM events
           WHERE entity_type = p_object_type AND entity_id = p_object_id AND type IS NOT NULL;
        END IF;
        INSERT INTO ledger_entries (created_at, kind, object_type, object_pk, object_id, event_id, key_id, note)
          VALUES (p_at, p_kind, p_object_type, p_object_pk, p_object_id, ev, p_key_id, p_note)
          ON CONFLICT ("object_type", "object_pk", "kind") WHERE "object_pk" IS NOT NULL DO NOTHING
          RETURNING id INTO entry;
        IF entry IS NULL THEN
          RETURN NULL;
        END IF;
        INSERT INTO ledger_postings (entry_id, account, currency, amount)
          SELECT entry, x->>'account', (x->>'currency')::int, (x->>'amount')::numeric
            FROM jsonb_array_elements(p_postings) AS x
           WHERE (x->>'amount')::numeric <> 0;
        RETURN entry;
      END $$`,
  POST_INVOICE: `CREATE OR REPLACE FUNCTION ledger_post_invoice(i invoices, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM ledger_post('invoice.succeeded', 'invoice', i.id, i.shop_order_id, NULL, NULL,
          jsonb_build_array(
            jsonb_build_object('account', 'gateway_payment_shop', 'currency', i.currency, 'amount', i.amount),
            jsonb_build_object('account', 'sales', 'currency', i.currency, 'amount', -i.amount)), p_at);
      END $$`,
  POST_REFUND: `CREATE OR REPLACE FUNCTION ledger_post_refund(r refunds, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM ledger_post('refund.succeeded', 'refund', r.id, r.shop_refund_id, NULL, NULL,
          jsonb_build_array(
            jsonb_build_object('account', 'sales', 'currency', r.currency, 'amount', r.amount),
            jsonb_build_object('account', 'gateway_payment_shop', 'currency', r.currency, 'amount', -r.amount)), p_at);
      END $$`,
  POST_PAYOUT: `CREATE OR REPLACE FUNCTION ledger_post_payout(p payouts, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        w numeric := p.shop_write_off;
        c int := p.shop_currency;
        same boolean := p.ps_currency IS NULL OR p.ps_currency = p.shop_currency;
        sent boolean;
      BEGIN
        IF p.withdraw_id IS NULL OR w IS NULL OR w <= 0 THEN
          RETURN;
        END IF;
        PERFORM ledger_post('payout.sent', 'payout', p.id, p.shop_payment_id, NULL, NULL,
          jsonb_build_array(
            jsonb_build_object('account', 'agent_frozen', 'currency', c, 'amount', w),
            jsonb_build_object('account', 'agent_available', 'currency', c, 'amount', -w)), p_at);
        IF p.status = 'succeeded' THEN
          PERFORM ledger_post('payout.succeeded', 'payout', p.id, p.shop_payment_id, NULL, NULL,
            CASE WHEN same AND p.payee_receive IS NOT NULL AND p.payee_receive <= w THEN jsonb_build_array(
              jsonb_build_object('account', 'payouts_paid', 'currency', c, 'amount', p.payee_receive),
              jsonb_build_object('account', 'payout_fees', 'currency', c, 'amount', w - p.payee_receive),
              jsonb_build_object('account', 'agent_frozen', 'currency', c, 'amount', -w))
            ELSE jsonb_build_array(
              jsonb_build_object('account', 'payouts_paid', 'currency', c, 'amount', w),
              jsonb_build_object('account', 'agent_frozen', 'currency', c, 'amount', -w)) END, p_at);
        ELSIF p.status IN ('failed', 'rejected') THEN
          PERFORM ledger_post('payout.failed', 'payout', p.id, p.shop_payment_id, NULL, NULL,
            jsonb_build_array(
              jsonb_build_object('account', 'agent_available', 'currency', c, 'amount', w),
              jsonb_build_object('account', 'agent_frozen', 'currency', c, 'amount', -w)), p_at);
        END IF;
      END $$`,
};

/**
 * The books: a double-entry ledger (entries and their postings, per account and currency) and
 * the reconciliations with the gateway.
 *
 * - Entries and postings are immutable: UPDATE and DELETE are refused by a trigger.
 * - Each entry balances per currency: a deferred constraint trigger checks, at commit, that the
 *   postings of every entry inserted in the transaction sum to zero in each currency (and that
 *   an entry has postings at all).
 * - The movements of invoices, refunds and payouts are posted by triggers on their tables, in the
 *   statement that changes the row: no change commits without its entry (nor an entry without its
 *   change), a kill between the two is impossible, and the hot paths send nothing more. An entry
 *   of one kind is posted once per object (a unique index), so a repeated write posts nothing.
 *   The rules (the chart of accounts in docs/api.md) are in `ledger_post_*` below; src/ledger
 *   names the same accounts and kinds.
 * - Existing objects are posted by the same functions (backfill), so the books start complete.
 *
 * The next migration (LedgerLegsInline) moves the postings into their entry's row, checked there.
 */
export class Ledger1795900000060 implements MigrationInterface {
  name = 'Ledger1795900000060';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "ledger_entries" (
      "id" BIGSERIAL PRIMARY KEY,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "kind" character varying(32) NOT NULL,
      "object_type" character varying(16),
      "object_pk" uuid,
      "object_id" character varying(255),
      "event_id" bigint,
      "key_id" character varying(64),
      "note" text,
      CONSTRAINT "ck_ledger_entries_kind" CHECK ("kind" IN ('invoice.succeeded','refund.succeeded','payout.sent','payout.succeeded','payout.failed','opening','adjustment')))`);
    await q.query(
      `CREATE UNIQUE INDEX "uq_ledger_entries_object_kind" ON "ledger_entries" ("object_type", "object_pk", "kind") WHERE "object_pk" IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX "ix_ledger_entries_object_id" ON "ledger_entries" ("object_type", "object_id")`,
    );
    await q.query(
      `CREATE INDEX "ix_ledger_entries_created" ON "ledger_entries" ("created_at", "id")`,
    );
    await q.query(`CREATE TABLE "ledger_postings" (
      "id" BIGSERIAL PRIMARY KEY,
      "entry_id" bigint NOT NULL REFERENCES "ledger_entries" ("id"),
      "account" character varying(32) NOT NULL,
      "currency" integer NOT NULL,
      "amount" numeric NOT NULL,
      CONSTRAINT "ck_ledger_postings_account" CHECK ("account" IN ('gateway_payment_shop','sales','agent_frozen','agent_available','payouts_paid','payout_fees','adjustments')),
      CONSTRAINT "ck_ledger_postings_amount" CHECK ("amount" <> 0))`);
    await q.query(`CREATE INDEX "ix_ledger_postings_entry" ON "ledger_postings" ("entry_id")`);
    await q.query(
      `CREATE INDEX "ix_ledger_postings_account" ON "ledger_postings" ("account", "currency")`,
    );

    // Immutable.
    await q.query(`CREATE FUNCTION ledger_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME
          USING ERRCODE = 'restrict_violation';
      END $$`);
    for (const t of ['ledger_entries', 'ledger_postings']) {
      await q.query(
        `CREATE TRIGGER "tr_${t}_immutable" BEFORE UPDATE OR DELETE ON "${t}" FOR EACH ROW EXECUTE FUNCTION ledger_immutable()`,
      );
    }

    // Balanced per currency, checked at commit for every entry the transaction wrote.
    await q.query(LEDGER_060.ENTRY_BALANCED);
    for (const t of ['ledger_entries', 'ledger_postings']) {
      await q.query(
        `CREATE CONSTRAINT TRIGGER "tr_${t}_balanced" AFTER INSERT ON "${t}" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_entry_balanced()`,
      );
    }

    // One entry with its postings ([{account, currency, amount}]); an object's kind posts once.
    await q.query(LEDGER_060.POST);

    await q.query(LEDGER_060.POST_INVOICE);
    await q.query(LEDGER_060.POST_REFUND);
    // A payout: sent once the gateway has it (its id) with its write-off; then final. A payout the
    // gateway refused in its create answer (no id) froze nothing and posts nothing.
    await q.query(LEDGER_060.POST_PAYOUT);

    await q.query(`CREATE FUNCTION ledger_on_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM ledger_post_invoice(NEW, now()); RETURN NULL; END $$`);
    await q.query(`CREATE FUNCTION ledger_on_refund() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM ledger_post_refund(NEW, now()); RETURN NULL; END $$`);
    await q.query(`CREATE FUNCTION ledger_on_payout() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM ledger_post_payout(NEW, now()); RETURN NULL; END $$`);
    // Fired only by the writes that move money (the WHEN clauses), at the end of their statement.
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_upd" AFTER UPDATE ON "invoices" FOR EACH ROW
      WHEN (NEW.status = 'succeeded' AND OLD.status IS DISTINCT FROM 'succeeded') EXECUTE FUNCTION ledger_on_invoice()`);
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_ins" AFTER INSERT ON "invoices" FOR EACH ROW
      WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION ledger_on_invoice()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_upd" AFTER UPDATE ON "refunds" FOR EACH ROW
      WHEN (NEW.status = 'SUCCESS' AND OLD.status IS DISTINCT FROM 'SUCCESS') EXECUTE FUNCTION ledger_on_refund()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_ins" AFTER INSERT ON "refunds" FOR EACH ROW
      WHEN (NEW.status = 'SUCCESS') EXECUTE FUNCTION ledger_on_refund()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_upd" AFTER UPDATE ON "payouts" FOR EACH ROW
      WHEN (NEW.withdraw_id IS NOT NULL AND NEW.shop_write_off IS NOT NULL AND (
        OLD.withdraw_id IS NULL OR OLD.shop_write_off IS NULL OR OLD.status IS DISTINCT FROM NEW.status))
      EXECUTE FUNCTION ledger_on_payout()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_ins" AFTER INSERT ON "payouts" FOR EACH ROW
      WHEN (NEW.withdraw_id IS NOT NULL AND NEW.shop_write_off IS NOT NULL) EXECUTE FUNCTION ledger_on_payout()`);

    // Backfill: the existing objects, dated when they moved.
    await q.query(
      `SELECT ledger_post_invoice(i, COALESCE(i.processed_at, i.updated_at)) FROM invoices i WHERE i.status = 'succeeded' ORDER BY i.created_at`,
    );
    await q.query(
      `SELECT ledger_post_refund(r, COALESCE(r.processed_at, r.updated_at)) FROM refunds r WHERE r.status = 'SUCCESS' ORDER BY r.created_at`,
    );
    await q.query(
      `SELECT ledger_post_payout(p, COALESCE(p.finished_at, p.updated_at)) FROM payouts p WHERE p.withdraw_id IS NOT NULL AND p.shop_write_off IS NOT NULL ORDER BY p.created_at`,
    );

    await q.query(`CREATE TABLE "reconciliations" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "date" date NOT NULL,
      "status" character varying(16) NOT NULL,
      "started_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "finished_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "balances" jsonb NOT NULL,
      "items" jsonb NOT NULL,
      "key_id" character varying(64),
      "needs_attention" boolean NOT NULL DEFAULT false,
      "attention_reason" text,
      "attention_at" TIMESTAMP WITH TIME ZONE,
      CONSTRAINT "ck_reconciliations_status" CHECK ("status" IN ('balanced','variances')))`);
    await q.query(
      `CREATE INDEX "ix_reconciliations_finished" ON "reconciliations" ("finished_at" DESC)`,
    );
    // The daily run's claim: one instance per day (a lease, so a killed run is taken over).
    await q.query(`CREATE TABLE "reconciliation_days" (
      "date" date PRIMARY KEY,
      "lease_until" TIMESTAMP WITH TIME ZONE NOT NULL,
      "reconciliation_id" uuid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "reconciliation_days"`);
    await q.query(`DROP TABLE "reconciliations"`);
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(`DROP TRIGGER "tr_${t}_ledger_upd" ON "${t}"`);
      await q.query(`DROP TRIGGER "tr_${t}_ledger_ins" ON "${t}"`);
    }
    await q.query(`DROP FUNCTION ledger_on_invoice()`);
    await q.query(`DROP FUNCTION ledger_on_refund()`);
    await q.query(`DROP FUNCTION ledger_on_payout()`);
    await q.query(`DROP FUNCTION ledger_post_invoice(invoices, timestamptz)`);
    await q.query(`DROP FUNCTION ledger_post_refund(refunds, timestamptz)`);
    await q.query(`DROP FUNCTION ledger_post_payout(payouts, timestamptz)`);
    await q.query(
      `DROP FUNCTION ledger_post(varchar, varchar, uuid, varchar, varchar, text, jsonb, timestamptz)`,
    );
    await q.query(`DROP TABLE "ledger_postings"`);
    await q.query(`DROP TABLE "ledger_entries"`);
    await q.query(`DROP FUNCTION ledger_entry_balanced()`);
    await q.query(`DROP FUNCTION ledger_immutable()`);
  }
}
