import { MigrationInterface, QueryRunner } from 'typeorm';
import { LEDGER_POST_070 } from './1795900000070-LedgerLegsInline';

/**
 * An operator's adjustment may carry an `Idempotency-Key`: a retried request (a time-out, a
 * second click) posts nothing more. The key is the admin key's own (unique per `key_id`); a
 * repeat is told from another adjustment under the same key by the entry itself (its legs and
 * note). `ledger_post` takes the key; posting refuses a second entry under either unique index.
 */
export class LedgerAdjustmentKeys1795900000080 implements MigrationInterface {
  name = 'LedgerAdjustmentKeys1795900000080';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "ledger_entries" ADD COLUMN "idempotency_key" character varying(255)`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "uq_ledger_entries_idempotency" ON "ledger_entries" (COALESCE("key_id", ''), "idempotency_key") WHERE "idempotency_key" IS NOT NULL`,
    );
    await q.query(
      `DROP FUNCTION ledger_post(varchar, varchar, uuid, varchar, varchar, text, jsonb, timestamptz)`,
    );
    await q.query(`CREATE FUNCTION ledger_post(
        p_kind varchar, p_object_type varchar, p_object_pk uuid, p_object_id varchar,
        p_key_id varchar, p_note text, p_postings jsonb, p_at timestamptz DEFAULT now(),
        p_idempotency_key varchar DEFAULT NULL)
      RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        entry bigint;
      BEGIN
        INSERT INTO ledger_entries (created_at, kind, object_type, object_pk, object_id, key_id, note, legs,
                                    idempotency_key)
          VALUES (p_at, p_kind, p_object_type, p_object_pk, p_object_id, p_key_id, p_note,
            ARRAY(SELECT ROW(x->>'account', (x->>'currency')::int, (x->>'amount')::numeric)::ledger_leg
                    FROM jsonb_array_elements(p_postings) WITH ORDINALITY AS t(x, n)
                   WHERE (x->>'amount')::numeric <> 0 ORDER BY n),
            p_idempotency_key)
          ON CONFLICT DO NOTHING
          RETURNING id INTO entry;
        RETURN entry;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION ledger_post(varchar, varchar, uuid, varchar, varchar, text, jsonb, timestamptz, varchar)`,
    );
    await q.query(LEDGER_POST_070);
    await q.query(`DROP INDEX "uq_ledger_entries_idempotency"`);
    await q.query(`ALTER TABLE "ledger_entries" DROP COLUMN "idempotency_key"`);
  }
}
