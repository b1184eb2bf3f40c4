// The load benchmark (npm run bench; issues #14 and #23). One command, from a fresh clone, a few
// minutes: PostgreSQL (DATABASE_URL's server, else embedded), the gateway sandbox as its own
// process, the compiled service as its own process (LOG_LEVEL=info, the default: access lines on), and a bare baseline server
// (bench/baseline.mjs) doing the same durable work, loaded with autocannon side by side in the same
// run. Prints one table (row | figure | goal | ratio | verdict) and writes it with the details,
// the baseline's figures beside each row's, to bench/results.json. Issue #23's goals are ratios to
// the baseline (or to P1) of the same run: absolute figures move with the machine, ratios less.
//
// Rows (BENCH_ONLY keys), one module each under bench/rows/: BASELINE/P1/P5 (creates; P2 runs P1
// too, its goal is a ratio to it), P2 (creates.mjs), P3 (notifications, with their own baseline:
// notifications.mjs), READ (GET /invoices/{id}, with its baseline: reads.mjs), TRACE (creates with
// OpenTelemetry tracing on vs off, information: trace.mjs), HOSTILE (/health during a flood of
// refused bodies packed with names, against the same during valid creates; the time of such a
// refusal against a body of its size refused for one field: hostile.mjs), P4 (payout polls: payouts.mjs),
// OPEN (creates at a fixed arrival rate, half of the peak and 80 % of it, beside the bare
// script at the same rates: open.mjs), PROFILE (profile.mjs). The processes, the load and the figures' format are in bench/lib/, the
// settings in bench/lib/settings.mjs, what a run gathers (rows, details, clean-ups) in state.mjs.
//
// Settings (env): BENCH_DURATION_S (10) seconds per measured load, BENCH_WARMUP_S (3), BENCH_ROUNDS
// (3) alternated rounds of P1 and P2, OPEN, P3, TRACE and HOSTILE, each goal the median of its rounds,
// BENCH_P3_INVOICES (40000), BENCH_READ_INVOICES (20000), BENCH_P4_PAYOUTS (20000), BENCH_P4_S
// (50) seconds of polling, BENCH_P4_TICK_MS (500), BENCH_P4_CONCURRENCY (16), BENCH_HOSTILE_CONNECTIONS
// (64), BENCH_HOSTILE_SAMPLES (50) timed refusals of each kind per amplification case, BENCH_ONLY (e.g.
// "P1,P3": run only those rows), BENCH_PROFILE=1 (also profile the create path, or with BENCH_PROFILE_PATH=read|notify|p2 another, with --cpu-prof and
// print its top costs), BENCH_SERVICE_ENV (JSON of extra service variables), BENCH_STRICT=1 (exit 1
// when a goal is missed), BENCH_PLANT=edge (a planted regression: a busy loop of BENCH_PLANT_US µs,
// default 200, on every request of the service, bench/plant/edge-busy.cjs; the goals must turn MISS), BENCH_KEEP_DATABASES=1 (leave the run's databases on DATABASE_URL's server).
import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dropDatabase } from './support.mjs';
import { fmt } from './lib/format.mjs';
import { dbServer, startDatabaseAndSandbox } from './lib/processes.mjs';
import { DURATION_S, ONLY, P3_INVOICES, P4_INTERVAL_S, P4_PAYOUTS, P4_S, READ_INVOICES, ROUNDS, WARMUP_S, wants } from './lib/settings.mjs';
import { cleanups, details, row, rows, started } from './lib/state.mjs';
import { createRows } from './rows/creates.mjs';
import { hostileRows } from './rows/hostile.mjs';
import { openRows } from './rows/open.mjs';
import { p3 } from './rows/notifications.mjs';
import { p4 } from './rows/payouts.mjs';
import { profile } from './rows/profile.mjs';
import { reads } from './rows/reads.mjs';
import { traceRows } from './rows/trace.mjs';

const env = process.env;

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
  if (env.BENCH_PLANT) console.log(`A planted regression is on (BENCH_PLANT=${env.BENCH_PLANT}, ${env.BENCH_PLANT_US ?? 200} µs per request): the goals should turn MISS.`);
  await startDatabaseAndSandbox();
  if (wants('P1') || wants('P5') || wants('BASELINE') || wants('P2')) await step(`P1 + P5${wants('P2') ? ' + P2' : ''}, ${ROUNDS} alternated round(s)`, createRows);
  if (wants('OPEN')) await step(`OPEN, creates at a fixed arrival rate, ${ROUNDS} round(s)`, () => openRows(details.p1?.rps ?? null));
  if (wants('P3')) await step(`P3 + its baseline, ${ROUNDS} alternated round(s)`, p3);
  if (wants('READ')) await step('READ + its baseline', reads);
  if (wants('TRACE')) await step(`TRACE, ${ROUNDS} alternated round(s)`, traceRows);
  if (wants('HOSTILE')) await step(`HOSTILE, ${ROUNDS} alternated round(s)`, hostileRows);
  if (wants('P4')) await step('P4', p4);
  if (env.BENCH_PROFILE === '1' || wants('PROFILE') && ONLY !== null) await step('profile', profile);
  host.loadAverageAtEnd = loadavg().map((l) => Number(l.toFixed(2)));
  printTable();
  const missed = rows.filter((r) => r.verdict === 'MISS').length;
  const met = rows.filter((r) => r.verdict === 'ok').length;
  console.log(`\n${met} goals met, ${missed} missed. Machine: ${host.cpus} × ${host.cpuModel}; load average at the end ${host.loadAverageAtEnd.join(' ')} (numbers taken while other work loads the machine are not representative).`);
  writeFileSync(
    'bench/results.json',
    `${JSON.stringify({ started: started.toISOString(), finished: new Date().toISOString(), machine: host, settings: { DURATION_S, WARMUP_S, ROUNDS, P3_INVOICES, READ_INVOICES, P4_PAYOUTS, P4_INTERVAL_S, P4_S }, rows, details }, null, 2)}\n`,
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
  // BENCH_KEEP_DATABASES=1 leaves them for inspection (pg_stat_user_tables, row sizes).
  if (dbServer && !dbServer.embedded && env.BENCH_KEEP_DATABASES !== '1') {
    for (const name of ['bench_baseline', 'bench_baseline_record', 'bench_baseline_p3_record', 'bench_p1', 'bench_p2', 'bench_baseline_p3', 'bench_p3', 'bench_read', 'bench_p4', 'bench_profile', 'bench_trace_off', 'bench_trace_on', 'bench_hostile', 'bench_open', 'bench_open_baseline']) {
      await dropDatabase(dbServer.serverUrl, name).catch(() => undefined);
    }
  }
}
process.exit(exitCode);
