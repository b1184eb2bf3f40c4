import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounded tables. A pruned shop event keeps its row (it is also an audit entry: from
 * and to status, cause, key id, details, type and sequence stay for ever) and loses only its
 * `data` payload; the feed's horizon says up to which position events are no longer served.
 * A partial index lets the notification retention find settled notifications oldest first.
 * The console lists invoices, refunds and payouts of every shop newest first: with a million
 * rows that was a full sort per page (bench/large-tables.mjs), now an index walk; likewise the
 * feed filtered by `objectId` alone walked every position.
 */
export class BoundedTables1795600000006 implements MigrationInterface {
  name = 'BoundedTables1795600000006';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "events" DROP CONSTRAINT "ck_events_typed"`);
    await q.query(
      `ALTER TABLE "events" ADD CONSTRAINT "ck_events_typed" CHECK (("type" IS NULL) = ("sequence" IS NULL) AND ("type" IS NOT NULL OR "data" IS NULL))`,
    );
    await q.query(
      `CREATE TABLE "feed_horizon" ("id" smallint NOT NULL DEFAULT 1, "position" bigint NOT NULL DEFAULT 0, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "ck_feed_horizon_one_row" CHECK ("id" = 1), CONSTRAINT "PK_feed_horizon" PRIMARY KEY ("id"))`,
    );
    await q.query(`INSERT INTO "feed_horizon" ("id", "position") VALUES (1, 0)`);
    await q.query(
      `CREATE INDEX "ix_notifications_settled" ON "notifications" ("last_received_at") WHERE verified AND status IN ('applied','stale')`,
    );
    for (const t of ['invoices', 'refunds', 'payouts'])
      await q.query(`CREATE INDEX "ix_${t}_created_all" ON "${t}" ("created_at", "id")`);
    await q.query(
      `CREATE INDEX "ix_events_object_position" ON "events" ("entity_id", "position") WHERE "position" IS NOT NULL`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_events_object_position"`);
    for (const t of ['invoices', 'refunds', 'payouts'])
      await q.query(`DROP INDEX "ix_${t}_created_all"`);
    await q.query(`DROP INDEX "ix_notifications_settled"`);
    await q.query(`DROP TABLE "feed_horizon"`);
    await q.query(`ALTER TABLE "events" DROP CONSTRAINT "ck_events_typed"`);
    // Pruned events cannot get their payload back: a down migration needs none left.
    await q.query(
      `ALTER TABLE "events" ADD CONSTRAINT "ck_events_typed" CHECK (("type" IS NULL) = ("sequence" IS NULL) AND ("type" IS NULL) = ("data" IS NULL))`,
    );
  }
}
