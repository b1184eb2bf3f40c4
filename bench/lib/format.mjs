// How figures are printed, and the information rows several rows share.
import { row } from './state.mjs';

export const failures = (r) => (r.non2xx + r.errors + r.timeouts > 0 ? ` (${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} time-outs)` : '');
export const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));

// A ratio is printed rounded towards missing its goal (down for "≥", up for "≤"), so a printed
// 0.60 beside "≥ 0.6" is met and never a 0.597 shown as 0.60.
export const atLeast = (x) => (x === null ? '—' : (Math.floor(x * 100 + 1e-9) / 100).toFixed(2));
export const atMost = (x) => (x === null ? '—' : (Math.ceil(x * 100 - 1e-9) / 100).toFixed(2));
export const ratioOf = (x, y) => (x !== null && y !== null && y > 0 ? x / y : null);
export const cpuFigure = (r) => (r.cpuMsPerOk === null ? '' : `, CPU ${fmt(r.cpuMsPerOk, 2)} ms/req (system ${fmt(r.systemCpuMsPerOk, 2)})`);
export const loadFigure = (r) => `${fmt(r.rps)} req/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms${cpuFigure(r)}${failures(r)}`;

/** An information row: CPU per request of the service against its baseline's, both measured in this run. */
export function cpuRow(name, r, b) {
  if (r.cpuMsPerOk === null || b.cpuMsPerOk === null) return;
  row(`${name}: CPU per request (information)`, `${fmt(r.cpuMsPerOk, 2)} (system ${fmt(r.systemCpuMsPerOk, 2)}) vs ${fmt(b.cpuMsPerOk, 2)} (system ${fmt(b.systemCpuMsPerOk, 2)}) ms`, 'information', fmt(b.cpuMsPerOk / r.cpuMsPerOk, 2), null);
}
export const failureCount = (r) => r.non2xx + r.errors + r.timeouts;
/**
 * An information row: read and write system calls per request of the service and of its bare
 * script, for each named pair of loads (medians over the rounds). Skipped where /proc has none.
 */
export function syscallRow(name, pairs) {
  const known = pairs.filter(([, r, b]) => r.readsPerOk !== null && b.readsPerOk !== null);
  if (known.length === 0) return;
  const figure = known
    .map(([label, r, b]) => `${label} ${fmt(r.readsPerOk, 1)} reads, ${fmt(r.writesPerOk, 1)} writes vs ${fmt(b.readsPerOk, 1)}, ${fmt(b.writesPerOk, 1)}`)
    .join('; ');
  row(`${name}: system calls per request, service vs bare script (information)`, figure, 'information', '', null);
}

/** An information row: the service against the baseline that keeps the service's record. */
export function recordRow(name, r, rec) {
  row(`${name} vs the baseline keeping the service's record (information)`, `${fmt(r.rps)} vs ${fmt(rec.rps)} req/s${r.cpuMsPerOk !== null && rec.cpuMsPerOk !== null ? `; CPU ${fmt(r.cpuMsPerOk, 2)} vs ${fmt(rec.cpuMsPerOk, 2)} ms/req` : ''}`, 'information', atLeast(ratioOf(r.rps, rec.rps)), null);
}

/** Each round's ratio, as printed beside a median (rounded towards missing, as the verdict's). */
export const roundRatios = (xs, round = atLeast) => (xs.length > 1 ? `; rounds ${xs.map(round).join(', ')}` : '');
