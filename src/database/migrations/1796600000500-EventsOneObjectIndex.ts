import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One index of `events` by object instead of two. `ix_events_entity` (entity_type, entity_id)
 * was the leading columns of `uq_events_object_sequence` (entity_type, entity_id, sequence),
 * which only covered the rows with a sequence (shop events), so the rows without one (audit
 * entries alone) needed the other. Made whole, the unique index covers every row: its rule is
 * the same (rows without a sequence never collide, NULLs being distinct), every look-up by
 * object (an object's history, its next sequence, the relay's batch) reads it, and each event
 * written (and each one the feed positions, an update that moves the row) maintains one index
 * less. Built under the same transaction as the drops: writes to `events` wait for the build
 * (reads go on), a few seconds on a table of millions of rows.
 */
export class EventsOneObjectIndex1796600000500 implements MigrationInterface {
  name = 'EventsOneObjectIndex1796600000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE UNIQUE INDEX "uq_events_object_sequence_whole" ON "events" ("entity_type", "entity_id", "sequence")`,
    );
    await q.query(`DROP INDEX "uq_events_object_sequence"`);
    await q.query(
      `ALTER INDEX "uq_events_object_sequence_whole" RENAME TO "uq_events_object_sequence"`,
    );
    await q.query(`DROP INDEX "ix_events_entity"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "ix_events_entity" ON "events" ("entity_type", "entity_id")`);
    await q.query(
      `CREATE UNIQUE INDEX "uq_events_object_sequence_partial" ON "events" ("entity_type", "entity_id", "sequence") WHERE "sequence" IS NOT NULL`,
    );
    await q.query(`DROP INDEX "uq_events_object_sequence"`);
    await q.query(
      `ALTER INDEX "uq_events_object_sequence_partial" RENAME TO "uq_events_object_sequence"`,
    );
  }
}
