import { Client } from 'pg';
import { watchEnd, watchRuns, watchRunsSql } from '../../src/common/watch';
import { SCHEDULE_OPEN_INVOICES_SQL } from '../../src/invoices/invoice-reconciler';
import { createTestDatabase } from '../support/database';

/**
 * The watch's end is one rule: `watchEnd`/`watchRuns` in TS and `watchRunsSql` in the scheduling
 * statements. Held to the same answers on the real PostgreSQL, at and around the end.
 */
let db: Client;
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  // A migrated database: the statements read the service's clock, `clock_now()`.
  database = await createTestDatabase();
  db = new Client({ connectionString: database.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
});

describe('watchRunsSql answers as watchRuns', () => {
  it.each<[string, number]>([
    ['a short watch', 60],
    ['WATCH_MAX_S default-like (a week)', 7 * 86400],
    ['a fraction of a second', 0.5],
  ])('%s', async (_n, maxS) => {
    const watch = { intervalS: 600, maxS };
    await db.query('BEGIN');
    try {
      // now() is fixed for the transaction: both sides see the same instant.
      // In whole milliseconds, rounded down: the Date's instant is never after PostgreSQL's.
      const nowMs = (
        (await db.query(`SELECT floor(extract(epoch from now()) * 1000)::text AS ms`)).rows[0] as {
          ms: string;
        }
      ).ms;
      const now = new Date(Number(nowMs));
      const end = maxS * 1000;
      const offsets = [-end - 86_400_000, -end - 1, -end, -end + 1, -end + 1000, 0, 5000];
      for (const ms of offsets) {
        const start = new Date(now.getTime() + ms);
        const sql = `SELECT ${watchRunsSql('s.started_at', '$1')} AS runs
                       FROM (SELECT $2::timestamptz AS started_at) s`;
        const row = (await db.query(sql, [maxS, start])).rows[0] as { runs: boolean };
        // PostgreSQL's now() has microseconds the Date lacks: exactly at the end it is just past
        // it in SQL and on it in TS, both ended.
        expect({ ms, runs: row.runs }).toEqual({ ms, runs: watchRuns(now, start, watch) });
        expect(watchRuns(now, start, watch)).toBe(now.getTime() < watchEnd(start, watch).getTime());
      }
    } finally {
      await db.query('ROLLBACK');
    }
  });

  it('the invoice scheduling statement keeps a flagged invoice only while the watch runs, by that rule', () => {
    expect(SCHEDULE_OPEN_INVOICES_SQL).toContain(watchRunsSql('created_at', '$3'));
  });

  it('refuses what is not a column and a parameter', () => {
    expect(() => watchRunsSql('created_at; DROP TABLE x', '$1')).toThrow();
    expect(() => watchRunsSql('created_at', '1')).toThrow();
  });
});
