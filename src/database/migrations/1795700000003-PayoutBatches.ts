import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batches: a batch per (agent shop, batchId) and its rows, each a payout create whose
 * recipient is sealed for the row; rows still to send are found by a partial index.
 */
export class PayoutBatches1795700000003 implements MigrationInterface {
  name = 'PayoutBatches1795700000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "payout_batches" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "shop_id" integer NOT NULL, "batch_id" character varying(100) NOT NULL, "status" character varying(16) NOT NULL, "row_count" integer NOT NULL, "request_fingerprint" character(64) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "completed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "uq_payout_batches_shop_batch" UNIQUE ("shop_id", "batch_id"), CONSTRAINT "ck_payout_batches_status" CHECK ("status" IN ('pending','processing','completed')), CONSTRAINT "PK_payout_batches" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_payout_batches_created" ON "payout_batches" ("created_at", "id")`);
    await q.query(
      `CREATE TABLE "payout_batch_rows" ("batch_pk" uuid NOT NULL, "row_no" integer NOT NULL, "shop_payment_id" character varying(255) NOT NULL, "request" jsonb NOT NULL, "recipient_sealed" text NOT NULL, "state" character varying(16) NOT NULL, "result" jsonb, "lease_until" TIMESTAMP WITH TIME ZONE, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_payout_batch_rows_state" CHECK ("state" IN ('pending','sent','refused')), CONSTRAINT "PK_payout_batch_rows" PRIMARY KEY ("batch_pk", "row_no"))`,
    );
    await q.query(
      `CREATE INDEX "ix_payout_batch_rows_pending" ON "payout_batch_rows" ("batch_pk", "row_no") WHERE state = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "payout_batch_rows"`);
    await q.query(`DROP TABLE "payout_batches"`);
  }
}
