import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { ControlledPostgres } from './support/world';

/**
 * The chaos suite (npm run test:chaos): the compiled service, built here once, and a PostgreSQL
 * of the suite's own (embedded, on its own port; TEST_DATABASE_URL is not used: the suite must be
 * able to stop it). Each scenario makes its own database on it; the database-loss scenario runs
 * a server of its own that it stops and starts.
 */
export default async function globalSetup(): Promise<void> {
  process.env.TZ = 'UTC';
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  mkdirSync('.data', { recursive: true });
  const results = `.data/chaos-results-${process.pid}.jsonl`;
  rmSync(results, { force: true });
  process.env.CHAOS_RESULTS = results;
  const pg = await ControlledPostgres.start();
  process.env.CHAOS_PG_URL = pg.url;
  (globalThis as { __CHAOS_PG__?: ControlledPostgres }).__CHAOS_PG__ = pg;
}
