import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Recurrent tokens are kept sealed under the data-encryption key ring, with a blind index for
 * look-ups by token. The clear tokens and the payout accounts sealed with the key derived from
 * GATEWAY_SECRET_KEY are re-sealed by the start-up data step (src/keys/legacy-upgrade.ts): a
 * migration runs without the app's configuration, and the keys are configuration.
 */
export class SealedPaymentTokens1795324915723 implements MigrationInterface {
  name = 'SealedPaymentTokens1795324915723';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "invoices" ADD "payment_token_hash" character(64)`);
    await queryRunner.query(
      `CREATE INDEX "ix_invoices_payment_token_hash" ON "invoices" ("shop_id", "payment_token_hash") WHERE payment_token_hash IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_invoices_payment_token_hash"`);
    await queryRunner.query(`ALTER TABLE "invoices" DROP COLUMN "payment_token_hash"`);
  }
}
