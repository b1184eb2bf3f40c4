import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An invoice's status change without a new entry in each of its eleven indexes (the
 * cost of the work in PostgreSQL): PostgreSQL updates a row in place (a HOT update) only when no
 * indexed column changes, and a column named in a partial index's predicate counts. `status` was
 * named by two predicates, so every answer and status change rewrote every index. They now say
 * "not final" as `processed_at IS NULL` (set exactly when an invoice becomes final, with
 * `next_check_at` cleared, so that write changes an indexed column anyway), and the table keeps
 * a fifth of each page free for the new version of a row to stay on its page.
 */
export class InvoiceUpdatesHot1795800000001 implements MigrationInterface {
  name = 'InvoiceUpdatesHot1795800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_invoices_unscheduled"`);
    await q.query(
      `CREATE INDEX "ix_invoices_unscheduled" ON "invoices" ("created_at") WHERE next_check_at IS NULL AND processed_at IS NULL`,
    );
    await q.query(`DROP INDEX "ix_invoices_hold_expiry"`);
    await q.query(
      `CREATE INDEX "ix_invoices_hold_expiry" ON "invoices" ("hold_expires_at") WHERE hold_expires_at IS NOT NULL AND processed_at IS NULL`,
    );
    await q.query(`ALTER TABLE "invoices" SET (fillfactor = 80)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "invoices" RESET (fillfactor)`);
    await q.query(`DROP INDEX "ix_invoices_hold_expiry"`);
    await q.query(
      `CREATE INDEX "ix_invoices_hold_expiry" ON "invoices" ("hold_expires_at") WHERE status = 'held' AND hold_expires_at IS NOT NULL`,
    );
    await q.query(`DROP INDEX "ix_invoices_unscheduled"`);
    await q.query(
      `CREATE INDEX "ix_invoices_unscheduled" ON "invoices" ("created_at") WHERE next_check_at IS NULL AND status NOT IN ('succeeded','rejected','unheld')`,
    );
  }
}
