import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The in-flight gateway call's claim (who, when, lease) on invoices, refunds and
 * payouts; attention (flag + reason) on all three; evidence of absence over time; the payout's
 * last create time and last poll error; indexes for the claim and attention queries.
 */
export class AtomicPhasesAndAttention1795324765936 implements MigrationInterface {
  name = 'AtomicPhasesAndAttention1795324765936';

  public async up(q: QueryRunner): Promise<void> {
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(
        `ALTER TABLE "${t}" ADD "call_owner" character varying(64), ADD "call_started_at" TIMESTAMP WITH TIME ZONE, ADD "call_lease_until" TIMESTAMP WITH TIME ZONE, ADD "attention_reason" text, ADD "attention_at" TIMESTAMP WITH TIME ZONE, ADD "absent_count" integer NOT NULL DEFAULT 0, ADD "first_absent_at" TIMESTAMP WITH TIME ZONE`,
      );
    }
    await q.query(
      `ALTER TABLE "payouts" ADD "needs_attention" boolean NOT NULL DEFAULT false, ADD "last_create_at" TIMESTAMP WITH TIME ZONE, ADD "last_error" text`,
    );
    // The invoice reconciler's scheduling statement: only open rows not yet scheduled.
    await q.query(
      `CREATE INDEX "ix_invoices_unscheduled" ON "invoices" ("created_at") WHERE next_check_at IS NULL AND needs_attention = false AND status NOT IN ('succeeded','rejected','unheld')`,
    );
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(
        `CREATE INDEX "ix_${t}_attention" ON "${t}" ("attention_at") WHERE needs_attention`,
      );
      await q.query(`CREATE INDEX "ix_${t}_created" ON "${t}" ("shop_id", "created_at", "id")`);
    }
    await q.query(`CREATE INDEX "ix_refunds_order" ON "refunds" ("shop_id", "shop_order_id")`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_refunds_order"`);
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(`DROP INDEX "ix_${t}_created"`);
      await q.query(`DROP INDEX "ix_${t}_attention"`);
    }
    await q.query(`DROP INDEX "ix_invoices_unscheduled"`);
    await q.query(
      `ALTER TABLE "payouts" DROP COLUMN "needs_attention", DROP COLUMN "last_create_at", DROP COLUMN "last_error"`,
    );
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(
        `ALTER TABLE "${t}" DROP COLUMN "call_owner", DROP COLUMN "call_started_at", DROP COLUMN "call_lease_until", DROP COLUMN "attention_reason", DROP COLUMN "attention_at", DROP COLUMN "absent_count", DROP COLUMN "first_absent_at"`,
      );
    }
  }
}
