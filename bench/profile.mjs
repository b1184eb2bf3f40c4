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

/**
 * The stages of a request, each known by the frames that do its work. A sample counts for the
 * innermost frame of its stack that names a stage (node's own frames, such as a socket write,
 * count for the stage that called them); the first test that matches a frame names its stage.
 */
export const STAGES = [
  ['access line', (f, u) => f === 'accessLine' || /node_modules\/(pino|sonic-boom|fast-redact|pino-std-serializers)\//.test(u) || /src\/common\/logger\.js/.test(u)],
  ['request id', (f, u) => f === 'requestIdOf' || (f === 'randomUUID' && /node:internal\/crypto/.test(u))],
  ['tracing hooks', (f, u) => /src\/tracing\//.test(u) || /@opentelemetry\//.test(u)],
  ['metrics', (f, u) => /node_modules\/prom-client\//.test(u) || /src\/metrics\//.test(u)],
  ['validation', (f, u) => /node_modules\/(class-validator|class-transformer)\//.test(u) || /src\/common\/(validation|compiled-validation|input-guard|card-data|metadata|date-time|validators)\.js/.test(u) || /pipes\/validation\.pipe\.js/.test(u)],
  ['statement', (f, u) => /node_modules\/(pg|pg-pool|pg-protocol|pg-types|postgres-date|postgres-array|typeorm)\//.test(u) || /src\/common\/(sql|batched-write|batched-read)\.js/.test(u) || /src\/database\//.test(u)],
  ['gateway call', (f, u) => /src\/gateway\//.test(u) || /node:_http_client|node:_http_agent/.test(u)],
  ['events and audit', (f, u) => /src\/(audit|events)\//.test(u)],
  ['answer', (f, u) => /node_modules\/fastify\/lib\/reply\.js|fast-json-stringify|router-response-controller/.test(u) || /\.view\.js|-answer\.js|src\/common\/(money|stored-answer)\.js/.test(u)],
  ['edge', (f, u) => /src\/common\/(http-edge|upload-gate|routed-path|rate-limit|auth\.guard|actor|problem\.filter)\.js/.test(u) || /node_modules\/(fastify|@fastify|find-my-way|@nestjs|light-my-request|avvio)\//.test(u) || /node:_http_server|node:_http_common|node:_http_incoming/.test(u)],
  // The bare script's own code is its handler (it has no other stage of its own).
  ['handler', (f, u) => /\/dist\/src\//.test(u) || /bench\/baseline\.mjs/.test(u)],
  ['garbage collector', (f) => f === '(garbage collector)'],
];

/**
 * The samples of the load, as [node id, µs]: from the first one whose stack holds a frame of
 * `fromUrl` (the path's own handler), leaving out start-up wherever it falls. A module's own
 * top-level code has its file's URL too, so loading the handler's module would otherwise start
 * the count, and the start-up that follows (the service's bootstrap, 1.5 s of an 11 s profile)
 * would be counted as work of the edge. Start-up is a stack under module loading
 * (node:internal/modules) or under the service's `startService`.
 */
export function loadSamples(profile, fromUrl) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = (test) => {
    const seen = new Map();
    const of = (id) => {
      if (seen.has(id)) return seen.get(id);
      const up = parent.get(id);
      const v = test(byId.get(id).callFrame) || (up !== undefined && of(up));
      seen.set(id, v);
      return v;
    };
    return of;
  };
  const startUp = memo((f) => f.functionName === 'startService' || f.url.startsWith('node:internal/modules/'));
  const holdsUrl = memo((f) => fromUrl !== undefined && f.url.includes(fromUrl));
  const deltas = profile.timeDeltas ?? [];
  const out = [];
  let started = fromUrl === undefined;
  (profile.samples ?? []).forEach((id, i) => {
    if (startUp(id)) return;
    if (!started) started = holdsUrl(id);
    if (started) out.push([id, deltas[i + 1] ?? deltas[i] ?? 0]);
  });
  return { byId, parent, samples: out };
}

/** Busy time by stage (STAGES), over the load's samples (loadSamples). */
export function stagesOf(profile, fromUrl) {
  const { byId, parent, samples } = loadSamples(profile, fromUrl);
  const stage = new Map();
  const stageOf = (id) => {
    if (stage.has(id)) return stage.get(id);
    const { functionName, url } = byId.get(id).callFrame;
    const hit = STAGES.find(([, test]) => test(functionName, url));
    const up = parent.get(id);
    const s = hit ? hit[0] : up === undefined ? 'other' : stageOf(up);
    stage.set(id, s);
    return s;
  };
  const totals = new Map();
  let total = 0;
  for (const [id, us] of samples) {
    const name = byId.get(id).callFrame.functionName;
    if (name === '(idle)' || name === '(program)') continue;
    total += us;
    const s = stageOf(id);
    totals.set(s, (totals.get(s) ?? 0) + us);
  }
  // Every stage is named, those with no sample too (tracing's hooks, when tracing is off, cost nil).
  for (const [name] of STAGES) if (!totals.has(name)) totals.set(name, 0);
  return {
    busyMs: total / 1000,
    stages: [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, percent: (100 * us) / total })),
  };
}

/** Self time by function and by area, over the load's samples (loadSamples; all of them without `fromUrl`). */
export function summariseProfile(profile, fromUrl) {
  const { samples } = loadSamples(profile, fromUrl);
  const self = new Map();
  for (const node of profile.nodes) self.set(node.id, 0);
  for (const [id, us] of samples) self.set(id, self.get(id) + us);
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
  console.log('-- by stage');
  for (const st of stagesOf(JSON.parse(readFileSync(process.argv[2], 'utf8')), process.argv[3]).stages) console.log(`${st.percent.toFixed(1).padStart(5)} %  ${st.name}`);
}
