// Load with autocannon, the loaded process's CPU and system calls sampled around it, and the
// requests the rows send (creates).
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { PAYMENT_PAYWAY, SHOP_KEY, WARMUP_S } from './settings.mjs';
import { runTag } from './state.mjs';

/**
 * autocannon with a fresh request per request (`body(context)` for POST, `pathOf(context)` for
 * a varying path, `requestOf(context)` for requests that differ in path, headers and body at
 * once); returns req/s of 2xx answers, p50, p99 (of every answer: the error counts must be 0 for
 * a latency to mean anything), the failures and the count of each status.
 */
export async function load(url, { connections, durationS, method = 'POST', path, headers = {}, body, pathOf, requestOf, onResponse, pid }) {
  const cpuBefore = pid === undefined ? null : cpuMsOf(pid);
  const callsBefore = pid === undefined ? null : syscallsOf(pid);
  // Each connection's answers after its first: the first waits for the server to accept a new
  // connection, which libuv does one per event-loop iteration, so a busy server takes up to
  // seconds to accept a burst of new connections (see p99Warm).
  const seen = new Set();
  const warm = [];
  const first = [];
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon({
    url,
    connections,
    duration: durationS,
    timeout: 30,
    requests: [
      {
        method,
        path,
        headers: body ? { 'content-type': 'application/json', ...headers } : headers,
        setupRequest: (req, context) => ({
          ...req,
          ...(pathOf ? { path: pathOf(context) } : {}),
          ...(body ? { body: body(context) } : {}),
          ...(requestOf ? requestOf(context) : {}),
        }),
        ...(onResponse ? { onResponse } : {}),
      },
    ],
    }, (e, r) => (e ? reject(e) : resolve(r)));
    instance.on('response', (client, _status, _bytes, responseTime) => {
      if (seen.has(client)) warm.push(responseTime);
      else {
        seen.add(client);
        first.push(responseTime);
      }
    });
  });
  warm.sort((a, b) => a - b);
  first.sort((a, b) => a - b);
  const ok = result['2xx'];
  const cpuAfter = pid === undefined ? null : cpuMsOf(pid);
  const callsAfter = pid === undefined ? null : syscallsOf(pid);
  const perOk = (k) => (callsBefore !== null && callsAfter !== null && ok > 0 ? (callsAfter[k] - callsBefore[k]) / ok : null);
  return {
    rps: ok / (result.duration || durationS),
    // CPU time of the loaded process per 2xx answer (user + system): steadier than req/s on a
    // shared machine, since it does not move with what else holds the cores.
    cpuMsPerOk: cpuBefore !== null && cpuAfter !== null && ok > 0 ? (cpuAfter.total - cpuBefore.total) / ok : null,
    systemCpuMsPerOk: cpuBefore !== null && cpuAfter !== null && ok > 0 ? (cpuAfter.system - cpuBefore.system) / ok : null,
    // Read and write system calls of the loaded process per 2xx answer (socket reads and writes
    // above all): what batching the statements of one turn saves, beside what the bare script makes.
    readsPerOk: perOk('reads'),
    writesPerOk: perOk('writes'),
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    // p99 of the answers that were not a connection's first (information, beside p99).
    p99Warm: quantile(warm, 0.99),
    // Each connection's first answer: how long a new connection waited to be accepted and served
    // (a saturated accept queue shows here, not in p99Warm).
    firstP50: quantile(first, 0.5),
    firstMax: first.length > 0 ? first[first.length - 1] : null,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count])),
  };
}

/** CPU milliseconds per 2xx answer between two cpuMsOf samples (null without both). */
export const cpuPerOk = (before, after, ok) => (before !== null && after !== null && ok > 0 ? (after.total - before.total) / ok : null);

/** User + system CPU milliseconds a process has used so far, and the system part (Linux /proc; null elsewhere). */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th, in
    // clock ticks (100 per second on Linux).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { total: ((Number(f[11]) + Number(f[12])) * 1000) / 100, system: (Number(f[12]) * 1000) / 100 };
  } catch {
    return null;
  }
}

/**
 * Busy CPU milliseconds of the whole machine so far, every core together: user, nice, system,
 * irq, softirq and steal of /proc/stat's first line (Linux; null elsewhere). Between two samples
 * it counts every process: the one measured, PostgreSQL, the sandbox, the load generator.
 */
export function machineCpuMs() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return ((f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * 1000) / 100;
  } catch {
    return null;
  }
}

/** Read and write system calls a process has made so far (Linux /proc/<pid>/io; null elsewhere). */
export function syscallsOf(pid) {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const count = (name) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(io)?.[1] ?? NaN);
    const calls = { reads: count('syscr'), writes: count('syscw') };
    return Number.isFinite(calls.reads) && Number.isFinite(calls.writes) ? calls : null;
  } catch {
    return null;
  }
}

/** The q-quantile of sorted figures (nearest rank); null if none. */
export function quantile(sorted, q) {
  return sorted.length > 0 ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;
}

/** A short load at up to 16 connections first (JIT, pools, caches), then the measured one. */
export async function warmAndLoad(url, opts) {
  if (WARMUP_S > 0) await load(url, { ...opts, connections: Math.min(opts.connections, 16), durationS: WARMUP_S });
  return load(url, opts);
}

let orderCounter = 0;
export const invoiceBody = (prefix) => () =>
  JSON.stringify({
    shopOrderId: `${prefix}-${runTag}-${orderCounter++}`,
    amount: '100.00',
    currency: 643,
    payway: PAYMENT_PAYWAY,
    description: 'Bench order',
  });
export const auth = { authorization: `Bearer ${SHOP_KEY}` };

/** The open loop's create request (bench/lib/open-loop.mjs): the same body as the closed loop's. */
export const invoiceRequest = (prefix) => {
  const body = invoiceBody(prefix);
  return () => ({ method: 'POST', path: '/api/v1/invoices', headers: auth, body: body() });
};

export const createOptions = (prefix, connections, durationS, pid) => ({ connections, durationS, path: '/api/v1/invoices', headers: auth, body: invoiceBody(prefix), pid });

export function createLoad(url, prefix, connections, durationS, pid) {
  return warmAndLoad(url, createOptions(prefix, connections, durationS, pid));
}

/** The middle of the figures (the mean of the two middle ones for an even count); null if none. */
export function median(xs) {
  const s = xs.filter((x) => x !== null && x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The loads of one process over the rounds as one figure: the median of each number, failures summed. */
export function medianLoad(rs) {
  const m = (k) => median(rs.map((r) => r[k]));
  const sum = (k) => rs.reduce((a, r) => a + r[k], 0);
  return {
    rps: m('rps'),
    p50: m('p50'),
    p99: m('p99'),
    p99Warm: m('p99Warm'),
    firstP50: m('firstP50'),
    firstMax: m('firstMax'),
    mean: m('mean'),
    cpuMsPerOk: m('cpuMsPerOk'),
    systemCpuMsPerOk: m('systemCpuMsPerOk'),
    sandboxCpuMsPerOk: m('sandboxCpuMsPerOk'),
    readsPerOk: m('readsPerOk'),
    writesPerOk: m('writesPerOk'),
    ok: sum('ok'),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    total: sum('total'),
  };
}
