import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every event gets a globally unique, time-ordered public id, `evt_` + a UUIDv7
 * (48 bits of Unix milliseconds, the version, random bits): a shop event's `id` in the feed and
 * its `webhook-id`. The numeric row id stays internal: it repeats across databases, so a receiver
 * that deduplicates across environments would drop real events. The database makes the id
 * (`evt_id()`, the column's default), so no writer can leave one out; existing events get an id
 * from their own creation time.
 */
export class PublicEventIds1795600000007 implements MigrationInterface {
  name = 'PublicEventIds1795600000007';

  public async up(q: QueryRunner): Promise<void> {
    const fromMs = (ms: string): string => `
      SELECT 'evt_' || substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-' ||
             substr('89ab', 1 + (get_byte(decode(substr(r, 4, 2), 'hex'), 0) % 4), 1) ||
             substr(r, 6, 3) || '-' || substr(r, 9, 12)
        FROM (SELECT lpad(to_hex(${ms}), 12, '0') AS h,
                     replace(gen_random_uuid()::text, '-', '') AS r) t`;
    await q.query(
      `CREATE FUNCTION evt_id_at(at timestamptz) RETURNS varchar LANGUAGE sql VOLATILE AS $$${fromMs(
        'floor(extract(epoch from at) * 1000)::bigint',
      )}$$`,
    );
    await q.query(
      `CREATE FUNCTION evt_id() RETURNS varchar LANGUAGE sql VOLATILE AS $$ SELECT evt_id_at(clock_timestamp()) $$`,
    );
    await q.query(`ALTER TABLE "events" ADD "public_id" character varying(40)`);
    await q.query(`UPDATE "events" SET "public_id" = evt_id_at(created_at)`);
    await q.query(
      `ALTER TABLE "events" ALTER COLUMN "public_id" SET DEFAULT evt_id(), ALTER COLUMN "public_id" SET NOT NULL`,
    );
    await q.query(`CREATE UNIQUE INDEX "uq_events_public_id" ON "events" ("public_id")`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "uq_events_public_id"`);
    await q.query(`ALTER TABLE "events" DROP COLUMN "public_id"`);
    await q.query(`DROP FUNCTION evt_id()`);
    await q.query(`DROP FUNCTION evt_id_at(timestamptz)`);
  }
}
