import { execFileSync } from 'node:child_process';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { freePort } from './support/ports';

/**
 * Integration and e2e suites run against a real PostgreSQL: the server named by
 * TEST_DATABASE_URL when set (CI), otherwise an embedded one started here for the run.
 * Each suite then creates its own database on that server (test/support/database.ts).
 */
export default async function globalSetup(): Promise<void> {
  process.env.TZ = 'UTC';
  // Suites that run the real service as a child process (start-up, crash recovery) use the
  // compiled build; build it once here, before any suite runs. Emit only (--noCheck): type errors
  // are `npm run typecheck`'s to report, and checking here cost a third of the build's time.
  execFileSync(process.execPath, ['scripts/build.mjs', '--no-check'], { stdio: 'inherit' });
  if (process.env.TEST_DATABASE_URL) return;
  const port = await freePort();
  const db = await startEmbeddedPostgres({
    dir: `.data/test-postgres-${port}`,
    port,
    persistent: false,
    database: 'postgres',
  });
  process.env.TEST_DATABASE_URL = db.url;
  (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__ = db;
}
