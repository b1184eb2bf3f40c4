// HOSTILE: the two timings the hostile-input suite gave up (commit 571faf9: a test's time bound
// flakes on a busy machine), as goals against references measured in the same run.
// - /health, asked by a second client (its own process and connection, as the suite's pinger)
//   while the service is flooded with refused bodies packed with thousands of names, against the
//   same pings while it carries as many connections of valid creates (P1's requests). A refusal whose
//   work grows with the names holds the event loop, and every ping waits behind it.
// - A body of 7,000 unknown names against a body of the same size refused for one long field,
//   one after the other on one connection of an otherwise idle service: both pay the parse of
//   64 kB, what is left between them is the work per name.
// - /health while valid 10,000-row CSV payout batches (2.9 MB, 200-character descriptions) are
//   uploaded: dry runs by one uploader, real uploads by one (each cancelled once stored, so the
//   runner sends next to nothing), and dry runs by four uploaders of four keys at once, against
//   the same reference (the CSV was parsed a character at a time on the event
//   loop, and a ping waited up to 650 ms behind one dry run, 1,300 ms behind four uploaders).
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createDatabase, sleep, stopProcess } from '../support.mjs';
import { atMost, fmt, ratioOf, roundRatios } from '../lib/format.mjs';
import { auth, cpuMsOf, createOptions, load, median } from '../lib/load.mjs';
import { dbServer, startService } from '../lib/processes.mjs';
import { DURATION_S, HOSTILE_CONNECTIONS, HOSTILE_SAMPLES, PAYMENT_PAYWAY, PAYOUT_ACCOUNT, PAYOUT_AMOUNT, PAYOUT_PAYWAY, ROUNDS, SHOP_KEY, WARMUP_S } from '../lib/settings.mjs';
import { cleanups, details, row, runTag } from '../lib/state.mjs';

// The suite's pinger: the next ping 20 ms after an answer; one not answered in 3 s (its stall
// bound) is a time-out, never a long latency.
const PING_EVERY_MS = 20;
const PING_TIMEOUT_MS = 3000;
// The suite's budget for 99 % of pings, now information: under a flood a ping's wait is the
// queue of refusals before it, which moves with the connections and the machine.
const HEALTH_BUDGET_MS = 300;
// A refusal holds the event loop for its parse (64 kB of names, a 1.5 MB CSV scanned: 2–6 ms)
// with nothing to wait for, while a create yields at its statements and its gateway call: at the
// same connections the pings' p99 is 8–12 × the creates' by that alone (2 cores, loaded). The
// bound keeps about twice that; one request holding the loop for 300 ms puts it past 100 × or
// times pings out.
const HEALTH_P99_RATIO = 25;
// The suite's bound: the names cost JSON.parse about 2.5 × one long string; an error per name
// (the amplification before the cap) costs ten times the parse and more.
const AMPLIFICATION_RATIO = 4;
// Pairs timed before the counted ones: the first refusals of a kind run unoptimised code.
const AMPLIFICATION_WARMUP = 5;
// After a load, the service counts as drained once /health answers this fast, and must be
// within the limit.
const SETTLED_MS = 50;
const SETTLE_LIMIT_MS = 60_000;

// Each line: when the ping started (epoch ms, to place it in a load's window), how long it took
// (ms, this process's clock) and its status, or `timeout` or an error code.
const PINGER = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const ping = () => {
  const at = Date.now();
  const t = process.hrtime.bigint();
  let done = false;
  const report = (status) => {
    if (done) return;
    done = true;
    process.stdout.write(at + ' ' + Number(process.hrtime.bigint() - t) / 1e6 + ' ' + status + '\\n');
    setTimeout(ping, ${PING_EVERY_MS});
  };
  const req = http.get(process.argv[1], { agent, timeout: ${PING_TIMEOUT_MS} }, (r) => {
    r.resume();
    r.on('end', () => report(r.statusCode));
  });
  req.on('timeout', () => { report('timeout'); req.destroy(); });
  req.on('error', (e) => report(e.code || 'error'));
};
ping();`;

function startPinger(url) {
  const pings = [];
  const child = spawn(process.execPath, ['-e', PINGER, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const l of lines) {
      const [at, ms, status] = l.split(' ');
      pings.push({ at: Number(at), ms: Number(ms), status: /^\d+$/.test(status) ? Number(status) : status });
    }
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await exited;
  };
  cleanups.push(stop);
  return { pings, stop };
}

/** The pings that started within [from, to]: latencies of the 2xx answers, the rest counted apart. */
function pingStats(pings, [from, to]) {
  const inWindow = pings.filter((p) => p.at >= from && p.at <= to);
  const ms = inWindow.filter((p) => typeof p.status === 'number' && p.status >= 200 && p.status < 300).map((p) => p.ms).sort((a, b) => a - b);
  const at = (q) => (ms.length === 0 ? null : ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]);
  return {
    pings: inWindow.length,
    answered: ms.length,
    p50: at(0.5),
    p99: at(0.99),
    max: ms.length === 0 ? null : ms[ms.length - 1],
    non2xx: inWindow.filter((p) => typeof p.status === 'number' && (p.status < 200 || p.status >= 300)).length,
    timeouts: inWindow.filter((p) => p.status === 'timeout').length,
    errors: inWindow.filter((p) => typeof p.status === 'string' && p.status !== 'timeout').length,
  };
}

/** The rounds' pings of one kind as one figure: medians of p50 and p99, the worst ping, counts summed. */
function pooled(stats) {
  const sum = (k) => stats.reduce((a, s) => a + s[k], 0);
  const maxes = stats.map((s) => s.max).filter((m) => m !== null);
  return {
    p50: median(stats.map((s) => s.p50)),
    p99: median(stats.map((s) => s.p99)),
    max: maxes.length === 0 ? null : Math.max(...maxes),
    pings: sum('pings'),
    answered: sum('answered'),
    non2xx: sum('non2xx'),
    timeouts: sum('timeouts'),
    errors: sum('errors'),
  };
}

let seq = 0;
const create = (extra = {}) => ({ shopOrderId: `hostile-${runTag}-${seq++}`, amount: '100.10', currency: 643, payway: PAYMENT_PAYWAY, ...extra });
/** 7,000 short unknown names: a body just under the 64 kB limit. */
const names = (n = 7000) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i.toString(36)}`, 0]));

/** Where the names go (test/hostile/hostile-input.e2e-spec.ts's cases, and metadata), and the field its one error names. */
const CASES = [
  ['extras', () => create({ extras: names() }), 'extras'],
  ['metadata', () => create({ metadata: names() }), 'metadata'],
  ['the top level', () => ({ ...names(6990), ...create() }), 'body'],
  ['card', () => create({ card: names() }), 'card'],
  ['clientInfo', () => create({ clientInfo: names() }), 'clientInfo'],
];

/** test/payouts/payout-batches-hostile.e2e-spec.ts's upload: 4,000 metadata columns and 200 rows, 1.5 MB, refused by its header. */
function csvUpload() {
  const keys = Array.from({ length: 4000 }, (_, k) => `metadata.k${k}`);
  const header = ['shopPaymentId', 'amount', 'amountType', 'shopCurrency', 'payway', 'account', ...keys].join(',');
  const cells = keys.map(() => 'v').join(',');
  const lines = Array.from({ length: 200 }, (_, i) => `hostile-${runTag}-${i},100.00,ps_amount,643,"${PAYOUT_PAYWAY}",${PAYOUT_ACCOUNT},${cells}`);
  return `${header}\n${lines.join('\n')}\n`;
}

/** The flood's requests, each with the field its refusal names; built once, so the load generator spends its time sending. */
function hostileRequests() {
  const json = CASES.map(([where, build, field]) => ({ where, field, path: '/api/v1/invoices', type: 'application/json', body: Buffer.from(JSON.stringify(build())) }));
  const csv = { where: 'a CSV batch', field: 'header.metadata', path: '/api/v1/payouts/batches?dryRun=true', type: 'text/csv', body: Buffer.from(csvUpload()) };
  return [...json, csv];
}

/** Every connection sends the kinds in turn: each kind is about a sixth of the requests. */
function hostileOptions(requests, connections, durationS, pid) {
  let n = 0;
  return {
    connections,
    durationS,
    pid,
    requestOf: () => {
      const r = requests[n++ % requests.length];
      return { path: r.path, headers: { ...auth, 'content-type': r.type }, body: r.body };
    },
  };
}

/** One request on `agent`, timed from the first byte sent to the last received. */
function send(url, agent, path, type, body, key = auth) {
  return new Promise((resolve, reject) => {
    const { port } = new URL(url);
    const started = process.hrtime.bigint();
    const headers = { ...key, 'content-type': type, 'content-length': body.length };
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          contentType: String(res.headers['content-type'] ?? ''),
          text: Buffer.concat(chunks).toString('utf8'),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A 400 problem whose one error names `field`, or the run stops: a figure of anything else measures the wrong work. */
function expectRefusal(res, field, what) {
  let errors = null;
  if (res.status === 400 && res.contentType.startsWith('application/problem+json')) errors = JSON.parse(res.text).errors;
  if (errors?.length !== 1 || errors[0].field !== field) {
    throw new Error(`${what}: expected one 400 problem naming ${field}, got ${res.status} ${res.text.slice(0, 300)}`);
  }
}

/**
 * Each case's body of names and a body of the same length refused for its description, in
 * alternated pairs (the order flipping every pair) on one keep-alive connection: HOSTILE_SAMPLES
 * of each after a few uncounted pairs; the medians of each kind.
 */
async function amplification(url, requests) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const cases = [];
  try {
    for (const { where, field, body } of requests.filter((r) => r.type === 'application/json')) {
      if (body.length <= 50_000 || body.length >= 64 * 1024) throw new Error(`${where}: a ${body.length}-byte body, not just under 64 kB`);
      // The same bytes to send and parse, in one field refused for its length.
      const long = Buffer.from(JSON.stringify(create({ description: 'x'.repeat(body.length - 120) })));
      if (Math.abs(long.length - body.length) >= 300) throw new Error(`${where}: ${long.length} bytes against ${body.length}`);
      const named = [];
      const sameSize = [];
      for (let i = 0; i < AMPLIFICATION_WARMUP + HOSTILE_SAMPLES; i++) {
        const timeNames = async () => {
          const res = await send(url, agent, '/api/v1/invoices', 'application/json', body);
          expectRefusal(res, field, `7,000 names in ${where}`);
          if (i >= AMPLIFICATION_WARMUP) named.push(res.ms);
        };
        const timeLong = async () => {
          const res = await send(url, agent, '/api/v1/invoices', 'application/json', long);
          expectRefusal(res, 'description', `a ${long.length}-byte description`);
          if (i >= AMPLIFICATION_WARMUP) sameSize.push(res.ms);
        };
        for (const f of i % 2 === 0 ? [timeLong, timeNames] : [timeNames, timeLong]) await f();
      }
      cases.push({ where, field, bytes: body.length, sameSizeBytes: long.length, namesMs: median(named), sameSizeMs: median(sameSize), samples: named.length });
    }
    const csv = requests.find((r) => r.type === 'text/csv');
    expectRefusal(await send(url, agent, csv.path, csv.type, csv.body), csv.field, 'the CSV batch of 4,000 metadata columns');
  } finally {
    agent.destroy();
  }
  return cases;
}

/**
 * How long after a load /health first answers within SETTLED_MS: a flood ends with requests the
 * service has read and not yet refused, and the next load must not measure their wait.
 */
async function settle(url) {
  const start = Date.now();
  while (Date.now() - start < SETTLE_LIMIT_MS) {
    const t = Date.now();
    try {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.ok && Date.now() - t <= SETTLED_MS) return Date.now() - start;
    } catch {
      // refused while it drains: asked again
    }
    await sleep(SETTLED_MS);
  }
  throw new Error(`/health did not answer within ${SETTLED_MS} ms in the ${SETTLE_LIMIT_MS / 1000} s after a load`);
}

/** The rows of one upload: 10,000, as the create takes them, with 200-character descriptions (2.9 MB). */
const UPLOAD_ROWS = 10_000;
/** Four uploaders, each its own key (bare entries: every scope), each one upload at a time: within BATCH_UPLOADS_PER_KEY. */
const UPLOAD_KEYS = Array.from({ length: 4 }, (_, i) => `bench-upload-key-${i}-0123456789`);
const UPLOAD_TAG = '@tag@';

/** A valid 10,000-row CSV batch; UPLOAD_TAG in every shopPaymentId, replaced per real upload. */
function validCsv() {
  const description = 'd'.repeat(200);
  const lines = Array.from({ length: UPLOAD_ROWS }, (_, i) => `${UPLOAD_TAG}-${i},${PAYOUT_AMOUNT}.00,ps_amount,643,"${PAYOUT_PAYWAY}",${PAYOUT_ACCOUNT},${description}`);
  return `shopPaymentId,amount,amountType,shopCurrency,payway,account,description\n${lines.join('\n')}\n`;
}

/**
 * One uploader for `durationS`: its uploads one after the other on its own connection, each
 * checked (a dry run 200 with every row valid; a real upload 202 with every row stored, then
 * cancelled); a wrong answer stops the run: a figure of anything else measures the wrong work.
 */
async function uploader(url, key, kind, durationS, template, uploads) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const dryBody = Buffer.from(template.replaceAll(UPLOAD_TAG, `dry-${runTag}`));
  const end = Date.now() + durationS * 1000;
  try {
    while (Date.now() < end) {
      if (kind === 'dry') {
        const res = await send(url, agent, '/api/v1/payouts/batches?dryRun=true&limit=1', 'text/csv', dryBody, key);
        const counts = res.status === 200 ? JSON.parse(res.text).counts : null;
        if (counts?.valid !== UPLOAD_ROWS) throw new Error(`a valid ${UPLOAD_ROWS}-row dry run: expected 200 with every row valid, got ${res.status} ${res.text.slice(0, 300)}`);
        uploads.push({ ms: res.ms, bytes: dryBody.length });
      } else {
        const batchId = `up-${runTag}-${seq++}`;
        const body = Buffer.from(template.replaceAll(UPLOAD_TAG, batchId));
        const res = await send(url, agent, `/api/v1/payouts/batches?batchId=${batchId}`, 'text/csv', body, key);
        const stored = res.status === 202 ? JSON.parse(res.text) : null;
        if (stored === null) throw new Error(`a valid ${UPLOAD_ROWS}-row upload: expected 202, got ${res.status} ${res.text.slice(0, 300)}`);
        uploads.push({ ms: res.ms, bytes: body.length });
        const cancel = await send(url, agent, `/api/v1/payouts/batches/${batchId}/cancel`, 'application/json', Buffer.from('{}'), key);
        if (cancel.status >= 500) throw new Error(`cancelling ${batchId}: ${cancel.status} ${cancel.text.slice(0, 200)}`);
      }
    }
  } finally {
    agent.destroy();
  }
}

/** The three upload loads of a round, each settled after: [name, uploaders, kind]. */
const UPLOAD_LOADS = [
  ['dry', 1, 'dry'],
  ['real', 1, 'real'],
  ['four', 4, 'dry'],
];

async function uploadLoads(url, template, round) {
  for (const [name, count, kind] of UPLOAD_LOADS) {
    const uploads = [];
    const from = Date.now();
    await Promise.all(UPLOAD_KEYS.slice(0, count).map((k) => uploader(url, { authorization: `Bearer ${k}` }, kind, DURATION_S, template, uploads)));
    round[name] = { uploads, window: [from, Date.now()], settleMs: await settle(url) };
  }
}

/**
 * One service (rate limits off, as every row's), its amplification cases timed first while
 * nothing else runs, then BENCH_ROUNDS alternated rounds of HOSTILE_CONNECTIONS connections of
 * valid creates and of the hostile kinds in turn, each BENCH_DURATION_S, the pinger asking
 * /health throughout. A ping belongs to the load it started in.
 */
export async function hostileRows() {
  const service = await startService(await createDatabase(dbServer.serverUrl, 'bench_hostile'), {
    API_KEYS: [SHOP_KEY, ...UPLOAD_KEYS].join(','),
    // The flood sends its CSV batch on every one of its connections under one key: each must be
    // refused for its header (400), not turned away at the door for uploads in flight (429).
    BATCH_UPLOADS_PER_KEY: String(HOSTILE_CONNECTIONS),
  });
  const requests = hostileRequests();
  const template = validCsv();
  const pinger = startPinger(`${service.url}/health`);
  const rounds = [];
  let cases;
  try {
    cases = await amplification(service.url, requests);
    if (WARMUP_S > 0) {
      await load(service.url, createOptions('hostile-w', 16, WARMUP_S));
      await load(service.url, hostileOptions(requests, 16, WARMUP_S));
      await settle(service.url);
    }
    for (let i = 0; i < ROUNDS; i++) {
      const round = {};
      const loadValid = async () => {
        const from = Date.now();
        round.valid = await load(service.url, createOptions(`hostile-valid-${i}`, HOSTILE_CONNECTIONS, DURATION_S, service.pid));
        round.validWindow = [from, Date.now()];
        round.valid.settleMs = await settle(service.url);
      };
      const loadHostile = async () => {
        const cpu = cpuMsOf(service.pid);
        const from = Date.now();
        round.hostile = await load(service.url, hostileOptions(requests, HOSTILE_CONNECTIONS, DURATION_S, service.pid));
        round.hostileWindow = [from, Date.now()];
        const after = cpuMsOf(service.pid);
        // load() counts CPU per 2xx answer; here every answer is a refusal.
        round.hostile.cpuMsPerAnswer = cpu !== null && after !== null && round.hostile.total > 0 ? (after.total - cpu.total) / round.hostile.total : null;
        round.hostile.settleMs = await settle(service.url);
      };
      for (const f of i % 2 === 1 ? [loadHostile, loadValid] : [loadValid, loadHostile]) await f();
      await uploadLoads(service.url, template, round);
      rounds.push(round);
    }
    // The last load's last pings answer or time out.
    await sleep(PING_TIMEOUT_MS + 500);
  } finally {
    await pinger.stop();
    await stopProcess(service);
  }
  healthRows(rounds, pinger.pings);
  uploadRows(rounds, pinger.pings);
  amplificationRows(cases);
}

const UPLOAD_TITLES = {
  dry: 'a valid 10,000-row CSV dry run, 1 uploader',
  real: 'a valid 10,000-row CSV upload (stored, then cancelled), 1 uploader',
  four: 'valid 10,000-row CSV dry runs, 4 uploaders of 4 keys at once',
};

function uploadRows(rounds, pings) {
  const failed = (s) => s.non2xx + s.timeouts + s.errors;
  const of = ROUNDS > 1 ? ` (medians of ${ROUNDS} rounds)` : '';
  details.hostileUploads = {};
  for (const [name] of UPLOAD_LOADS) {
    const perRound = rounds.map((r) => ({ valid: pingStats(pings, r.validWindow), upload: pingStats(pings, r[name].window) }));
    const upload = pooled(perRound.map((r) => r.upload));
    const validP99 = pooled(perRound.map((r) => r.valid)).p99;
    const ratios = perRound.map((r) => ratioOf(r.upload.p99, r.valid.p99));
    const ratio = median(ratios);
    const uploads = rounds.flatMap((r) => r[name].uploads);
    const bytes = uploads[0]?.bytes ?? 0;
    details.hostileUploads[name] = { pings: upload, uploads: uploads.length, uploadMs: median(uploads.map((u) => u.ms)), rounds: perRound };
    const unanswered = failed(upload) > 0 ? `; ${failed(upload)} pings not answered 2xx` : '';
    row(
      `HOSTILE /health during ${UPLOAD_TITLES[name]}: p99`,
      `p50 ${fmt(upload.p50, 1)}, p99 ${fmt(upload.p99, 1)}, max ${fmt(upload.max, 1)} ms of ${fmt(upload.answered)} pings vs p99 ${fmt(validP99, 1)} ms${unanswered}; ${fmt(uploads.length)} uploads of ${fmt(bytes)} bytes, ${fmt(median(uploads.map((u) => u.ms)))} ms each (median)${of}${roundRatios(ratios, atMost)}`,
      `≤ ${HEALTH_P99_RATIO} × p99 during valid creates`,
      atMost(ratio),
      ratio !== null && ratio <= HEALTH_P99_RATIO && failed(upload) === 0 && uploads.length > 0,
    );
  }
}

function healthRows(rounds, pings) {
  const perRound = rounds.map((r) => ({ valid: pingStats(pings, r.validWindow), hostile: pingStats(pings, r.hostileWindow) }));
  const valid = pooled(perRound.map((r) => r.valid));
  const hostile = pooled(perRound.map((r) => r.hostile));
  const ratios = perRound.map((r) => ratioOf(r.hostile.p99, r.valid.p99));
  const ratio = median(ratios);
  const creates = median(rounds.map((r) => r.valid.rps));
  const refused = median(rounds.map((r) => r.hostile.total / DURATION_S));
  const statuses = {};
  for (const r of rounds) for (const [code, n] of Object.entries(r.hostile.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const sent = rounds.reduce((a, r) => a + r.hostile.total, 0);
  const loadFailures = rounds.reduce((a, r) => a + r.hostile.errors + r.hostile.timeouts, 0);
  const validFailures = rounds.reduce((a, r) => a + r.valid.non2xx + r.valid.errors + r.valid.timeouts, 0);
  const failed = (s) => s.non2xx + s.timeouts + s.errors;
  const of = ROUNDS > 1 ? ` (medians of ${ROUNDS} rounds)` : '';
  const figure = (s) => `p50 ${fmt(s.p50, 1)}, p99 ${fmt(s.p99, 1)}, max ${fmt(s.max, 1)} ms of ${fmt(s.answered)} pings`;
  details.hostile = {
    connections: HOSTILE_CONNECTIONS,
    pingEveryMs: PING_EVERY_MS,
    pingTimeoutMs: PING_TIMEOUT_MS,
    valid,
    hostile,
    statuses,
    rounds: rounds.map((r, i) => ({ valid: r.valid, hostile: r.hostile, pings: perRound[i] })),
  };
  row(
    `HOSTILE reference: /health from a second client during valid creates, ${HOSTILE_CONNECTIONS} conn`,
    `${figure(valid)}; ${fmt(creates)} creates/s${validFailures > 0 ? ` (${validFailures} not 2xx)` : ''}${of}`,
    'reference',
    '',
    null,
  );
  const unanswered = failed(hostile) > 0 ? `; ${failed(hostile)} pings not answered 2xx` : '';
  row(
    `HOSTILE /health during hostile input, ${HOSTILE_CONNECTIONS} conn: p99`,
    `${figure(hostile)} vs p99 ${fmt(valid.p99, 1)} ms${unanswered}; ${fmt(refused)} refusals/s, CPU ${fmt(median(rounds.map((r) => r.hostile.cpuMsPerAnswer)), 2)} ms each, drained ${fmt(median(rounds.map((r) => r.hostile.settleMs)))} ms after${of}${roundRatios(ratios, atMost)}`,
    `≤ ${HEALTH_P99_RATIO} × p99 during valid creates`,
    atMost(ratio),
    ratio !== null && ratio <= HEALTH_P99_RATIO && failed(hostile) === 0,
  );
  row(
    'HOSTILE /health p99 during hostile input, absolute (information)',
    `${fmt(hostile.p99, 1)} ms${hostile.p99 !== null && hostile.p99 > HEALTH_BUDGET_MS ? ', over' : ', within'} the suite's old budget of ${HEALTH_BUDGET_MS} ms`,
    'information',
    '',
    null,
  );
  row(
    'HOSTILE /health answered 2xx',
    `hostile ${fmt(hostile.answered)} of ${fmt(hostile.pings)} (${hostile.non2xx} non-2xx, ${hostile.timeouts} time-outs of ${PING_TIMEOUT_MS / 1000} s, ${hostile.errors} errors); valid ${fmt(valid.answered)} of ${fmt(valid.pings)}`,
    'every ping',
    '',
    hostile.pings > 0 && failed(hostile) === 0 && valid.pings > 0 && failed(valid) === 0,
  );
  row(
    'HOSTILE the flood refused (400)',
    `${Object.entries(statuses).map(([code, n]) => `${fmt(n)} × ${code}`).join(', ') || 'no answer'} of ${fmt(sent)} sent${loadFailures > 0 ? ` (${loadFailures} errors or time-outs)` : ''}`,
    'every answer 400',
    '',
    sent > 0 && loadFailures === 0 && Object.keys(statuses).every((code) => code === '400'),
  );
}

function amplificationRows(cases) {
  details.hostileAmplification = cases;
  for (const c of cases) {
    const ratio = ratioOf(c.namesMs, c.sameSizeMs);
    row(
      `HOSTILE no amplification: 7,000 unknown names in ${c.where}`,
      `${fmt(c.namesMs, 2)} vs ${fmt(c.sameSizeMs, 2)} ms (medians of ${c.samples} each; ${fmt(c.bytes)} vs ${fmt(c.sameSizeBytes)} bytes, refused for one long description)`,
      `≤ ${AMPLIFICATION_RATIO} × same size refused for one field`,
      atMost(ratio),
      ratio !== null && ratio <= AMPLIFICATION_RATIO,
    );
  }
}
