import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sum of WAITING refunds on each invoice (refund sums say what they mean), kept
 * beside refunded_amount and backfilled from the refunds waiting now.
 */
export class InvoiceRefundPendingAmount1795500000004 implements MigrationInterface {
  name = 'InvoiceRefundPendingAmount1795500000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE "invoices" ADD "refund_pending_amount" numeric NOT NULL DEFAULT '0'`,
    );
    await q.query(
      `UPDATE invoices i SET refund_pending_amount = w.pending
         FROM (SELECT invoice_pk, SUM(amount) AS pending FROM refunds WHERE status = 'WAITING' GROUP BY invoice_pk) w
        WHERE i.id = w.invoice_pk`,
    );
    await q.query(
      `ALTER TABLE "invoices" ADD CONSTRAINT "ck_invoices_refund_pending" CHECK ("refund_pending_amount" >= 0)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "invoices" DROP CONSTRAINT "ck_invoices_refund_pending"`);
    await q.query(`ALTER TABLE "invoices" DROP COLUMN "refund_pending_amount"`);
  }
}
