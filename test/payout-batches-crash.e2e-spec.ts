import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startSandbox, SandboxHandle } from '../src/sandbox/sandbox.server';
import { createTestDatabase } from './support/database';
import { DATA_KEYS, PAYOUT_SHOP_ID, SHOP_ID } from './support/app';
import { freePort } from './support/ports';
import { PAYOUT } from './support/payways';

/**
 * A 1,000-row batch whose compiled service is killed (SIGKILL) while it sends the rows: a new
 * process resumes from the database alone, every row ends sent exactly once at the gateway, and
 * the batch's counts equal its rows' states.
 */
/** npm test runs from the repository root. */
const ROOT = process.cwd();
/** Own build directory: other suites or engineers may be rebuilding dist/ at the same time. */
const OUT = join(ROOT, '.data', `payout-batches-crash-dist-${process.pid}`);
const SHOP_KEY = 'crash-shop-key-0123456789';
const SECRET = 'crash-secret-key';
/** Payouts go through an agent shop of their own, as on a real contract. */
const PAYOUT_SECRET = 'crash-payout-secret-key';

let sandbox: SandboxHandle;
let database: { url: string; drop(): Promise<void> };
let db: Client;
const children: ChildProcess[] = [];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  maxMs: number,
): Promise<T> {
  const until = Date.now() + maxMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function startChild(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(OUT, 'src', 'main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      TZ: 'UTC',
      PORT: String(port),
      DATABASE_URL: database.url,
      GATEWAY_BASE_URL: sandbox.baseUrl,
      GATEWAY_SHOP_ID: String(SHOP_ID),
      ALLOW_INSECURE_HTTP: 'true',
      DATA_ENCRYPTION_KEYS: DATA_KEYS,
      GATEWAY_SECRET_KEY: SECRET,
      GATEWAY_PAYOUT_SHOP_ID: String(PAYOUT_SHOP_ID),
      GATEWAY_PAYOUT_SECRET_KEY: PAYOUT_SECRET,
      GATEWAY_TIMEOUT_MS: '3000',
      API_KEYS: SHOP_KEY,
      ADMIN_API_KEYS: 'crash-admin-key-0123456789',
      SCHEDULER_ENABLED: 'true',
      RECONCILE_TICK_MS: '200',
      PAYOUT_POLL_INTERVAL_S: '0.5',
      PAYOUT_POLL_CONCURRENCY: '4',
      PAYOUT_POLL_MAX_S: '600',
      PAYWAY_REFRESH_S: '600',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    `the service on ${url} (output: ${output})`,
    async () => {
      if (child.exitCode !== null) throw new Error(`service exited: ${output}`);
      const ok = await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      return ok ? true : undefined;
    },
    30000,
  );
  return { child, url, output: () => output };
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

beforeAll(async () => {
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      OUT,
    ],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  expect(existsSync(join(OUT, 'src', 'main.js'))).toBe(true);
  sandbox = await startSandbox({
    port: 0,
    shopId: SHOP_ID,
    secretKey: SECRET,
    payoutShopId: PAYOUT_SHOP_ID,
    payoutSecretKey: PAYOUT_SECRET,
    timeScale: 0.001,
  });
  database = await createTestDatabase();
  db = new Client({ connectionString: database.url });
  await db.connect();
}, 180000);

afterAll(async () => {
  for (const c of children) await killHard(c);
  await db?.end();
  await sandbox?.close();
  await database?.drop();
  execFileSync('rm', ['-rf', OUT]);
});

it('a 1,000-row batch killed mid-way is finished by the restarted service, each row sent once', async () => {
  const first = await startChild();
  const tag = `bc-${Date.now()}`;
  const rows = Array.from({ length: 1000 }, (_, i) => ({
    shopPaymentId: `${tag}-${i + 1}`,
    amount: '100.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: '4111111111111111',
  }));
  const res = await fetch(`${first.url}/api/v1/payouts/batches`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify({ batchId: tag, rows }),
  });
  expect(res.status).toBe(202);
  await waitFor(
    'some rows answered',
    async () => {
      const r = await db.query(`SELECT count(*)::int AS n FROM payout_batch_rows WHERE state <> 'pending'`);
      return (r.rows[0] as { n: number }).n >= 150 ? true : undefined;
    },
    60000,
  ).catch(async (e: Error) => {
    const r = await db.query(`SELECT state, result, lease_until FROM payout_batch_rows ORDER BY row_no LIMIT 3`);
    throw new Error(`${e.message}: ${JSON.stringify(r.rows)} ${first.output().slice(-3000)}`);
  });
  await killHard(first.child);
  const left = await db.query(`SELECT count(*)::int AS n FROM payout_batch_rows WHERE state = 'pending'`);
  expect((left.rows[0] as { n: number }).n).toBeGreaterThan(0);

  const second = await startChild();
  await waitFor(
    `the batch to complete (output: ${second.output()})`,
    async () => {
      const r = await db.query(`SELECT status FROM payout_batches WHERE batch_id = $1`, [tag]);
      return r.rows[0]?.status === 'completed' ? true : undefined;
    },
    150000,
  );
  const sample = await db.query(`SELECT state, result FROM payout_batch_rows WHERE state = 'refused' LIMIT 1`);
  expect(sample.rows).toEqual([]);
  const creates = new Map<string, number>();
  for (const r of sandbox.state.requests)
    if (r.path === 'withdraw/create') {
      const id = String((r.body as Record<string, unknown>).shop_payment_id);
      creates.set(id, (creates.get(id) ?? 0) + 1);
    }
  for (const r of rows) expect([r.shopPaymentId, creates.get(r.shopPaymentId)]).toEqual([r.shopPaymentId, 1]);
  const onGateway = [...sandbox.state.payouts.values()].filter((p) => p.shopPaymentId.startsWith(`${tag}-`));
  expect(onGateway).toHaveLength(1000);

  const got = await fetch(`${second.url}/api/v1/payouts/batches/${tag}?limit=500`, {
    headers: { Authorization: `Bearer ${SHOP_KEY}` },
  });
  const view = (await got.json()) as { counts: Record<string, number> };
  const states = await db.query(
    `SELECT state, count(*)::int AS n FROM payout_batch_rows r JOIN payout_batches b ON b.id = r.batch_pk
      WHERE b.batch_id = $1 GROUP BY state`,
    [tag],
  );
  const byState = Object.fromEntries((states.rows as Array<{ state: string; n: number }>).map((s) => [s.state, s.n]));
  expect(view.counts).toEqual({ total: 1000, pending: 0, sent: byState.sent ?? 0, refused: byState.refused ?? 0 });
  expect(view.counts.sent).toBe(1000);
  const events = await db.query(
    `SELECT 1 FROM events WHERE entity_type = 'payout_batch' AND entity_id = $1 AND type = 'payout_batch.completed'`,
    [tag],
  );
  expect(events.rowCount).toBe(1);
}, 300000);
