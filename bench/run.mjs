// The load benchmark (npm run bench; issue #14). One command, from a fresh clone, a few minutes:
// PostgreSQL (DATABASE_URL's server, else embedded), the gateway sandbox as its own process, the
// compiled service as its own process (LOG_LEVEL=warn), and a bare baseline server doing the same
// durable work, loaded with autocannon side by side in the same run. Prints one table
// (row | figure | goal | ratio | verdict) and writes it with the details to bench/results.json.
//
// Settings (env): BENCH_DURATION_S (10) seconds per measured load, BENCH_WARMUP_S (3),
// BENCH_P3_INVOICES (40000), BENCH_P4_PAYOUTS (20000), BENCH_P4_S (30) seconds of polling,
// BENCH_P4_TICK_MS (500), BENCH_P4_CONCURRENCY (16), BENCH_ONLY (e.g. "P1,P3": run only those
// rows; the baseline runs with P1), BENCH_PROFILE=1 (also profile the create path with
// --cpu-prof and print its top costs), BENCH_SERVICE_ENV (JSON of extra service variables),
// BENCH_STRICT=1 (exit 1 when a goal is missed).
import autocannon from 'autocannon';
import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { createRequire } from 'node:module';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createDatabase,
  dropDatabase,
  forEachBounded,
  freePort,
  gatewaySign,
  percentile,
  postJson,
  rssSampler,
  sleep,
  spawnProcess,
  startDatabaseServer,
  stopProcess,
  waitForStatus,
  withClient,
} from './support.mjs';
import { summariseProfile } from './profile.mjs';

const require = createRequire(import.meta.url);
const { signNotificationFields } = require('../dist/src/gateway/notification-signature.js');

const env = process.env;
const num = (name, def) => (env[name] === undefined || env[name] === '' ? def : Number(env[name]));
const DURATION_S = num('BENCH_DURATION_S', 10);
const WARMUP_S = num('BENCH_WARMUP_S', 3);
const P3_INVOICES = num('BENCH_P3_INVOICES', 40_000);
const P4_PAYOUTS = num('BENCH_P4_PAYOUTS', 20_000);
const P4_S = num('BENCH_P4_S', 30);
const P4_INTERVAL_S = 5;
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim().toUpperCase())) : null;
const wants = (row) => ONLY === null || ONLY.has(row);

// Not the sandbox's default shop id or secret: the service refuses those outside sandbox mode.
const SHOP_ID = 4242;
const SECRET = 'bench-secret-key-0123456789';
const SHOP_KEY = 'bench-shop-key-0123456789';
const ADMIN_KEY = 'bench-admin-key-0123456789';
// Payway literals of the run, in one place (the sandbox catalogue's listed aliases): payments
// that wait for the payer, payouts that stay `sent` for ever.
const PAYMENT_PAYWAY = 'card_core_payin_rub[mock_server,success_with_callback]';
const PAYOUT_PAYWAY = 'qiwi_topup_rub_to_card[sandbox,never_final]';
const PAYOUT_ACCOUNT = '4111111111111111';
const PAYOUT_AMOUNT = '100';

const rows = [];
const details = {};
const started = new Date();
const cleanups = [];

function row(name, figure, goal, ratio, ok) {
  rows.push({ row: name, figure, goal, ratio: ratio ?? '', verdict: ok === null ? 'n/a' : ok ? 'ok' : 'MISS' });
}

const failures = (r) => (r.non2xx + r.errors + r.timeouts > 0 ? ` (${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} time-outs)` : '');
const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));

// ------------------------------------------------------------------ processes

let dbServer;
let sandbox;
let sandboxUrl;

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

async function sandboxControl(method, path, body) {
  const res = await fetch(`${sandboxUrl}/sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`sandbox ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text).data;
}

/**
 * The compiled service as `npm start` runs it after the build, in production mode against the
 * sandbox: a real gateway's settings (GATEWAY_BASE_URL, shop id, secret, keys) pointing at it.
 */
async function startService(databaseUrl, extra = {}, nodeArgs = []) {
  const port = await freePort();
  const proc = spawnProcess('service', [...nodeArgs, 'dist/src/main.js'], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
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
    ...JSON.parse(env.BENCH_SERVICE_ENV ?? '{}'),
    ...extra,
  });
  proc.url = `http://127.0.0.1:${port}`;
  cleanups.push(() => stopProcess(proc));
  await waitForStatus(`${proc.url}/health/ready`, 200, 90_000, proc);
  return proc;
}

async function startBaseline(databaseUrl) {
  const port = await freePort();
  const proc = spawnProcess('baseline', ['bench/baseline.mjs'], {
    PORT: String(port),
    DATABASE_URL: databaseUrl,
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

// ------------------------------------------------------------------ load

/** autocannon with a fresh unique body per request; returns req/s of 2xx answers, p50, p99. */
async function load(url, { connections, durationS, path, headers = {}, body, onResponse }) {
  const result = await autocannon({
    url,
    connections,
    duration: durationS,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', ...headers },
        setupRequest: (req, context) => {
          const b = body(context);
          return { ...req, body: b };
        },
        ...(onResponse ? { onResponse } : {}),
      },
    ],
  });
  const ok = result['2xx'];
  return {
    rps: ok / (result.duration || durationS),
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total,
  };
}

let orderCounter = 0;
const runTag = started.getTime().toString(36);
const invoiceBody = (prefix) => () =>
  JSON.stringify({
    shopOrderId: `${prefix}-${runTag}-${orderCounter++}`,
    amount: '100.00',
    currency: 643,
    payway: PAYMENT_PAYWAY,
    description: 'Bench order',
  });
const auth = { authorization: `Bearer ${SHOP_KEY}` };

async function createLoad(url, prefix, connections, durationS) {
  if (WARMUP_S > 0) await load(url, { connections: Math.min(connections, 16), durationS: WARMUP_S, path: '/api/v1/invoices', headers: auth, body: invoiceBody(`${prefix}w`) });
  return load(url, { connections, durationS, path: '/api/v1/invoices', headers: auth, body: invoiceBody(prefix) });
}

// ------------------------------------------------------------------ rows

async function baselineAndP1() {
  const baseDb = await createDatabase(dbServer.serverUrl, 'bench_baseline');
  const baseline = await startBaseline(baseDb);
  const b = await createLoad(baseline.url, 'base', 64, DURATION_S);
  await stopProcess(baseline);
  details.baseline = b;
  row('baseline: bare node:http + pg, 64 conn', `${fmt(b.rps)} req/s, p50 ${fmt(b.p50)} ms, p99 ${fmt(b.p99)} ms`, 'reference', '', null);

  const db = await createDatabase(dbServer.serverUrl, 'bench_p1');
  const service = await startService(db);
  const rss = rssSampler(service.pid);
  const p1 = await createLoad(service.url, 'p1', 64, DURATION_S);
  const peakMb = rss.stop();
  await stopProcess(service);
  details.p1 = { ...p1, peakRssMb: peakMb };
  const ratio = p1.rps / b.rps;
  row('P1 POST /invoices, 64 conn: req/s', `${fmt(p1.rps)} req/s${failures(p1)}`, '≥ 1,500 req/s', '', p1.rps >= 1500);
  row('P1 latency', `p50 ${fmt(p1.p50)} ms, p99 ${fmt(p1.p99)} ms`, 'p99 ≤ 50 ms', '', p1.ok > 0 && p1.p99 <= 50);
  row('P1 vs baseline', `${fmt(p1.rps)} / ${fmt(b.rps)} req/s`, '≥ 0.6 × baseline', fmt(ratio, 2), ratio >= 0.6);
  row('P5 peak RSS of the service during P1', `${fmt(peakMb)} MB`, '≤ 250 MB', '', peakMb !== null && peakMb <= 250);
}

async function p2() {
  const db = await createDatabase(dbServer.serverUrl, 'bench_p2');
  const service = await startService(db, { DB_POOL_SIZE: '10' });
  await sandboxControl('POST', '/settings', { latencyMs: 200 });
  try {
    const r = await createLoad(service.url, 'p2', 256, DURATION_S);
    details.p2 = r;
    const bound = 256 / 0.2;
    row('P2 gateway 200 ms, pool 10, 256 conn', `${fmt(r.rps)} req/s, p99 ${fmt(r.p99)} ms${failures(r)}`, `≥ 0.7 × ${fmt(bound)}/s (Little)`, fmt(r.rps / bound, 2), r.rps / bound >= 0.7);
  } finally {
    await sandboxControl('POST', '/settings', { latencyMs: 0 });
    await stopProcess(service);
  }
}

/** Signed `success` notifications for seeded awaiting-payer invoices; every fifth a redelivery. */
async function p3() {
  const db = await createDatabase(dbServer.serverUrl, 'bench_p3');
  const service = await startService(db);
  await withClient(db, (c) =>
    c.query(
      `INSERT INTO invoices (shop_id, shop_order_id, request_fingerprint, status, invoice_id, amount, currency, payway, pay_token, response_code, response_body)
       SELECT $1, 'p3-' || g, md5(g::text) || md5(g::text), 'awaiting_payer', 500000000 + g, '100.00', 643, $2, md5('t' || g), 201, '{}'
         FROM generate_series(0, $3 - 1) g`,
      [SHOP_ID, PAYMENT_PAYWAY, P3_INVOICES],
    ),
  );
  const bodies = Array.from({ length: P3_INVOICES }, (_, i) => {
    const fields = {
      shop_id: String(SHOP_ID),
      shop_order_id: `p3-${i}`,
      shop_amount: '100.00',
      shop_currency: '643',
      // The invoice record's payment_id is the invoice's id (docs/gateway-facts.md).
      payment_id: String(500000000 + i),
      client_price: '102.50',
      ps_currency: '643',
      payway: PAYMENT_PAYWAY,
      status: 'success',
      ps_data: '{}',
      addons: '{}',
      created: '2026-11-21T10:00:00',
      updated: '2026-11-21T10:01:00',
      description: 'Bench order',
      shop_refund: '0',
    };
    return JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) });
  });
  let sent = 0;
  let fresh = 0;
  const acked = new Uint8Array(P3_INVOICES);
  let redeliveries = 0;
  const r = await load(service.url, {
    connections: 64,
    durationS: DURATION_S,
    path: '/webhooks/gateway?type=invoice',
    body: (context) => {
      const k = sent++;
      // Every fifth request repeats an earlier notification, as the gateway's redeliveries do.
      let i;
      if (k % 5 === 4 && fresh > 0) {
        i = Math.floor(Math.random() * fresh);
        redeliveries += 1;
      } else {
        i = fresh % P3_INVOICES;
        fresh += 1;
      }
      context.i = i;
      return bodies[i];
    },
    onResponse: (status, _body, context) => {
      if (status === 200) acked[context.i] = 1;
    },
  });
  await stopProcess(service);
  const counts = await withClient(db, async (c) => {
    const inv = await c.query(`SELECT shop_order_id, status FROM invoices WHERE shop_order_id LIKE 'p3-%'`);
    const twice = await c.query(
      `SELECT count(*)::int AS n FROM (SELECT entity_id FROM events WHERE entity_type = 'invoice' AND to_status = 'succeeded' GROUP BY entity_id HAVING count(*) > 1) t`,
    );
    return { statuses: new Map(inv.rows.map((x) => [x.shop_order_id, x.status])), twice: twice.rows[0].n };
  });
  let ackedCount = 0;
  let lost = 0;
  for (let i = 0; i < P3_INVOICES; i++) {
    if (!acked[i]) continue;
    ackedCount += 1;
    if (counts.statuses.get(`p3-${i}`) !== 'succeeded') lost += 1;
  }
  details.p3 = { ...r, acknowledgedInvoices: ackedCount, redeliveries, lost, appliedTwice: counts.twice };
  row('P3 notification ingest, 64 conn', `${fmt(r.rps)} req/s, p99 ${fmt(r.p99)} ms${failures(r)}`, '≥ 3,000/s, p99 ≤ 30 ms', '', r.rps >= 3000 && r.p99 <= 30);
  row('P3 lost / applied twice (in the DB)', `${lost} lost, ${counts.twice} twice of ${fmt(ackedCount)} acknowledged (${fmt(redeliveries)} redeliveries)`, '0 lost, 0 twice', '', lost === 0 && counts.twice === 0);
}

/**
 * 20,000 never-final payouts on the sandbox, their rows `processing` and due over one interval,
 * two service instances polling every 5 s. Polls counted from the sandbox's request log.
 */
async function p4() {
  const seedStarted = Date.now();
  const withdrawIds = new Array(P4_PAYOUTS);
  const signed = ['account', 'amount', 'amount_type', 'payway', 'shop_currency', 'shop_id', 'shop_payment_id'];
  await forEachBounded(P4_PAYOUTS, 32, async (i) => {
    const body = {
      shop_id: SHOP_ID,
      shop_payment_id: `p4-${runTag}-${i}`,
      amount: PAYOUT_AMOUNT,
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT_PAYWAY,
      account: PAYOUT_ACCOUNT,
    };
    const res = await postJson(`${sandboxUrl}/gateway/v1/withdraw/create`, { ...body, sign: gatewaySign(body, signed, SECRET) });
    const parsed = JSON.parse(res.text);
    if (parsed.result !== true) throw new Error(`seeding payout ${i}: ${res.text.slice(0, 300)}`);
    withdrawIds[i] = String(parsed.data.id);
  });
  const seedMs = Date.now() - seedStarted;

  const db = await createDatabase(dbServer.serverUrl, 'bench_p4');
  const pollEnv = {
    PAYOUT_POLL_INTERVAL_S: String(P4_INTERVAL_S),
    PAYOUT_POLL_MAX_S: '7200',
    RECONCILE_TICK_MS: String(num('BENCH_P4_TICK_MS', 500)),
    PAYOUT_POLL_CONCURRENCY: String(num('BENCH_P4_CONCURRENCY', 16)),
  };
  // The first instance runs the migrations with its scheduler off; both then poll.
  const migrator = await startService(db, { SCHEDULER_ENABLED: 'false' });
  await stopProcess(migrator);
  const a = await startService(db, pollEnv);
  const b = await startService(db, pollEnv);
  await sandboxControl('DELETE', '/requests');
  const t0 = Date.now();
  const due = await withClient(db, async (c) => {
    const res = await c.query(
      `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, gateway_status, withdraw_id, amount, amount_type,
         shop_currency, payway, account_masked, account_sealed, create_attempts, next_poll_at, poll_deadline)
       SELECT $1, 'p4-' || $2 || '-' || (g - 1), md5(g::text) || md5(g::text), 'processing', 3, w::bigint, '100', 'ps_amount',
              643, $3, '411111******1111', 'not-used', 1,
              now() + make_interval(secs => $4 * random()), now() + interval '2 hours'
         FROM unnest($5::text[]) WITH ORDINALITY AS t(w, g)
       RETURNING withdraw_id::text AS w, (extract(epoch FROM next_poll_at) * 1000)::float8 AS due`,
      [SHOP_ID, runTag, PAYOUT_PAYWAY, P4_INTERVAL_S, withdrawIds],
    );
    return new Map(res.rows.map((x) => [x.w, x.due]));
  });
  await sleep(P4_S * 1000);
  const tEnd = Date.now();
  const rssA = rssSampler(a.pid).stop();
  const rssB = rssSampler(b.pid).stop();
  await Promise.all([stopProcess(a), stopProcess(b)]);
  const log = await sandboxControl('GET', '/requests');

  const polls = new Map();
  for (const r of log) {
    if (r.path !== 'withdraw/status' && r.path !== 'withdraw/shop_payment_status') continue;
    const t = Date.parse(r.time);
    if (t > tEnd) continue;
    const id = String(r.body.withdraw_id);
    if (!due.has(id)) continue;
    let list = polls.get(id);
    if (list === undefined) polls.set(id, (list = []));
    list.push(t);
  }
  const intervalMs = P4_INTERVAL_S * 1000;
  // Two polls of one payout closer than the interval are a double poll (the next due time is
  // set an interval after a poll); 50 ms for the log's millisecond clock.
  let doubles = 0;
  let maxPerInterval = 0;
  const lateness = [];
  let totalPolls = 0;
  for (const [id, dueAt] of due) {
    const times = (polls.get(id) ?? []).sort((x, y) => x - y);
    totalPolls += times.length;
    let expected = dueAt;
    let start = 0;
    for (let k = 0; k < times.length; k++) {
      lateness.push(Math.max(0, times[k] - expected));
      expected = times[k] + intervalMs;
      if (k > 0 && times[k] - times[k - 1] < intervalMs - 50) doubles += 1;
      while (times[k] - times[start] >= intervalMs - 50) start += 1;
      maxPerInterval = Math.max(maxPerInterval, k - start + 1);
    }
    // Due before the end but never polled: late by at least the rest of the run (censored).
    if (expected < tEnd) lateness.push(tEnd - expected);
  }
  lateness.sort((x, y) => x - y);
  const p99 = percentile(lateness, 99);
  const p50 = percentile(lateness, 50);
  const windowS = (tEnd - t0) / 1000;
  details.p4 = {
    payouts: P4_PAYOUTS,
    seedMs,
    windowS,
    polls: totalPolls,
    pollsPerSecond: totalPolls / windowS,
    neededPerSecond: P4_PAYOUTS / P4_INTERVAL_S,
    doublePolls: doubles,
    maxPollsPerPayoutPerInterval: maxPerInterval,
    latenessP50Ms: p50,
    latenessP99Ms: p99,
    env: pollEnv,
    peakRssMb: [rssA, rssB],
  };
  row(`P4 poller, ${fmt(P4_PAYOUTS)} payouts, 2 instances, ${P4_INTERVAL_S} s: double polls`, `${doubles} double polls; max ${maxPerInterval} poll(s) per payout per interval; ${fmt(totalPolls / windowS)} polls/s of ${fmt(P4_PAYOUTS / P4_INTERVAL_S)}/s due`, '0 double polls (max 1)', '', doubles === 0 && maxPerInterval <= 1);
  row('P4 lateness', `p50 ${fmt(p50 / 1000, 2)} s, p99 ${fmt(p99 / 1000, 2)} s`, 'p99 ≤ 2 s', '', p99 !== null && p99 <= 2000);
}

/** The create path under P1's load with --cpu-prof; the top costs by self time. */
async function profile() {
  const dir = join('.data', 'bench-profiles');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const db = await createDatabase(dbServer.serverUrl, 'bench_profile');
  const service = await startService(db, {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  await createLoad(service.url, 'prof', 64, DURATION_S);
  await stopProcess(service);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no CPU profile written');
  const summary = summariseProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  details.profile = { file: join(dir, file), ...summary };
  console.log('\nCPU profile of the create path (self time):');
  for (const f of summary.functions.slice(0, 15)) console.log(`  ${fmt(f.percent, 1).padStart(5)} %  ${f.name}`);
  console.log('By package / area:');
  for (const f of summary.areas.slice(0, 12)) console.log(`  ${fmt(f.percent, 1).padStart(5)} %  ${f.name}`);
}

// ------------------------------------------------------------------ main

function printTable() {
  const head = ['row', 'figure', 'goal', 'ratio', 'verdict'];
  const data = rows.map((r) => [r.row, r.figure, r.goal, r.ratio, r.verdict]);
  const widths = head.map((h, i) => Math.max(h.length, ...data.map((d) => String(d[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(head)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const d of data) console.log(line(d));
}

function machine() {
  const c = cpus();
  return {
    cpus: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${platform()} ${release()}`,
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
  };
}

async function main() {
  const host = machine();
  console.log(`Load benchmark on ${host.cpus} × ${host.cpuModel}, ${host.memoryGb} GB, Node ${host.node}; load average ${host.loadAverageAtStart.join(' ')}`);
  dbServer = await startDatabaseServer(require);
  cleanups.push(() => dbServer.stop());
  sandbox = await startSandbox();
  cleanups.push(() => stopProcess(sandbox));
  if (wants('P1') || wants('P5') || wants('BASELINE')) await step('baseline + P1 + P5', baselineAndP1);
  if (wants('P2')) await step('P2', p2);
  if (wants('P3')) await step('P3', p3);
  if (wants('P4')) await step('P4', p4);
  if (env.BENCH_PROFILE === '1' || wants('PROFILE') && ONLY !== null) await step('profile', profile);
  host.loadAverageAtEnd = loadavg().map((l) => Number(l.toFixed(2)));
  printTable();
  const missed = rows.filter((r) => r.verdict === 'MISS').length;
  const met = rows.filter((r) => r.verdict === 'ok').length;
  console.log(`\n${met} goals met, ${missed} missed. Machine: ${host.cpus} × ${host.cpuModel}; load average at the end ${host.loadAverageAtEnd.join(' ')} (numbers taken while other work loads the machine are not representative).`);
  writeFileSync(
    'bench/results.json',
    `${JSON.stringify({ started: started.toISOString(), finished: new Date().toISOString(), machine: host, settings: { DURATION_S, WARMUP_S, P3_INVOICES, P4_PAYOUTS, P4_S }, rows, details }, null, 2)}\n`,
  );
  console.log('Written to bench/results.json');
  return missed;
}

async function step(name, fn) {
  const t = Date.now();
  process.stdout.write(`${name} … `);
  try {
    await fn();
    console.log(`done in ${fmt((Date.now() - t) / 1000, 1)} s`);
  } catch (e) {
    console.log('FAILED');
    console.error(e instanceof Error ? e.stack : e);
    row(name, `failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, '', '', false);
  }
}

let exitCode = 0;
try {
  const missed = await main();
  if (env.BENCH_STRICT === '1' && missed > 0) exitCode = 1;
} catch (e) {
  console.error(e instanceof Error ? e.stack : e);
  exitCode = 1;
} finally {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  if (dbServer && !dbServer.embedded) {
    for (const name of ['bench_baseline', 'bench_p1', 'bench_p2', 'bench_p3', 'bench_p4', 'bench_profile']) {
      await dropDatabase(dbServer.serverUrl, name).catch(() => undefined);
    }
  }
}
process.exit(exitCode);
