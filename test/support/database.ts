import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** SQLSTATE 55006 object_in_use: "source database ... is being accessed by other users". */
const OBJECT_IN_USE = '55006';

/**
 * A fresh database for one suite on the test server (TEST_DATABASE_URL: CI's PostgreSQL, or the
 * embedded one from global-setup). By default a copy of the template global-setup migrated once
 * for the run (TEST_TEMPLATE_DATABASE): the schema every migration builds, with no rows, so the
 * app's start-up finds no migration pending instead of running them all again in every suite.
 * `empty: true` gives a database with nothing in it, for the suites that run migrations
 * themselves (from an older schema, or to check what the migrations build).
 */
export async function createTestDatabase(
  opts: { empty?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set (global-setup did not run?)');
  const template = opts.empty ? undefined : process.env.TEST_TEMPLATE_DATABASE;
  const name = `t_${randomBytes(6).toString('hex')}`;
  const create = template
    ? `CREATE DATABASE ${name} TEMPLATE ${template}`
    : `CREATE DATABASE ${name}`;
  // Nothing keeps a session on the template, but a copy PostgreSQL is making for another worker
  // can be counted as one for a moment: try again a little later.
  for (let attempt = 1; ; attempt++) {
    try {
      await admin(serverUrl, create);
      break;
    } catch (e) {
      if (!template || attempt >= 50 || (e as { code?: string }).code !== OBJECT_IN_USE) throw e;
      await new Promise((r) => setTimeout(r, 50 * Math.min(attempt, 10)));
    }
  }
  return {
    url: databaseUrl(serverUrl, name),
    drop: () => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** The URL of database `name` on the server of `serverUrl`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One statement on the server's own database (CREATE/DROP DATABASE cannot run elsewhere). */
export async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
