import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payouts at or above PAYOUT_APPROVAL_THRESHOLD wait in `awaiting_approval` (never
 * sent) until admin keys approve them; `approvals_required` fixes at creation how many distinct
 * keys must. Each admin decision is a row of `payout_approvals`, one per key and payout (the
 * primary key), so the same key can never count twice.
 */
export class PayoutApprovals1795700000001 implements MigrationInterface {
  name = 'PayoutApprovals1795700000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payouts" DROP CONSTRAINT "ck_payouts_status"`);
    await q.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_status" CHECK ("status" IN ('awaiting_approval','pending','processing','succeeded','failed','rejected','unknown','needs_attention'))`,
    );
    await q.query(`ALTER TABLE "payouts" ADD "approvals_required" smallint NOT NULL DEFAULT '0'`);
    await q.query(
      `CREATE TABLE "payout_approvals" ("payout_id" uuid NOT NULL, "key_id" character varying(64) NOT NULL, "decision" character varying(16) NOT NULL, "note" character varying(500), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_payout_approvals_decision" CHECK ("decision" IN ('approve','reject')), CONSTRAINT "PK_payout_approvals" PRIMARY KEY ("payout_id", "key_id"))`,
    );
    await q.query(
      `ALTER TABLE "payout_approvals" ADD CONSTRAINT "fk_payout_approvals_payout" FOREIGN KEY ("payout_id") REFERENCES "payouts"("id")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "payout_approvals"`);
    await q.query(`ALTER TABLE "payouts" DROP COLUMN "approvals_required"`);
    await q.query(`ALTER TABLE "payouts" DROP CONSTRAINT "ck_payouts_status"`);
    await q.query(
      `ALTER TABLE "payouts" ADD CONSTRAINT "ck_payouts_status" CHECK ("status" IN ('pending','processing','succeeded','failed','rejected','unknown','needs_attention'))`,
    );
  }
}
