import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When our invoice/unhold was sent (a 6 after it is the released hold), when the
 * gateway lets a hold lapse (invoice/check's `expires_at`), and when the shop was warned of it.
 * The partial index serves the hold-expiry job's scan of held invoices.
 */
export class UnholdRequestAndHoldExpiry1795500000002 implements MigrationInterface {
  name = 'UnholdRequestAndHoldExpiry1795500000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "invoices" ADD "unhold_requested_at" TIMESTAMP WITH TIME ZONE, ADD "hold_expires_at" TIMESTAMP WITH TIME ZONE, ADD "hold_expiry_warned_at" TIMESTAMP WITH TIME ZONE`,
    );
    await q.query(
      `CREATE INDEX "ix_invoices_hold_expiry" ON "invoices" ("hold_expires_at") WHERE status = 'held' AND hold_expires_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_invoices_hold_expiry"`);
    await q.query(
      `ALTER TABLE "invoices" DROP COLUMN "hold_expiry_warned_at", DROP COLUMN "hold_expires_at", DROP COLUMN "unhold_requested_at"`,
    );
  }
}
