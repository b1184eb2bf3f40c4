import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlList } from '../../common/sql';
import { PAYMENT_LINK_STATUSES } from '../../payment-links/payment-link.state';

/**
 * Payment links: a link (amount, currency, description, the payways it offers, single-use or
 * reusable, an optional expiry; made once per `Idempotency-Key`, a unique index) and its attempts, one per payer's form (the attempt token), each
 * numbered: attempt n of link L makes the invoice `<L>-<n>`. The invoices a link made carry
 * `payment_link_id`; a single-use link's invoice also takes the link's one slot
 * (`payment_link_slot`, unique) until it ends unpaid, so two attempts at once make at most one
 * invoice that can be paid.
 */
export class PaymentLinks1796600000100 implements MigrationInterface {
  name = 'PaymentLinks1796600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "payment_links" (
         "id" uuid NOT NULL DEFAULT gen_random_uuid(),
         "shop_id" integer NOT NULL,
         "status" character varying(16) NOT NULL DEFAULT 'active',
         "amount" numeric NOT NULL,
         "currency" integer NOT NULL,
         "description" character varying(255) NOT NULL,
         "payways" jsonb NOT NULL,
         "reusable" boolean NOT NULL DEFAULT false,
         "expires_at" TIMESTAMP WITH TIME ZONE,
         "metadata" jsonb NOT NULL DEFAULT '{}',
         "attempts" integer NOT NULL DEFAULT 0,
         "created_by" character varying(16),
         "idempotency_key" character varying(255),
         "request_facts" jsonb,
         "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_now(),
         "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_now(),
         CONSTRAINT "PK_payment_links" PRIMARY KEY ("id"),
         CONSTRAINT "ck_payment_links_amount" CHECK ("amount" > 0),
         CONSTRAINT "ck_payment_links_status" CHECK ("status" IN (${sqlList(PAYMENT_LINK_STATUSES)})))`,
    );
    await q.query(
      `CREATE INDEX "ix_payment_links_created" ON "payment_links" ("shop_id", "created_at", "id")`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "uq_payment_links_idempotency" ON "payment_links" ("shop_id", "idempotency_key") WHERE idempotency_key IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX "ix_payment_links_expiry" ON "payment_links" ("expires_at") WHERE status = 'active' AND expires_at IS NOT NULL`,
    );
    await q.query(
      `CREATE TABLE "payment_link_attempts" (
         "link_id" uuid NOT NULL,
         "token" character varying(64) NOT NULL,
         "n" integer NOT NULL,
         "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_now(),
         CONSTRAINT "PK_payment_link_attempts" PRIMARY KEY ("link_id", "token"),
         CONSTRAINT "uq_payment_link_attempts_n" UNIQUE ("link_id", "n"))`,
    );
    await q.query(`ALTER TABLE "invoices" ADD "payment_link_id" uuid`);
    await q.query(`ALTER TABLE "invoices" ADD "payment_link_slot" uuid`);
    await q.query(
      `CREATE INDEX "ix_invoices_payment_link" ON "invoices" ("payment_link_id", "created_at") WHERE payment_link_id IS NOT NULL`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "uq_invoices_payment_link_slot" ON "invoices" ("payment_link_slot") WHERE payment_link_slot IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "uq_invoices_payment_link_slot"`);
    await q.query(`DROP INDEX "ix_invoices_payment_link"`);
    await q.query(`ALTER TABLE "invoices" DROP COLUMN "payment_link_slot"`);
    await q.query(`ALTER TABLE "invoices" DROP COLUMN "payment_link_id"`);
    await q.query(`DROP TABLE "payment_link_attempts"`);
    await q.query(`DROP TABLE "payment_links"`);
  }
}
