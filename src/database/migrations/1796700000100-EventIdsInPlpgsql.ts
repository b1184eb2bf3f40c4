import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `evt_id()`, the default of every event's public id (PublicEventIds1795600000007), rewritten in
 * PL/pgSQL with the same ids: `evt_` + a UUIDv7 from `clock_timestamp()`. As a SQL function whose
 * body reads from a subquery, it could not be inlined, so PostgreSQL parsed and planned its body
 * (and `evt_id_at`'s) again for every statement that wrote an event; a PL/pgSQL function keeps its
 * plans for the session. Replayed on one connection, the create's two statements cost PostgreSQL
 * 0.82 ms of CPU with the SQL function and 0.69 ms with this one (medians of six alternated rounds
 * of 1,500 creates, lower in each; docs/benchmarks.md, 2026-12-08).
 */
export class EventIdsInPlpgsql1796700000100 implements MigrationInterface {
  name = 'EventIdsInPlpgsql1796700000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE OR REPLACE FUNCTION evt_id_at(at timestamptz) RETURNS varchar LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
          h text := lpad(to_hex(floor(extract(epoch from at) * 1000)::bigint), 12, '0');
          r text := replace(gen_random_uuid()::text, '-', '');
        BEGIN
          RETURN 'evt_' || substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-' ||
                 substr('89ab', 1 + (get_byte(decode(substr(r, 4, 2), 'hex'), 0) % 4), 1) ||
                 substr(r, 6, 3) || '-' || substr(r, 9, 12);
        END $$`,
    );
    await q.query(
      `CREATE OR REPLACE FUNCTION evt_id() RETURNS varchar LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
          RETURN evt_id_at(clock_timestamp());
        END $$`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE OR REPLACE FUNCTION evt_id_at(at timestamptz) RETURNS varchar LANGUAGE sql VOLATILE AS $$
      SELECT 'evt_' || substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-' ||
             substr('89ab', 1 + (get_byte(decode(substr(r, 4, 2), 'hex'), 0) % 4), 1) ||
             substr(r, 6, 3) || '-' || substr(r, 9, 12)
        FROM (SELECT lpad(to_hex(floor(extract(epoch from at) * 1000)::bigint), 12, '0') AS h,
                     replace(gen_random_uuid()::text, '-', '') AS r) t$$`,
    );
    await q.query(
      `CREATE OR REPLACE FUNCTION evt_id() RETURNS varchar LANGUAGE sql VOLATILE AS $$ SELECT evt_id_at(clock_timestamp()) $$`,
    );
  }
}
