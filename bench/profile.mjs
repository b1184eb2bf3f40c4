// Summary of a V8 .cpuprofile (node --cpu-prof): self time by function and by package or source
// folder, idle time left out. Used by the load benchmark's profile step (BENCH_PROFILE=1) and by
// hand: node bench/profile.mjs <file.cpuprofile>.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

function area(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const src = /\/dist\/src\/([^/]+)/.exec(url);
  if (src) return `src/${src[1]}`;
  if (url.startsWith('node:')) return 'node (core)';
  return url;
}

export function summariseProfile(profile) {
  const self = new Map();
  for (const node of profile.nodes) self.set(node.id, 0);
  const deltas = profile.timeDeltas ?? [];
  (profile.samples ?? []).forEach((id, i) => self.set(id, self.get(id) + (deltas[i + 1] ?? deltas[i] ?? 0)));
  const byFunction = new Map();
  const byArea = new Map();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id);
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || us === 0) continue;
    total += us;
    const file = url ? url.replace(/^.*\/(node_modules|dist)\//, '$1/') : '';
    const name = `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const a = area(url, functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
  }
  const rank = (m) =>
    [...m.entries()]
      .sort((x, y) => y[1] - x[1])
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), percent: (100 * us) / total }));
  return { totalMs: Math.round(total / 1000), functions: rank(byFunction).slice(0, 40), areas: rank(byArea).slice(0, 30) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const s = summariseProfile(JSON.parse(readFileSync(process.argv[2], 'utf8')));
  console.log(`busy ${s.totalMs} ms`);
  for (const f of s.functions.slice(0, 25)) console.log(`${f.percent.toFixed(1).padStart(5)} %  ${f.name}`);
  console.log('--');
  for (const f of s.areas) console.log(`${f.percent.toFixed(1).padStart(5)} %  ${f.name}`);
}
