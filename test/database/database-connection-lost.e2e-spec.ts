import { Client, type Pool, type PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { poolOf } from '../../src/common/sql';
import { dataSourceOptions } from '../../src/database/data-source';
import { createTestDatabase } from '../support/database';

/**
 * A connection that PostgreSQL ends while nobody is listening on it must not end the process.
 *
 * pg-pool hands a freed client to a waiting TypeORM query runner synchronously and the runner
 * listens for its errors a promise tick later; a server's last message (FATAL 57P01 when it stops)
 * arriving in that gap was an `error` event without a listener, which Node throws: the chaos
 * suite's database-loss scenario lost its service process that way. Here the gap is made wide: a
 * client taken with `await pool.connect()` has no listener of its owner at all, and its backend is
 * terminated while it sits checked out. Without the pool's guarded client class, Jest sees an
 * uncaught exception and this suite fails.
 */
let db: { url: string; drop(): Promise<void> };
let ds: DataSource;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = new DataSource(dataSourceOptions(db.url, 2));
  await ds.initialize();
  pool = poolOf(ds);
}, 60000);

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

async function terminate(pid: number): Promise<void> {
  const admin = new Client({ connectionString: db.url });
  await admin.connect();
  try {
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  } finally {
    await admin.end();
  }
}

async function backendPid(client: PoolClient): Promise<number> {
  const rows = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return rows.rows[0].pid;
}

it('a checked-out connection ended by the server is an error of its next query, not of the process', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown): void => void uncaught.push(e);
  process.prependListener('uncaughtException', onUncaught);
  try {
    // The owner (this test) does not listen for the client's errors.
    const client = await pool.connect();
    try {
      const pid = await backendPid(client);
      await terminate(pid);
      // The FATAL message and the socket's end arrive while the client sits idle in our hands.
      await new Promise((r) => setTimeout(r, 300));
      expect(uncaught).toEqual([]);
      await expect(client.query('SELECT 1')).rejects.toThrow();
    } finally {
      client.release(new Error('connection lost'));
    }

    // The pool dropped that connection and serves the next request on a new one.
    const [{ ok }] = (await ds.query('SELECT 1 AS ok')) as Array<{ ok: number }>;
    expect(ok).toBe(1);
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
});

it('a transaction whose connection is ended fails with an error; the data source goes on', async () => {
  await expect(
    ds.transaction(async (m) => {
      const [{ pid }] = (await m.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
      await terminate(pid);
      await new Promise((r) => setTimeout(r, 300));
      await m.query('SELECT 1');
    }),
  ).rejects.toThrow();
  const [{ ok }] = (await ds.query('SELECT 1 AS ok')) as Array<{ ok: number }>;
  expect(ok).toBe(1);
});
