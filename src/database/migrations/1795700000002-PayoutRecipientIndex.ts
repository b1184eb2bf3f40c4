import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Daily caps: a payout's recipient account as a blind index (an HMAC under the data
 * key ring, never the account), so the per-recipient cap sums one account's payouts of a day
 * without the account in clear. Older rows have none: they count toward the shop-wide cap only.
 */
export class PayoutRecipientIndex1795700000002 implements MigrationInterface {
  name = 'PayoutRecipientIndex1795700000002';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "payouts" ADD "account_index" character varying(64)`);
    await q.query(
      `CREATE INDEX "ix_payouts_account_index" ON "payouts" ("shop_id", "account_index", "created_at") WHERE "account_index" IS NOT NULL`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_payouts_account_index"`);
    await q.query(`ALTER TABLE "payouts" DROP COLUMN "account_index"`);
  }
}
