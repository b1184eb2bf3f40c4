// The processes of a run: PostgreSQL (DATABASE_URL's server, else embedded), the gateway sandbox,
// the compiled service as `npm start` runs it, and the bare baseline (bench/baseline.mjs).
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createDatabase, freePort, sleep, spawnProcess, startDatabaseServer, stopProcess, waitForStatus } from '../support.mjs';
import { ADMIN_KEY, SECRET, SHOP_ID, SHOP_KEY } from './settings.mjs';
import { cleanups } from './state.mjs';

// startDatabaseServer requires the compiled service's modules by paths relative to bench/.
const require = createRequire(new URL('../support.mjs', import.meta.url));
const env = process.env;

export let dbServer;
export let sandbox;
export let sandboxUrl;

/** The built-in catalogue with a shop balance large enough for P4's payouts. */
function benchCatalogue() {
  const catalogue = JSON.parse(readFileSync('src/sandbox/catalogue.json', 'utf8'));
  catalogue.balances = catalogue.balances.map((b) => ({ ...b, available: '100000000.00' }));
  mkdirSync('.data', { recursive: true });
  writeFileSync('.data/bench-catalogue.json', JSON.stringify(catalogue));
  return '.data/bench-catalogue.json';
}

async function startSandbox() {
  const port = await freePort();
  const proc = spawnProcess('sandbox', ['dist/src/sandbox/main.js'], {
    SANDBOX_CATALOGUE: benchCatalogue(),
    SANDBOX_PORT: String(port),
    SANDBOX_SHOP_ID: String(SHOP_ID),
    SANDBOX_SECRET_KEY: SECRET,
    // One shop for payments and payouts, as the service's settings below (no GATEWAY_PAYOUT_*).
    SANDBOX_PAYOUT_SHOP_ID: String(SHOP_ID),
    LOG_LEVEL: 'warn',
  });
  sandboxUrl = `http://127.0.0.1:${port}`;
  await waitForStatus(`${sandboxUrl}/sandbox/settings`, 200, 30_000, proc);
  return proc;
}

export async function sandboxControl(method, path, body) {
  const res = await fetch(`${sandboxUrl}/sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`sandbox ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text).data;
}

/** The Node flags `npm start` runs the service with (package.json's start script), so the bench runs it the same way. */
function startFlags() {
  const start = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start;
  const m = /\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+dist\/src\/main\.js/.exec(start);
  if (!m) throw new Error(`cannot read the node flags of the start script: ${start}`);
  return m[1].trim().split(/\s+/).filter(Boolean);
}

/**
 * The compiled service as `npm start` runs it after the build, in production mode against the
 * sandbox: a real gateway's settings (GATEWAY_BASE_URL, shop id, secret, keys) pointing at it.
 */
export async function startService(databaseUrl, extra = {}, nodeArgs = []) {
  const port = await freePort();
  // BENCH_PLANT=edge: the planted regression (bench/plant/edge-busy.cjs), to show the goals turn MISS.
  const plant = env.BENCH_PLANT === 'edge' ? ['--require', new URL('../plant/edge-busy.cjs', import.meta.url).pathname] : [];
  const proc = spawnProcess('service', [...startFlags(), ...plant, ...nodeArgs, 'dist/src/main.js'], {
    NODE_ENV: 'production',
    // The default level, as in production: every request's access line and every gateway call's
    // line are written (to a pipe this process drains), and priced with the rest.
    LOG_LEVEL: 'info',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    GATEWAY_BASE_URL: `${sandboxUrl}/gateway/v1/`,
    GATEWAY_SHOP_ID: String(SHOP_ID),
    GATEWAY_SECRET_KEY: SECRET,
    GATEWAY_NONFATAL_ERROR_CODES: '100',
    API_KEYS: SHOP_KEY,
    ADMIN_API_KEYS: ADMIN_KEY,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
    // The sandbox speaks plain http on loopback: allowed explicitly (production refuses it otherwise).
    ALLOW_INSECURE_HTTP: 'true',
    DATA_ENCRYPTION_KEYS: `bench1:${'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc='}`,
    // One key drives the whole load: the per-key and per-address limits (#12) would measure themselves.
    RATE_LIMIT_PER_KEY_RPS: '0',
    RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
    ...(env.BENCH_PLANT_US ? { BENCH_PLANT_US: env.BENCH_PLANT_US } : {}),
    ...JSON.parse(env.BENCH_SERVICE_ENV ?? '{}'),
    ...extra,
  });
  proc.url = `http://127.0.0.1:${port}`;
  cleanups.push(() => stopProcess(proc));
  await waitForStatus(`${proc.url}/health/ready`, 200, 90_000, proc);
  return proc;
}

export async function startBaseline(databaseUrl, extra = {}, nodeArgs = []) {
  const port = await freePort();
  const proc = spawnProcess('baseline', [...nodeArgs, 'bench/baseline.mjs'], {
    ...extra,
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    API_KEY: SHOP_KEY,
    GATEWAY_BASE_URL: `${sandboxUrl}/gateway/v1/`,
    GATEWAY_SHOP_ID: String(SHOP_ID),
    GATEWAY_SECRET_KEY: SECRET,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DB_POOL_SIZE: '20',
  });
  proc.url = `http://127.0.0.1:${port}`;
  cleanups.push(() => stopProcess(proc));
  for (let i = 0; i < 300; i++) {
    if (proc.output().includes('baseline listening')) return proc;
    if (proc.child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`baseline did not start:\n${proc.output()}`);
}

/** The service's schema on a fresh database, its scheduler off, so rows can be seeded by SQL. */
export async function migrate(db) {
  const migrator = await startService(db, { SCHEDULER_ENABLED: 'false' });
  await stopProcess(migrator);
}

/** The database server and the sandbox, both stopped by the run's clean-ups. */
export async function startDatabaseAndSandbox() {
  dbServer = await startDatabaseServer(require);
  cleanups.push(() => dbServer.stop());
  sandbox = await startSandbox();
  cleanups.push(() => stopProcess(sandbox));
}

export async function setGatewayLatency(ms) {
  await sandboxControl('POST', '/settings', { latencyMs: ms });
}

/**
 * The bare script again with BASELINE_RECORD=1 (bench/baseline.mjs): it also writes what the
 * service keeps of each request (a create's whole answer and an event row with the view, a
 * notification's event row). Information only: the goals stay ratios to the plain baseline.
 */
export async function recordBaseline(dbName, measure, seed) {
  const db = await createDatabase(dbServer.serverUrl, dbName);
  const proc = await startBaseline(db, { BASELINE_RECORD: '1' });
  if (seed) await seed(db);
  const r = await measure(proc.url, proc.pid);
  await stopProcess(proc);
  return r;
}
