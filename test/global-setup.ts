import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { admin, databaseUrl } from './support/database';
import { freePort } from './support/ports';

/**
 * Integration and e2e suites run against a real PostgreSQL: the server named by
 * TEST_DATABASE_URL when set (CI), otherwise an embedded one started here for the run.
 * Each suite then creates its own database on that server (test/support/database.ts), a copy of
 * the template migrated here once for the run.
 */
export default async function globalSetup(): Promise<void> {
  process.env.TZ = 'UTC';
  // Suites that run the real service as a child process (start-up, crash recovery) use the
  // compiled build; build it once here, before any suite runs. Emit only (--noCheck): type errors
  // are `npm run typecheck`'s to report, and checking here cost a third of the build's time.
  execFileSync(process.execPath, ['scripts/build.mjs', '--no-check'], { stdio: 'inherit' });
  if (!process.env.TEST_DATABASE_URL) {
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
  await migrateTemplate(process.env.TEST_DATABASE_URL);
}

/**
 * The template every suite's database is copied from: all the app's migrations run once, by the
 * compiled build's own runner (src/database/migrate.ts), in a child process that closes every
 * connection before it exits (PostgreSQL copies a template only while no session is on it). A
 * name of its own per run, so runs sharing CI's server do not meet; global-teardown drops it.
 */
async function migrateTemplate(serverUrl: string): Promise<void> {
  const name = `tmpl_${randomBytes(6).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const script = `
    require('reflect-metadata');
    const { DataSource } = require('typeorm');
    const { dataSourceOptions } = require('./dist/src/database/data-source');
    const { runMigrations } = require('./dist/src/database/migrate');
    (async () => {
      const ds = new DataSource(dataSourceOptions(process.env.TEMPLATE_URL, 2));
      await ds.initialize();
      try { await runMigrations(ds); } finally { await ds.destroy(); }
    })().catch((e) => { console.error(e); process.exit(1); });`;
  // Not execFileSync: the embedded server writes its log to this process, which must stay free
  // to read it meanwhile.
  await promisify(execFile)(process.execPath, ['-e', script], {
    env: { ...process.env, TEMPLATE_URL: databaseUrl(serverUrl, name) },
  });
  process.env.TEST_TEMPLATE_DATABASE = name;
}
