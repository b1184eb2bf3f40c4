import { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES_BEFORE = `'pending','created','awaiting_payer','ps_create_failed','succeeded','ps_notice_failed','rejected','held','unheld','unknown'`;

/**
 * The service's clock in SQL: `clock_now()` (src/database/clock-sql.ts), `now()` until
 * the sandbox clock moves it, and the offset it was moved by (one row, sandbox mode only); every
 * column that defaulted to `now()` defaults to `clock_now()`, so a row stamped by its default and
 * a row stamped by a statement agree on the time. A lapsed hold is `expired`; when the service acted on
 * a hold by its policy is kept (once per hold; an invoice's own `holdPolicy` is in its
 * request facts).
 */
export class ServiceClockAndHoldPolicy1796300000001 implements MigrationInterface {
  name = 'ServiceClockAndHoldPolicy1796300000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE FUNCTION clock_now() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $clock$SELECT now()$clock$`,
    );
    await q.query(
      `CREATE TABLE "service_clock" ("id" boolean NOT NULL DEFAULT true, "offset_seconds" double precision NOT NULL DEFAULT 0,
         CONSTRAINT "PK_service_clock" PRIMARY KEY ("id"), CONSTRAINT "ck_service_clock_one" CHECK ("id"),
         CONSTRAINT "ck_service_clock_forward" CHECK ("offset_seconds" >= 0))`,
    );
    await q.query(setDefaults('clock_now()', 'now()'));
    await q.query(`ALTER TABLE "invoices" DROP CONSTRAINT "ck_invoices_status"`);
    await q.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_status" CHECK ("status" IN (${STATUSES_BEFORE},'expired'))`,
    );
    await q.query(
      `ALTER TABLE "invoices" ADD "hold_policy_at" TIMESTAMP WITH TIME ZONE`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "invoices" DROP COLUMN "hold_policy_at"`,
    );
    await q.query(`UPDATE "invoices" SET "status" = 'rejected' WHERE "status" = 'expired'`);
    await q.query(`ALTER TABLE "invoices" DROP CONSTRAINT "ck_invoices_status"`);
    await q.query(`ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_status" CHECK ("status" IN (${STATUSES_BEFORE}))`);
    await q.query(setDefaults('now()', 'clock_now()'));
    await q.query(`DROP TABLE "service_clock"`);
    await q.query(`DROP FUNCTION clock_now()`);
  }
}

/** Every column of the public schema whose default is `from` gets `to`. */
function setDefaults(to: string, from: string): string {
  return `DO $do$ DECLARE c record; BEGIN
    FOR c IN SELECT table_name, column_name FROM information_schema.columns
              WHERE table_schema = current_schema() AND column_default = '${from}'
    LOOP
      EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET DEFAULT ${to}', c.table_name, c.column_name);
    END LOOP;
  END $do$`;
}
