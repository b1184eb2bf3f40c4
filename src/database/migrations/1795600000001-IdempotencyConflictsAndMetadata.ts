import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The shop's `metadata` on invoices, refunds and payouts (a jsonb object, GIN
 * indexed for `metadata @> …` list filters), the count of conflicting repeats of each create's
 * idempotency id (locked past IDEMPOTENCY_CONFLICT_LIMIT), and an invoice's request facts (the
 * non-secret fields of its create, canonical) so a conflict can name the fields that differ.
 */
export class IdempotencyConflictsAndMetadata1795600000001 implements MigrationInterface {
  name = 'IdempotencyConflictsAndMetadata1795600000001';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['invoices', 'refunds', 'payouts']) {
      await q.query(`ALTER TABLE "${table}" ADD "metadata" jsonb NOT NULL DEFAULT '{}'`);
      await q.query(`ALTER TABLE "${table}" ADD "idempotency_conflicts" integer NOT NULL DEFAULT '0'`);
      await q.query(`CREATE INDEX "ix_${table}_metadata" ON "${table}" USING gin ("metadata")`);
    }
    await q.query(`ALTER TABLE "invoices" ADD "request_facts" jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "invoices" DROP COLUMN "request_facts"`);
    for (const table of ['payouts', 'refunds', 'invoices']) {
      await q.query(`DROP INDEX "ix_${table}_metadata"`);
      await q.query(`ALTER TABLE "${table}" DROP COLUMN "idempotency_conflicts"`);
      await q.query(`ALTER TABLE "${table}" DROP COLUMN "metadata"`);
    }
  }
}
