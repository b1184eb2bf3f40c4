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
 * The compiled service is killed (SIGKILL) after it committed the payout row and sent
 * withdraw/create, before the gateway answered. A new process must finish the payout from the
 * database alone, and the gateway must end with exactly one payout.
 */
/** npm test runs from the repository root. */
const ROOT = process.cwd();
/** Own build directory: other suites or engineers may be rebuilding dist/ at the same time. */
const OUT = join(ROOT, '.data', `payouts-crash-dist-${process.pid}`);
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

it('a payout whose process was killed mid-create is finished by the restarted service, paid exactly once', async () => {
  const first = await startChild();
  // The create is done on the gateway, but its answer is held past the time-out and the crash.
  sandbox.state.faults.add({
    path: 'withdraw/create',
    fault: 'timeout_done',
    remaining: 1,
    delayMs: 6000,
  });
  const shopPaymentId = `crash-${Date.now()}`;
  const body = {
    shopPaymentId,
    amount: '1000.00',
    amountType: 'ps_amount',
    shopCurrency: 643,
    payway: PAYOUT.card,
    account: '4111111111111111',
  };
  const post = fetch(`${first.url}/api/v1/payouts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify(body),
  }).then(
    () => 'answered',
    () => 'no answer',
  );

  await waitFor(
    'the committed payout row',
    async () =>
      (await db.query(`SELECT status FROM payouts WHERE shop_payment_id = $1`, [shopPaymentId]))
        .rowCount === 1
        ? true
        : undefined,
    15000,
  );
  await waitFor(
    'withdraw/create at the gateway',
    async () =>
      sandbox.state.requests.some((r) => r.path === 'withdraw/create') ? true : undefined,
    15000,
  );
  await killHard(first.child);
  expect(await post).toBe('no answer');
  const left = await db.query(
    `SELECT status, withdraw_id, create_attempts FROM payouts WHERE shop_payment_id = $1`,
    [shopPaymentId],
  );
  // The attempt is counted when it is claimed, before the call: a crash cannot hide a sent create.
  expect(left.rows[0]).toMatchObject({ status: 'pending', withdraw_id: null, create_attempts: 1 });

  const second = await startChild();
  const final = await waitFor(
    `the payout to finish (service output: ${second.output()})`,
    async () => {
      const r = await db.query(
        `SELECT status, withdraw_id FROM payouts WHERE shop_payment_id = $1`,
        [shopPaymentId],
      );
      return r.rows[0].status === 'succeeded'
        ? (r.rows[0] as { status: string; withdraw_id: string })
        : undefined;
    },
    30000,
  );
  const onGateway = [...sandbox.state.payouts.values()].filter(
    (p) => p.shopPaymentId === shopPaymentId,
  );
  expect(onGateway).toHaveLength(1);
  expect(onGateway[0].shopId).toBe(PAYOUT_SHOP_ID);
  expect(final.withdraw_id).toBe(String(onGateway[0].id));
  expect(sandbox.state.requests.filter((r) => r.path === 'withdraw/create')).toHaveLength(1);
  expect(sandbox.state.requests.some((r) => r.path === 'withdraw/shop_payment_status')).toBe(true);

  const replay = await fetch(`${second.url}/api/v1/payouts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${SHOP_KEY}` },
    body: JSON.stringify(body),
  });
  expect(replay.status).toBe(202);
  expect(((await replay.json()) as { status: string }).status).toBe('succeeded');
  expect(sandbox.state.requests.filter((r) => r.path === 'withdraw/create')).toHaveLength(1);
}, 120000);
