// Latency with large tables versus empty. Starts PostgreSQL (DATABASE_URL's server,
// else embedded), the gateway sandbox and the compiled service as their own processes, measures
// the feed, the console's list and the create path on an empty database, seeds 1,000,000 events
// and 1,000,000 invoices in SQL (bench/seed-large.mjs), measures again, and prints one table:
// median and p95 of each, empty vs large, and their ratio (goal: each within 1.5 × of empty).
//
//   node scripts/build.mjs --if-changed && node bench/large-tables.mjs
//
// Settings (env): LARGE_EVENTS (1000000), LARGE_INVOICES (1000000), LARGE_REQUESTS (200) per
// measured route, sequential, after 20 warm-up requests. Not part of `npm test`.
import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';
import {
  createDatabase,
  dropDatabase,
  freePort,
  percentile,
  spawnProcess,
  startDatabaseServer,
  stopProcess,
  waitForStatus,
  withClient,
} from './support.mjs';
import { seedLarge } from './seed-large.mjs';

const require = createRequire(import.meta.url);
const env = process.env;
const num = (name, def) => (env[name] === undefined || env[name] === '' ? def : Number(env[name]));
const EVENTS = num('LARGE_EVENTS', 1_000_000);
const INVOICES = num('LARGE_INVOICES', 1_000_000);
const REQUESTS = num('LARGE_REQUESTS', 200);
const WARMUP = 20;

const SHOP_ID = 4242;
const SECRET = 'bench-secret-key-0123456789';
const SHOP_KEY = 'bench-shop-key-0123456789';
const ADMIN_KEY = 'bench-admin-key-0123456789';
const PAYWAY = 'card_core_payin_rub[mock_server,success_with_callback]';

const cleanups = [];
async function cleanup() {
  while (cleanups.length) await cleanups.pop()().catch(() => undefined);
}

async function startSandbox() {
  const port = await freePort();
  const proc = spawnProcess('sandbox', ['dist/src/sandbox/main.js'], {
    SANDBOX_PORT: String(port),
    SANDBOX_SHOP_ID: String(SHOP_ID),
    SANDBOX_SECRET_KEY: SECRET,
    SANDBOX_PAYOUT_SHOP_ID: String(SHOP_ID),
    LOG_LEVEL: 'warn',
  });
  cleanups.push(() => stopProcess(proc));
  proc.url = `http://127.0.0.1:${port}`;
  await waitForStatus(`${proc.url}/sandbox/settings`, 200, 30_000, proc);
  return proc;
}

async function startService(databaseUrl, sandboxUrl) {
  const port = await freePort();
  const proc = spawnProcess('service', ['dist/src/main.js'], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    GATEWAY_BASE_URL: `${sandboxUrl}/gateway/v1/`,
    GATEWAY_SHOP_ID: String(SHOP_ID),
    GATEWAY_SECRET_KEY: SECRET,
    API_KEYS: SHOP_KEY,
    ADMIN_API_KEYS: ADMIN_KEY,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
    ALLOW_INSECURE_HTTP: 'true',
    DATA_ENCRYPTION_KEYS: `bench1:${'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc='}`,
    RATE_LIMIT_PER_KEY_RPS: '0',
    RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
  });
  proc.url = `http://127.0.0.1:${port}`;
  cleanups.push(() => stopProcess(proc));
  await waitForStatus(`${proc.url}/health/ready`, 200, 90_000, proc);
  return proc;
}

/** Signs in to the console with the admin key: the session cookie. */
async function consoleSession(base) {
  const form = await fetch(`${base}/admin/login`);
  const loginCookie = form.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  const res = await fetch(`${base}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie },
    body: new URLSearchParams({ _csrf: token ?? '', key: ADMIN_KEY }).toString(),
  });
  const session = res.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('console_session='));
  if (res.status !== 303 || !session) throw new Error(`console sign-in failed: ${res.status}`);
  return session;
}

const cursorOf = (position) => Buffer.from(`p${position}`).toString('base64url');

/** The measured routes; each makes one request and checks its status. */
function routes(base, cookie, tailPosition, someObjectId) {
  let n = 0;
  const runTag = Date.now().toString(36);
  const shop = { authorization: `Bearer ${SHOP_KEY}` };
  const get = (path, headers, status = 200) => async () => {
    const res = await fetch(`${base}${path}`, { headers });
    await res.arrayBuffer();
    if (res.status !== status) throw new Error(`${path}: ${res.status}`);
  };
  return [
    ['feed page, caught-up reader (50 after a recent cursor)', get(`/api/v1/events?limit=50&after=${cursorOf(Math.max(0, tailPosition - 50))}`, shop)],
    ['feed page from the oldest event', get('/api/v1/events?limit=50', shop)],
    ['feed, one object (objectId)', get(`/api/v1/events?objectId=${encodeURIComponent(someObjectId)}`, shop)],
    ['console list /admin/ui/invoices', get('/admin/ui/invoices', { cookie })],
    ['console list, status filter', get('/admin/ui/invoices?status=awaiting_payer', { cookie })],
    ['API list GET /invoices', get('/api/v1/invoices?limit=50', shop)],
    [
      'create POST /invoices',
      async () => {
        const res = await fetch(`${base}/api/v1/invoices`, {
          method: 'POST',
          headers: { ...shop, 'content-type': 'application/json' },
          body: JSON.stringify({ shopOrderId: `lt-${runTag}-${n++}`, amount: '100.00', currency: 643, payway: PAYWAY }),
        });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`create: ${res.status}`);
      },
    ],
  ];
}

async function measure(base, databaseUrl) {
  const cookie = await consoleSession(base);
  const { tail, objectId } = await withClient(databaseUrl, async (c) => {
    const [{ p }] = (await c.query(`SELECT COALESCE(MAX(position), 0)::text AS p FROM events`)).rows;
    const [row] = (await c.query(`SELECT entity_id FROM events WHERE position IS NOT NULL ORDER BY position DESC LIMIT 1 OFFSET 10`)).rows;
    return { tail: Number(p), objectId: row?.entity_id ?? 'none' };
  });
  const out = {};
  for (const [name, run] of routes(base, cookie, tail, objectId)) {
    for (let i = 0; i < WARMUP; i++) await run();
    const times = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = process.hrtime.bigint();
      await run();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    times.sort((a, b) => a - b);
    out[name] = { p50: percentile(times, 50), p95: percentile(times, 95) };
  }
  return out;
}

const fmt = (x) => x.toFixed(1);

async function main() {
  const dbServer = await startDatabaseServer(require);
  cleanups.push(() => dbServer.stop());
  const name = 'bench_large_tables';
  const databaseUrl = await createDatabase(dbServer.serverUrl, name);
  cleanups.push(() => dropDatabase(dbServer.serverUrl, name));
  const sandbox = await startSandbox();
  const service = await startService(databaseUrl, sandbox.url);

  // A page's worth of real traffic first, so "empty" renders full pages too (no bulk rows).
  const shop = { authorization: `Bearer ${SHOP_KEY}`, 'content-type': 'application/json' };
  for (let i = 0; i < 60; i++) {
    const res = await fetch(`${service.url}/api/v1/invoices`, {
      method: 'POST',
      headers: shop,
      body: JSON.stringify({ shopOrderId: `lt-first-${Date.now()}-${i}`, amount: '10.00', currency: 643, payway: PAYWAY }),
    });
    await res.arrayBuffer();
  }
  const empty = await measure(service.url, databaseUrl);
  console.log(`seeding ${EVENTS} events and ${INVOICES} invoices…`);
  const seeded = await seedLarge(databaseUrl, { events: EVENTS, invoices: INVOICES, shopId: SHOP_ID });
  console.log(`seeded in ${fmt(seeded.seconds)} s`);
  const large = await measure(service.url, databaseUrl);

  console.log(`\n${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GB, ${REQUESTS} sequential requests per row`);
  console.log(`| route | empty p50 / p95 ms | ${EVENTS} events + ${INVOICES} invoices p50 / p95 ms | ratio p50 / p95 | within 1.5× |`);
  console.log('|---|---|---|---|---|');
  let allOk = true;
  for (const k of Object.keys(empty)) {
    const e = empty[k];
    const l = large[k];
    const r50 = l.p50 / e.p50;
    const r95 = l.p95 / e.p95;
    const ok = r50 <= 1.5 && r95 <= 1.5;
    allOk &&= ok;
    console.log(`| ${k} | ${fmt(e.p50)} / ${fmt(e.p95)} | ${fmt(l.p50)} / ${fmt(l.p95)} | ${r50.toFixed(2)} / ${r95.toFixed(2)} | ${ok ? 'yes' : 'NO'} |`);
  }
  return allOk;
}

try {
  const ok = await main();
  process.exitCode = ok || env.BENCH_STRICT !== '1' ? 0 : 1;
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
} finally {
  await cleanup();
}
