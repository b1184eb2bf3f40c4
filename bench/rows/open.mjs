// OPEN: creates at a fixed arrival rate (open loop, bench/lib/open-loop.mjs), the service beside
// the bare script at the same rates: half of the peak and 80 % of it. The peak is the service's
// closed-loop P1 figure of this run (measured here when P1 did not run). The sandbox answers at
// once, so the latency is the service's own work plus loopback. Goal: the service's p90 within
// 1.5 × the bare script's p90 at the same rate; the absolute p90 is printed beside the 30 ms
// Hyperswitch publishes for its own latency at the 90th percentile (on a shared 2-core machine an
// absolute time moves from run to run: the ratio is the goal).
import { createDatabase, stopProcess } from '../support.mjs';
import { atMost, fmt, ratioOf } from '../lib/format.mjs';
import { createLoad, invoiceRequest } from '../lib/load.mjs';
import { openLoad } from '../lib/open-loop.mjs';
import { dbServer, startBaseline, startService } from '../lib/processes.mjs';
import { DURATION_S } from '../lib/settings.mjs';
import { details, row } from '../lib/state.mjs';

const SHARES = [0.5, 0.8];
const HYPERSWITCH_P90_MS = 30;
/**
 * A bare p90 above this many times its p90 at the lower rate, or at a higher one, is the bare
 * script falling behind.
 */
const FELL_BEHIND = 5;

export async function openRows(peakFromP1) {
  const baseline = await startBaseline(await createDatabase(dbServer.serverUrl, 'bench_open_baseline'));
  const service = await startService(await createDatabase(dbServer.serverUrl, 'bench_open'));
  const results = [];
  try {
    // Warm both (JIT, pools); the peak when P1 gave none.
    await createLoad(baseline.url, 'openw-b', 64, 3);
    const warm = await createLoad(service.url, 'openw-s', 64, peakFromP1 ? 3 : DURATION_S);
    const peak = peakFromP1 ?? warm.rps;
    for (const [i, share] of SHARES.entries()) {
      const rate = Math.round(peak * share);
      const loads = {};
      const order = i % 2 === 0 ? ['bare', 'service'] : ['service', 'bare'];
      for (const who of order) {
        const url = who === 'bare' ? baseline.url : service.url;
        loads[who] = await openLoad(url, { rate, durationS: DURATION_S, requestOf: invoiceRequest(`open-${who}-${i}`) });
      }
      // The bare script fell behind at this rate (a pause of its own, a checkpoint): its figure
      // is no reference. It runs once more; should it fall behind again, the row says so and
      // its goal is not met on it.
      const lower = results.at(-1)?.bare;
      const behind = (b) => lower !== undefined && b.p90 > FELL_BEHIND * lower.p90;
      let bareAgain = false;
      if (behind(loads.bare)) {
        bareAgain = true;
        loads.bare = await openLoad(baseline.url, { rate, durationS: DURATION_S, requestOf: invoiceRequest(`open-bare-${i}-again`) });
      }
      results.push({ share, rate, peak, ...loads, bareAgain, bareBehind: behind(loads.bare) });
    }
    // The same at a lower rate, seen from a higher one: the first rate has no lower one, and a
    // bare p90 far above its own p90 at a higher rate is a pause of its own as well (a p90 of
    // 263 ms at 964/s against 14 ms at 1,542/s, in one run), not the load.
    for (const [i, r] of results.entries()) {
      const higher = results.slice(i + 1).map((h) => h.bare.p90);
      const aboveHigher = (b) => higher.some((p90) => b.p90 > FELL_BEHIND * p90);
      if (!aboveHigher(r.bare)) continue;
      if (!r.bareAgain) {
        r.bareAgain = true;
        r.bare = await openLoad(baseline.url, { rate: r.rate, durationS: DURATION_S, requestOf: invoiceRequest(`open-bare-${i}-again`) });
      }
      r.bareBehind = r.bareBehind || aboveHigher(r.bare);
    }
  } finally {
    await stopProcess(baseline);
    await stopProcess(service);
  }
  details.open = results;
  for (const r of results) {
    const s = r.service;
    const b = r.bare;
    const clean = s.non2xx + s.errors + s.timeouts === 0 && b.non2xx + b.errors + b.timeouts === 0;
    const reference = r.bareBehind
      ? `; the bare script fell behind at this rate twice (p90 over ${FELL_BEHIND} × its p90 at another rate): no reference`
      : r.bareAgain
        ? '; the bare script ran twice (it fell behind the first time)'
        : '';
    const ratio = ratioOf(s.p90, b.p90);
    const failuresText = clean ? '' : ` (service ${s.non2xx} non-2xx, ${s.errors} errors, ${s.timeouts} time-outs; bare ${b.non2xx}, ${b.errors}, ${b.timeouts})`;
    row(
      `OPEN creates at ${Math.round(r.share * 100)} % of the peak (${fmt(r.rate)} of ${fmt(r.peak)} req/s), open loop: p90`,
      `service p50 ${fmt(s.p50, 1)}, p90 ${fmt(s.p90, 1)}, p99 ${fmt(s.p99, 1)} ms vs bare ${fmt(b.p50, 1)}, ${fmt(b.p90, 1)}, ${fmt(b.p99, 1)} ms; ` +
        `${fmt(s.okRate)} vs ${fmt(b.okRate)} 2xx/s; p90 ${fmt(s.p90, 1)} ms beside Hyperswitch's published ${HYPERSWITCH_P90_MS} ms; ` +
        `generator late by ≤ ${fmt(Math.max(s.latenessP99, b.latenessP99), 1)} ms (p99)${failuresText}${reference}`,
      '≤ 1.5 × bare p90',
      atMost(ratio),
      clean && !r.bareBehind && ratio !== null && ratio <= 1.5,
    );
  }
}
