import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two facts the payout control rules (src/payouts/payout.rules.ts) read: `sent_at`, when the
 * payout's first `withdraw/create` went out (null while it waits for approval): the day it counts
 * on against the daily caps and the start of its watch; and `created_by_key_id`, the key that
 * created it (or submitted its batch), which never approves it. Rows already sent count from
 * their creation, or their last create when they waited for approval.
 */
export class PayoutSentAtAndCreator1795900000001 implements MigrationInterface {
  name = 'PayoutSentAtAndCreator1795900000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payouts" ADD "sent_at" TIMESTAMP WITH TIME ZONE`);
    await q.query(`ALTER TABLE "payouts" ADD "created_by_key_id" character varying(64)`);
    await q.query(
      `UPDATE "payouts" SET "sent_at" = CASE WHEN approvals_required > 0 THEN COALESCE(last_create_at, created_at) ELSE created_at END
        WHERE create_attempts > 0`,
    );
    await q.query(
      `CREATE INDEX "ix_payouts_sent" ON "payouts" ("shop_id", "shop_currency", "sent_at") WHERE sent_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_payouts_sent"`);
    await q.query(`ALTER TABLE "payouts" DROP COLUMN "created_by_key_id"`);
    await q.query(`ALTER TABLE "payouts" DROP COLUMN "sent_at"`);
  }
}
