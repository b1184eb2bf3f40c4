// P1, P5 and P2: creates against the bare baseline, in alternated rounds.
import { createDatabase, rssSampler, stopProcess } from '../support.mjs';
import { atLeast, atMost, failureCount, failures, fmt, loadFigure, ratioOf, recordRow, roundRatios, syscallRow } from '../lib/format.mjs';
import { cpuMsOf, cpuPerOk, createLoad, createOptions, load, median, medianLoad } from '../lib/load.mjs';
import { dbServer, recordBaseline, sandbox, setGatewayLatency, startBaseline, startService } from '../lib/processes.mjs';
import { DURATION_S, ROUNDS, WARMUP_S, wants } from '../lib/settings.mjs';
import { details, row } from '../lib/state.mjs';

/** The service's own time on creates and on its gateway create calls so far (sums and counts of its /metrics histograms). */
export async function timeSpent(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (re) => [...text.matchAll(re)].reduce((a, m) => a + Number(m[1]), 0);
  return {
    httpS: sum(/^http_request_duration_seconds_sum\{[^}]*route="\/api\/v1\/invoices"[^}]*status="201"[^}]*\} (\S+)$/gm),
    httpN: sum(/^http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/invoices"[^}]*status="201"[^}]*\} (\S+)$/gm),
    gatewayS: sum(/^gateway_call_duration_seconds_sum\{path="invoice\/create"[^}]*\} (\S+)$/gm),
    gatewayN: sum(/^gateway_call_duration_seconds_count\{path="invoice\/create"[^}]*\} (\S+)$/gm),
  };
}

export function spentBetween(a, b) {
  const per = (s, n) => (n > 0 ? (s * 1000) / n : null);
  return { serviceMs: per(b.httpS - a.httpS, b.httpN - a.httpN), gatewayMs: per(b.gatewayS - a.gatewayS, b.gatewayN - a.gatewayN) };
}

/**
 * P1, P5 and P2 with their references, in BENCH_ROUNDS alternated rounds (default 3). The bare
 * script, the service for P1 and the service for P2 (`DB_POOL_SIZE=10`) are started once and
 * each warmed up. A round loads the bare script and P1's service at 64 connections, then, with
 * the sandbox answering in 200 ms, P2's service and the bare script at 256 connections; the
 * order within each pair flips every round. A goal's ratio is the median of its rounds' ratios,
 * each taken between loads a few seconds apart, so what the machine does over minutes (another
 * tenant, a slower spell) moves both sides of a ratio alike. On this kind of machine one load's
 * figure moves by ±25 % from minute to minute, the bare script's own P2 ÷ P1 by 0.72–1.13
 * (docs/design.md). The figures beside a ratio are the rounds' medians; each
 * round's ratio is printed too. BENCH_ROUNDS=1 measures each once, as before the rounds.
 */
export async function createRows() {
  const withP2 = wants('P2');
  const baseline = await startBaseline(await createDatabase(dbServer.serverUrl, 'bench_baseline'));
  const p1Service = await startService(await createDatabase(dbServer.serverUrl, 'bench_p1'));
  const p2Service = withP2
    ? await startService(await createDatabase(dbServer.serverUrl, 'bench_p2'), { DB_POOL_SIZE: '10' })
    : null;
  const rss = rssSampler(p1Service.pid);
  const rounds = [];
  try {
    if (WARMUP_S > 0) {
      await load(baseline.url, createOptions('basew', 16, WARMUP_S));
      await load(p1Service.url, createOptions('p1w', 16, WARMUP_S));
      if (p2Service) {
        await setGatewayLatency(200);
        try {
          await load(p2Service.url, createOptions('p2w', 16, WARMUP_S));
        } finally {
          await setGatewayLatency(0);
        }
      }
    }
    for (let i = 0; i < ROUNDS; i++) {
      const round = {};
      const serviceFirst = i % 2 === 1;
      const loadP1Service = async () => {
        const sandboxCpu = cpuMsOf(sandbox.pid);
        round.p1 = await load(p1Service.url, createOptions(`p1-${i}`, 64, DURATION_S, p1Service.pid));
        round.p1.sandboxCpuMsPerOk = cpuPerOk(sandboxCpu, cpuMsOf(sandbox.pid), round.p1.ok);
      };
      const loadP1Bare = async () => {
        round.base = await load(baseline.url, createOptions(`base-${i}`, 64, DURATION_S, baseline.pid));
      };
      for (const f of serviceFirst ? [loadP1Service, loadP1Bare] : [loadP1Bare, loadP1Service]) await f();
      if (p2Service) {
        const loadP2Service = async () => {
          const before = await timeSpent(p2Service.url);
          const sandboxCpu = cpuMsOf(sandbox.pid);
          round.p2 = await load(p2Service.url, createOptions(`p2-${i}`, 256, DURATION_S, p2Service.pid));
          round.p2.sandboxCpuMsPerOk = cpuPerOk(sandboxCpu, cpuMsOf(sandbox.pid), round.p2.ok);
          round.p2.spent = spentBetween(before, await timeSpent(p2Service.url));
        };
        const loadP2Bare = async () => {
          round.baseP2 = await load(baseline.url, createOptions(`p2b-${i}`, 256, DURATION_S, baseline.pid));
        };
        await setGatewayLatency(200);
        try {
          for (const f of serviceFirst ? [loadP2Service, loadP2Bare] : [loadP2Bare, loadP2Service]) await f();
        } finally {
          await setGatewayLatency(0);
        }
      }
      rounds.push(round);
    }
  } finally {
    await stopProcess(baseline);
    await stopProcess(p1Service);
    if (p2Service) await stopProcess(p2Service);
  }
  const peakMb = rss.stop();
  const recorded = await recordBaseline('bench_baseline_record', (url, pid) => createLoad(url, 'rec', 64, DURATION_S, pid));
  // P1's and the bare script's figures over the rounds, for P1's rows and P2's (its ratios' other side).
  const p1 = medianLoad(rounds.map((r) => r.p1));
  const b = medianLoad(rounds.map((r) => r.base));
  p1Rows(rounds, p1, b, recorded, peakMb);
  if (withP2) p2Rows(rounds, p1, b);
}

export function p1Rows(rounds, p1, b, recorded, peakMb) {
  details.p1 = { ...p1, peakRssMb: peakMb, baseline: b, rounds: rounds.map((r) => ({ p1: r.p1, baseline: r.base })), recordBaseline: recorded };
  const rpsRatios = rounds.map((r) => ratioOf(r.p1.rps, r.base.rps));
  const p99Ratios = rounds.map((r) => (r.p1.ok > 0 ? ratioOf(r.p1.p99, r.base.p99) : null));
  const rpsRatio = median(rpsRatios);
  const p99Ratio = median(p99Ratios);
  const of = ROUNDS > 1 ? ` (medians of ${ROUNDS} rounds)` : '';
  row('baseline: bare node:http + pg, POST /invoices, 64 conn', `${loadFigure(b)}${of}`, 'reference', '', null);
  row('baseline keeping the service\'s record (stored answer, event), POST /invoices (information)', loadFigure(recorded), 'information', '', null);
  row('P1 POST /invoices, 64 conn: req/s', `${fmt(p1.rps)} vs ${fmt(b.rps)} req/s${roundRatios(rpsRatios)}`, '≥ 0.6 × baseline', atLeast(rpsRatio), rpsRatio !== null && rpsRatio >= 0.6);
  row('P1 p99', `${fmt(p1.p99)} vs ${fmt(b.p99)} ms (p50 ${fmt(p1.p50)} vs ${fmt(b.p50)} ms)${roundRatios(p99Ratios, atMost)}`, '≤ 3 × baseline p99', atMost(p99Ratio), p99Ratio !== null && p99Ratio <= 3);
  // Information: the same p99 without each connection's first answer (the wait to be accepted).
  row('P1 p99 after each connection\'s first answer (information)', `${fmt(p1.p99Warm)} vs ${fmt(b.p99Warm)} ms`, 'information', atMost(median(rounds.map((r) => ratioOf(r.p1.p99Warm, r.base.p99Warm)))), null);
  row('P1 errors', `${p1.non2xx} non-2xx, ${p1.errors} errors, ${p1.timeouts} time-outs of ${fmt(p1.total)}`, '0', '', p1.ok > 0 && failureCount(p1) === 0);
  // CPU per 2xx from the processes' own accounting (/proc): steadier than req/s on a shared
  // machine. Goal: at most 1.2 × the bare script's.
  const cpuRatios = rounds.map((r) => ratioOf(r.p1.cpuMsPerOk, r.base.cpuMsPerOk));
  const cpuRatio = median(cpuRatios);
  row('P1 CPU per create, service vs bare script', `${fmt(p1.cpuMsPerOk, 3)} (system ${fmt(p1.systemCpuMsPerOk, 3)}) vs ${fmt(b.cpuMsPerOk, 3)} (system ${fmt(b.systemCpuMsPerOk, 3)}) ms per 2xx${roundRatios(cpuRatios, atMost)}`, '≤ 1.2 × bare script', atMost(cpuRatio), cpuRatio !== null && cpuRatio <= 1.2);
  syscallRow('P1', [['P1', p1, b]]);
  recordRow('P1', p1, recorded);
  row('P5 peak RSS of the service during P1', `${fmt(peakMb)} MB`, '≤ 250 MB', '', peakMb !== null && peakMb <= 250);
}

export function p2Rows(rounds, p1, b) {
  const r = medianLoad(rounds.map((x) => x.p2));
  const bare = medianLoad(rounds.map((x) => x.baseP2));
  const spent = {
    serviceMs: median(rounds.map((x) => x.p2.spent.serviceMs)),
    gatewayMs: median(rounds.map((x) => x.p2.spent.gatewayMs)),
  };
  const bound = 256 / 0.2;
  const ratios = rounds.map((x) => ratioOf(x.p2.rps, x.p1.rps));
  const bareRatios = rounds.map((x) => ratioOf(x.baseP2.rps, x.base.rps));
  const ratio = median(ratios);
  details.p2 = { ...r, p1Rps: p1.rps, littleBound: bound, spent, baseline: bare, rounds: rounds.map((x) => ({ p2: x.p2, baseline: x.baseP2 })) };
  row('P2 gateway 200 ms, pool 10, 256 conn: req/s', `${fmt(r.rps)} vs P1 ${fmt(p1.rps)} req/s, p99 ${fmt(r.p99)} ms${failures(r)}${roundRatios(ratios)}`, '≥ 0.9 × P1 (same run)', atLeast(ratio), ratio !== null && ratio >= 0.9);
  // Little's law: 256 requests in flight, each held ≥ 200 ms by the gateway, cannot beat 1,280/s.
  row('P2 vs the Little bound (information)', `${fmt(r.rps)} of ${fmt(bound)} req/s (256 conn / 0.2 s)`, 'information', fmt(r.rps / bound, 2), null);
  // Where a create's time goes beyond the gateway's 200 ms: the client's mean answer time, the
  // service's own (from its request's start to its answer) and the gateway call as the service
  // timed it (both from its /metrics), and the sandbox's CPU per create.
  row(
    'P2 where a create\'s time goes (information)',
    `client ${fmt(r.mean)} ms mean; in the service ${fmt(spent.serviceMs)} ms, of which the gateway call ${fmt(spent.gatewayMs)} ms`,
    'information',
    '',
    null,
  );
  syscallRow('P2', [['P2', r, bare]]);
  row(
    'P2 CPU per create (information)',
    `service ${fmt(r.cpuMsPerOk, 2)} vs P1 ${fmt(p1.cpuMsPerOk, 2)} ms; sandbox ${fmt(r.sandboxCpuMsPerOk, 2)} vs P1 ${fmt(p1.sandboxCpuMsPerOk, 2)} ms`,
    'information',
    '',
    null,
  );
  // The bare script under P2's load against its own P1 (information): what the same machine gives
  // a process that does nothing but the durable work when the requests in flight quadruple and
  // each waits 200 ms. P2's goal asks the service for 0.9 of its own P1; this is that ratio for
  // the bare script.
  row(
    'P2\'s load on the bare script (information)',
    `${fmt(bare.rps)} vs its P1 ${fmt(b.rps)} req/s, p99 ${fmt(bare.p99)} ms${bare.cpuMsPerOk === null ? '' : `; CPU ${fmt(bare.cpuMsPerOk, 2)} vs ${fmt(b.cpuMsPerOk, 2)} ms/req`}${failures(bare)}${roundRatios(bareRatios)}`,
    'information',
    atLeast(median(bareRatios)),
    null,
  );
  // The service against the bare script under the same load, round by round (information): P2's
  // goal compares the service with itself, and on a 2-core machine what 256 connections and a
  // 200 ms gateway cost the sandbox, PostgreSQL and the load generator moves both of its sides;
  // this compares the service with the bare work under that load.
  const sameLoad = rounds.map((x) => ratioOf(x.p2.rps, x.baseP2.rps));
  const sameLoadRatio = median(sameLoad);
  row(
    'P2 vs the bare script under P2\'s load: req/s',
    `${fmt(r.rps)} vs ${fmt(bare.rps)} req/s; P2 ÷ P1 ${atLeast(ratio)} vs the bare script's ${atLeast(median(bareRatios))}${roundRatios(sameLoad)}`,
    '≥ 1.0 × bare script',
    atLeast(sameLoadRatio),
    sameLoadRatio !== null && sameLoadRatio >= 1.0 && failureCount(r) === 0,
  );
  const p99s = rounds.map((x) => ratioOf(x.p2.p99, x.baseP2.p99));
  const p99Ratio = median(p99s);
  row(
    'P2 p99 vs the bare script under P2\'s load',
    `${fmt(r.p99)} vs ${fmt(bare.p99)} ms (p50 ${fmt(r.p50)} vs ${fmt(bare.p50)} ms)${roundRatios(p99s, atMost)}`,
    '≤ 2 × bare p99',
    atMost(p99Ratio),
    p99Ratio !== null && p99Ratio <= 2,
  );
  // Which part of the tail is the wait to be accepted: 256 new connections at once queue in the
  // kernel's accept queue and are taken one per event-loop turn. Each connection's first answer
  // holds that wait; the answers after it are the work.
  row(
    'P2 first answers vs the rest (information)',
    `first answer of a connection: p50 ${fmt(r.firstP50)}, max ${fmt(r.firstMax)} ms vs bare ${fmt(bare.firstP50)}, ${fmt(bare.firstMax)} ms; ` +
      `p99 after the first ${fmt(r.p99Warm)} vs ${fmt(bare.p99Warm)} ms`,
    'information',
    atMost(ratioOf(r.p99Warm, bare.p99Warm)),
    null,
  );
}
