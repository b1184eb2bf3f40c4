import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail becomes the shop-event log (one table, two views): a row with a `type` is a
 * shop event with a per-object `sequence`, the object's view as `data`, and the acting `key_id`.
 * `position` is the feed order, given by the relay after commit (no gaps). Push deliveries are
 * one row per event and address.
 */
export class ShopEvents1795324818287 implements MigrationInterface {
  name = 'ShopEvents1795324818287';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "events" ADD "type" character varying(64)`);
    await q.query(`ALTER TABLE "events" ADD "sequence" integer`);
    await q.query(`ALTER TABLE "events" ADD "data" jsonb`);
    await q.query(`ALTER TABLE "events" ADD "key_id" character varying(16)`);
    await q.query(`ALTER TABLE "events" ADD "position" bigint`);
    await q.query(
      `ALTER TABLE "events" ADD CONSTRAINT "ck_events_typed" CHECK (("type" IS NULL) = ("sequence" IS NULL) AND ("type" IS NULL) = ("data" IS NULL))`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "uq_events_object_sequence" ON "events" ("entity_type", "entity_id", "sequence") WHERE "sequence" IS NOT NULL`,
    );
    await q.query(`CREATE UNIQUE INDEX "uq_events_position" ON "events" ("position")`);
    await q.query(
      `CREATE INDEX "ix_events_unpositioned" ON "events" ("id") WHERE "type" IS NOT NULL AND "position" IS NULL`,
    );
    await q.query(
      `CREATE TABLE "webhook_deliveries" ("id" BIGSERIAL NOT NULL, "event_id" bigint NOT NULL, "url" text NOT NULL, "entity_type" character varying(16) NOT NULL, "entity_id" character varying(255) NOT NULL, "sequence" integer NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT 0, "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "lease_until" TIMESTAMP WITH TIME ZONE, "lease_owner" character varying(64), "last_status" integer, "last_error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "delivered_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_webhook_deliveries" PRIMARY KEY ("id"), CONSTRAINT "uq_webhook_deliveries_event_url" UNIQUE ("event_id", "url"), CONSTRAINT "fk_webhook_deliveries_event" FOREIGN KEY ("event_id") REFERENCES "events"("id"), CONSTRAINT "ck_webhook_deliveries_state" CHECK ("state" IN ('pending','failed','delivered','dead')))`,
    );
    await q.query(
      `CREATE INDEX "ix_webhook_deliveries_due" ON "webhook_deliveries" ("next_attempt_at") WHERE "state" IN ('pending','failed')`,
    );
    await q.query(
      `CREATE INDEX "ix_webhook_deliveries_object" ON "webhook_deliveries" ("url", "entity_type", "entity_id", "sequence") WHERE "state" IN ('pending','failed')`,
    );
    await q.query(
      `CREATE INDEX "ix_webhook_deliveries_state" ON "webhook_deliveries" ("state", "id")`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "webhook_deliveries"`);
    await q.query(`DROP INDEX "ix_events_unpositioned"`);
    await q.query(`DROP INDEX "uq_events_position"`);
    await q.query(`DROP INDEX "uq_events_object_sequence"`);
    await q.query(`ALTER TABLE "events" DROP CONSTRAINT "ck_events_typed"`);
    for (const c of ['position', 'key_id', 'data', 'sequence', 'type'])
      await q.query(`ALTER TABLE "events" DROP COLUMN "${c}"`);
  }
}
