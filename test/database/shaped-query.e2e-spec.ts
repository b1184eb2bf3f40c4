import { Client, Pool } from 'pg';
import { planEachTime, run, statement, type Statement } from '../../src/common/sql';
import { valueDifference } from '../../src/common/testing/value-difference';
import { ShapedQuery, type ShapeSlot } from '../../src/database/shaped-query';
import { createTestDatabase } from '../support/database';

/**
 * The hot paths' rows are made from a row shape each statement keeps between executions
 * (src/database/shaped-query.ts) instead of pg's own per-execution one. On the real PostgreSQL,
 * through a client and through a pool, every row is the row pg makes of the same statement: the
 * same keys in the same order, the same values (a Date the same instant, a Buffer the same
 * bytes), the same prototypes; and a statement whose description changes between executions
 * (a column added under an unnamed statement) gets rows of its new shape at once.
 */
let db: Client;
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  db = new Client({ connectionString: database.url });
  await db.connect();
  await db.query(`CREATE TABLE shaped (
    id int PRIMARY KEY, t text, n numeric, j jsonb, ts timestamptz, b bool, raw bytea,
    arr int[], big bigint, f float8)`);
  await db.query(`INSERT INTO shaped VALUES
    (1, 'one', 10.50, '{"b":1,"a":[1,2]}', '2026-12-04T10:00:00.123Z', true, '\\x00ff', '{1,2}', 9007199254740993, 1.5),
    (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (3, 'quote " and \\ back', -0.001, '[]', '1999-01-01T00:00:00Z', false, '', '{}', -1, 'NaN')`);
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
});

/** The rows as pg itself makes them, on a connection of their own. */
async function pgRows(text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
  const c = new Client({ connectionString: database.url });
  await c.connect();
  try {
    return (await c.query({ text, values })).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

/** A pool of `max` connections to the test database, ended after `fn` whatever it does. */
async function withPool(max: number, fn: (pool: Pool) => Promise<void>): Promise<void> {
  const pool = new Pool({ connectionString: database.url, max });
  try {
    await fn(pool);
  } finally {
    await pool.end();
  }
}

function expectSameRows(ours: Record<string, unknown>[], theirs: Record<string, unknown>[]): void {
  // Keys in order and prototypes (valueDifference); Dates' instants and Buffers' bytes (toEqual).
  expect(valueDifference(ours, theirs, { keyOrder: true, prototypes: 'identity' })).toBeNull();
  expect(ours).toEqual(theirs);
}

const CASES: Array<[string, string, unknown[]]> = [
  ['every type, nulls', 'SELECT * FROM shaped WHERE id = ANY($1::int[]) ORDER BY id', [[1, 2, 3]]],
  ['one row', 'SELECT t, n, ts FROM shaped WHERE id = $1', [1]],
  ['no row', 'SELECT t, n FROM shaped WHERE id = $1', [99]],
  [
    'a name twice: the last value, the first place',
    'SELECT id AS x, t, n AS x FROM shaped WHERE id = $1',
    [1],
  ],
  [
    'casts and expressions',
    'SELECT id::text AS id, n * 2 AS twice, j -> $2 AS a FROM shaped WHERE id = $1',
    [1, 'a'],
  ],
  ['no column', 'UPDATE shaped SET t = t WHERE id = $1', [1]],
];

describe('rows made from the kept shape are pg’s rows', () => {
  for (const [title, text, values] of CASES) {
    it(`${title}: named and unnamed, first and later executions`, async () => {
      const theirs = await pgRows(text, values);
      const named = statement(`shaped_${title.replace(/\W+/g, '_')}`, text);
      const unnamed = planEachTime(text);
      for (const st of [named, unnamed]) {
        for (let i = 0; i < 3; i++) {
          expectSameRows(await run(db, st, values), theirs);
        }
      }
    });
  }

  it('a statement used with another shape of rows gets rows of that shape each time', async () => {
    // One unnamed statement object whose rows change shape between executions: a column added
    // under SELECT *, then a text of another type bound to the same name.
    await db.query('CREATE TABLE shifting (id int PRIMARY KEY, a text)');
    await db.query(`INSERT INTO shifting VALUES (1, 'x')`);
    const st: Statement = planEachTime('SELECT * FROM shifting ORDER BY id');
    expectSameRows(await run(db, st, []), await pgRows(st.text, []));
    await db.query('ALTER TABLE shifting ADD COLUMN b numeric DEFAULT 1.25');
    const after = await run(db, st, []);
    expect(Object.keys(after[0])).toEqual(['id', 'a', 'b']);
    expectSameRows(after, await pgRows(st.text, []));
    await db.query('ALTER TABLE shifting ALTER COLUMN b TYPE int USING 7');
    const retyped = await run(db, st, []);
    expect(retyped[0].b).toBe(7);
    expectSameRows(retyped, await pgRows(st.text, []));
  });

  it('each connection’s own type parsers, one statement used on two connections in turn', async () => {
    // pg gives each client its own type overrides (falling back to pg's): a shape made on one
    // connection is used on another only with the same parsers.
    const other = new Client({ connectionString: database.url });
    await other.connect();
    try {
      other.setTypeParser(1700, (v: string) => `numeric ${v}`);
      const st = statement('shaped_two_clients', 'SELECT id, n FROM shaped WHERE id = $1');
      const plain = await pgRows(st.text, [1]);
      for (let i = 0; i < 3; i++) {
        expectSameRows(await run(db, st, [1]), plain);
        expect(await run(other, st, [1])).toEqual([{ id: 1, n: 'numeric 10.50' }]);
      }
      // The shape kept between connections of the same parsers: the pool's connections.
      expectSameRows(await run(db, st, [1]), plain);
    } finally {
      await other.end();
    }
  });

  it('keeps one shape across a pool’s connections (the saving is made, not only correct)', () =>
    withPool(3, async (pool) => {
      const slot: ShapeSlot = {};
      const once = (): Promise<unknown[]> =>
        new Promise((resolve, reject) => {
          const q = new ShapedQuery(
            { text: 'SELECT * FROM shaped WHERE id = $1', values: [1] },
            slot,
          );
          (
            pool as unknown as {
              query: (
                q: ShapedQuery,
                cb: (e: Error | null, r?: { rows: unknown[] }) => void,
              ) => void;
            }
          ).query(q, (e, r) => (e ? reject(e) : resolve(r!.rows)));
        });
      await once();
      const first = slot.shape;
      expect(first?.names).toEqual(['id', 't', 'n', 'j', 'ts', 'b', 'raw', 'arr', 'big', 'f']);
      // Side by side, so the pool opens its three connections, each with its own type overrides.
      await Promise.all(Array.from({ length: 12 }, once));
      expect(pool.totalCount).toBe(3);
      expect(slot.shape).toBe(first);
    }));

  it('runs through a pool: its client is released after each statement, errors included', () =>
    withPool(1, async (pool) => {
      const st = statement('shaped_pool', 'SELECT * FROM shaped WHERE id = $1');
      const theirs = await pgRows(st.text, [1]);
      // One connection: a client not released would hold the second statement for ever.
      for (let i = 0; i < 5; i++) expectSameRows(await run(pool, st, [1]), theirs);
      const bad = planEachTime('SELECT * FROM no_such_table');
      await expect(run(pool, bad, [])).rejects.toMatchObject({ code: '42P01' });
      expectSameRows(await run(pool, st, [1]), theirs);
      expect(pool.totalCount).toBe(1);
      expect(pool.idleCount).toBe(1);
    }));

  it('a failing statement rejects with pg’s error, and the client goes on', async () => {
    const st = statement('shaped_bad_cast', 'SELECT $1::int AS v');
    await expect(run(db, st, ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    expect(await run(db, st, ['12'])).toEqual([{ v: 12 }]);
  });
});
