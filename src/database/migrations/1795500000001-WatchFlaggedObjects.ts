import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A flag no longer stops the watch, so the index that finds open invoices without a
 * check time covers flagged ones too (their watch lasts until WATCH_MAX_S after creation).
 */
export class WatchFlaggedObjects1795500000001 implements MigrationInterface {
  name = 'WatchFlaggedObjects1795500000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_invoices_unscheduled"`);
    await q.query(
      `CREATE INDEX "ix_invoices_unscheduled" ON "invoices" ("created_at") WHERE next_check_at IS NULL AND status NOT IN ('succeeded','rejected','unheld')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_invoices_unscheduled"`);
    await q.query(
      `CREATE INDEX "ix_invoices_unscheduled" ON "invoices" ("created_at") WHERE next_check_at IS NULL AND needs_attention = false AND status NOT IN ('succeeded','rejected','unheld')`,
    );
  }
}
