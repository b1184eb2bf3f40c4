// TRACE (information): what OpenTelemetry tracing costs a create. A second service like P1's with
// OTEL_EXPORTER_OTLP_ENDPOINT pointed at a small OTLP/HTTP receiver in this process, loaded like
// P1 (creates, 64 connections) in alternated rounds against a plain one; req/s and CPU per create
// with tracing on and off, and the spans the receiver got. Off is every other row's service: its
// cost is what P1's rows measure.
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { createDatabase, stopProcess } from '../support.mjs';
import { atLeast, atMost, failures, fmt, ratioOf, roundRatios } from '../lib/format.mjs';
import { createOptions, load, median, medianLoad } from '../lib/load.mjs';
import { dbServer, startService } from '../lib/processes.mjs';
import { DURATION_S, ROUNDS, WARMUP_S } from '../lib/settings.mjs';
import { cleanups, details, row } from '../lib/state.mjs';

/**
 * A tiny OTLP/HTTP receiver: 200 (`{}`) to POST /v1/traces, the spans of each JSON export
 * counted (`resourceSpans[].scopeSpans[].spans[]`); 404 to anything else.
 */
export async function startSpanSink() {
  const counts = { spans: 0, exports: 0, unreadable: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      counts.exports += 1;
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const data = JSON.parse(body.toString('utf8'));
        for (const rs of data.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) counts.spans += ss.spans?.length ?? 0;
      } catch {
        counts.unreadable += 1;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const stop = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(stop);
  return { url: `http://127.0.0.1:${server.address().port}`, counts, stop };
}

/**
 * Both services are started once and warmed up; each round loads them one after the other at 64
 * connections, the order flipping every round (as P1's rounds). Spans are counted after the traced
 * service has stopped (its shutdown sends what it still buffers), against every create it answered
 * 2xx, warm-up included; its scheduled jobs' rounds add a few spans of their own, and spans its
 * batch queue dropped under load show as fewer per create.
 */
export async function traceRows() {
  const sink = await startSpanSink();
  const off = await startService(await createDatabase(dbServer.serverUrl, 'bench_trace_off'));
  const on = await startService(await createDatabase(dbServer.serverUrl, 'bench_trace_on'), { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
  const rounds = [];
  let creates = 0;
  try {
    if (WARMUP_S > 0) {
      await load(off.url, createOptions('trace-off-w', 16, WARMUP_S));
      creates += (await load(on.url, createOptions('trace-on-w', 16, WARMUP_S))).ok;
    }
    for (let i = 0; i < ROUNDS; i++) {
      const round = {};
      const loadOff = async () => {
        round.off = await load(off.url, createOptions(`trace-off-${i}`, 64, DURATION_S, off.pid));
      };
      const loadOn = async () => {
        round.on = await load(on.url, createOptions(`trace-on-${i}`, 64, DURATION_S, on.pid));
        creates += round.on.ok;
      };
      for (const f of i % 2 === 1 ? [loadOn, loadOff] : [loadOff, loadOn]) await f();
      rounds.push(round);
    }
  } finally {
    await stopProcess(off);
    await stopProcess(on);
    await sink.stop();
  }
  const r = medianLoad(rounds.map((x) => x.on));
  const plain = medianLoad(rounds.map((x) => x.off));
  const rpsRatios = rounds.map((x) => ratioOf(x.on.rps, x.off.rps));
  const cpuRatios = rounds.map((x) => ratioOf(x.on.cpuMsPerOk, x.off.cpuMsPerOk));
  const { spans, exports, unreadable } = sink.counts;
  details.trace = { ...r, off: plain, spans, exports, unreadableExports: unreadable, createsAnswered: creates, rounds };
  const of = ROUNDS > 1 ? ` (medians of ${ROUNDS} rounds)` : '';
  row(
    'TRACE POST /invoices, 64 conn, tracing on vs off: req/s (information)',
    `${fmt(r.rps)} vs ${fmt(plain.rps)} req/s, p99 ${fmt(r.p99)} vs ${fmt(plain.p99)} ms${failures(r)}${of}${roundRatios(rpsRatios)}`,
    'information',
    atLeast(median(rpsRatios)),
    null,
  );
  if (r.cpuMsPerOk !== null && plain.cpuMsPerOk !== null) {
    row(
      'TRACE CPU per create, tracing on vs off (information)',
      `${fmt(r.cpuMsPerOk, 2)} vs ${fmt(plain.cpuMsPerOk, 2)} ms (${r.cpuMsPerOk >= plain.cpuMsPerOk ? '+' : '−'}${fmt(Math.abs(r.cpuMsPerOk - plain.cpuMsPerOk), 2)} ms)${roundRatios(cpuRatios, atMost)}`,
      'information',
      atMost(median(cpuRatios)),
      null,
    );
  }
  row(
    'TRACE spans received by the OTLP/HTTP sink (information)',
    `${fmt(spans)} spans in ${fmt(exports)} exports for ${fmt(creates)} creates answered 2xx (${fmt(ratioOf(spans, creates), 2)} per create)${unreadable > 0 ? `; ${unreadable} exports unreadable` : ''}`,
    'information',
    '',
    null,
  );
}
