import type { DataSource } from 'typeorm';
import { EVENT_ID_PATTERN } from '../../src/audit/event-id';
import { openMigratedDataSource } from '../support/data-source';

/**
 * The database makes every event's public id (`evt_id()`, the column's default): `evt_` + a
 * UUIDv7 of the time it was made. Rewritten in PL/pgSQL (EventIdsInPlpgsql1796700000100) so
 * that its body is not parsed and planned again for every statement that writes an event; the
 * ids it makes are the same kind as before.
 */
let ds: DataSource;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ ds, close } = await openMigratedDataSource());
}, 120000);

afterAll(async () => {
  await close?.();
});

/** The 48-bit millisecond prefix of an id, as a number. */
const millisOf = (id: string): number => parseInt(id.slice(4, 12) + id.slice(13, 17), 16);

it('makes version-7 ids, all distinct, stamped with the time they were made', async () => {
  const now = async (): Promise<number> =>
    Number(
      (
        (await ds.query(
          `SELECT floor(extract(epoch from clock_timestamp()) * 1000)::bigint AS ms`,
        )) as Array<{ ms: string }>
      )[0].ms,
    );
  const before = await now();
  const [{ ids }] = (await ds.query(
    `SELECT array_agg(evt_id()) AS ids FROM generate_series(1, 4000)`,
  )) as Array<{ ids: string[] }>;
  const after = await now();
  expect(ids).toHaveLength(4000);
  for (const id of ids) expect(id).toMatch(EVENT_ID_PATTERN);
  expect(new Set(ids).size).toBe(ids.length);
  // The variant's two bits are random beside the fixed `10`: all four of 8, 9, a, b appear.
  expect(new Set(ids.map((id) => id[23]))).toEqual(new Set(['8', '9', 'a', 'b']));
  for (const id of ids) {
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after);
  }
});

it('evt_id_at stamps the given time to the millisecond', async () => {
  const at = '2026-12-08T01:02:03.456Z';
  const [{ id }] = (await ds.query(`SELECT evt_id_at($1::timestamptz) AS id`, [at])) as Array<{
    id: string;
  }>;
  expect(id).toMatch(EVENT_ID_PATTERN);
  expect(millisOf(id)).toBe(Date.parse(at));
});

it('is still the default of every event, and kept as PL/pgSQL (planned once per session)', async () => {
  const [col] = (await ds.query(
    `SELECT column_default FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'public_id'`,
  )) as Array<{ column_default: string }>;
  expect(col.column_default).toBe('evt_id()');
  const langs = (await ds.query(
    `SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
      WHERE p.proname IN ('evt_id', 'evt_id_at') ORDER BY p.proname`,
  )) as Array<{ proname: string; lanname: string }>;
  expect(langs).toEqual([
    { proname: 'evt_id', lanname: 'plpgsql' },
    { proname: 'evt_id_at', lanname: 'plpgsql' },
  ]);
  const [{ id }] = (await ds.query(
    `INSERT INTO events (entity_type, entity_id, to_status, cause) VALUES ('invoice', 'ev-id-probe', 'pending', 'api')
     RETURNING public_id AS id`,
  )) as Array<{ id: string }>;
  expect(id).toMatch(EVENT_ID_PATTERN);
});
