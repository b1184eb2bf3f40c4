import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches that can be stopped and are no oracle: a payout may be `cancelled` (never sent); a
 * batch row too, and a row records when its send began (a cancel leaves such a row alone); a
 * batch records the key that submitted it (its rows are created under that key), when it was
 * cancelled, and its conflicting repeats (locked past IDEMPOTENCY_CONFLICT_LIMIT).
 */
export class PayoutBatchCancelAndKeys1795900000010 implements MigrationInterface {
  name = 'PayoutBatchCancelAndKeys1795900000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payouts" DROP CONSTRAINT "ck_payouts_status"`);
    await q.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_status" CHECK ("status" IN ('awaiting_approval','pending','processing','succeeded','failed','rejected','unknown','needs_attention','cancelled'))`,
    );
    await q.query(
      `ALTER TABLE "payout_batches" ADD "key_id" character varying(64), ADD "key_role" character varying(16), ADD "cancelled_at" TIMESTAMP WITH TIME ZONE, ADD "idempotency_conflicts" integer NOT NULL DEFAULT 0`,
    );
    await q.query(`ALTER TABLE "payout_batch_rows" ADD "send_started_at" TIMESTAMP WITH TIME ZONE`);
    await q.query(`ALTER TABLE "payout_batch_rows" DROP CONSTRAINT "ck_payout_batch_rows_state"`);
    await q.query(
      `ALTER TABLE "payout_batch_rows" ADD CONSTRAINT "ck_payout_batch_rows_state" CHECK ("state" IN ('pending','sent','refused','cancelled'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payout_batch_rows" DROP CONSTRAINT "ck_payout_batch_rows_state"`);
    await q.query(
      `ALTER TABLE "payout_batch_rows" ADD CONSTRAINT "ck_payout_batch_rows_state" CHECK ("state" IN ('pending','sent','refused'))`,
    );
    await q.query(`ALTER TABLE "payout_batch_rows" DROP COLUMN "send_started_at"`);
    await q.query(
      `ALTER TABLE "payout_batches" DROP COLUMN "idempotency_conflicts", DROP COLUMN "cancelled_at", DROP COLUMN "key_role", DROP COLUMN "key_id"`,
    );
    await q.query(`ALTER TABLE "payouts" DROP CONSTRAINT "ck_payouts_status"`);
    await q.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_status" CHECK ("status" IN ('awaiting_approval','pending','processing','succeeded','failed','rejected','unknown','needs_attention'))`,
    );
  }
}
