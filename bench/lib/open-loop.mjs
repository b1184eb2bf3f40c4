// An open-loop load: requests sent at a fixed arrival rate, each on its own schedule whether or
// not the earlier ones have been answered (a closed loop, as autocannon's, sends a connection's
// next request only after its answer, so a slow server is asked less and its latency looks
// better than a caller at that rate would see it). Each request's latency runs from the time it
// was due, not from when it left: when the generator itself falls behind, that shows as latency
// too, and the generator's own lateness is reported beside it.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { quantile } from './load.mjs';

/**
 * `rate` requests a second for `durationS` seconds against `url`, each made by `requestOf(i)`
 * ({method, path, headers, body}). Connections are opened as needed (no cap), kept alive and
 * reused, so a request never waits for a free connection in the generator. Returns the 2xx
 * count and rate, p50/p90/p99 of every answer's latency in ms (answers other than 2xx are
 * counted as failures; a latency means something only when there are none), the generator's
 * lateness (p99 of send time − due time) and the connections it opened.
 */
export async function openLoad(url, { rate, durationS, requestOf, timeoutMs = 30_000 }) {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
  let connections = 0;
  const total = Math.max(1, Math.round(rate * durationS));
  const latencies = [];
  const lateness = [];
  const statuses = {};
  let ok = 0;
  let errors = 0;
  let timeouts = 0;
  let pending = 0;
  let sent = 0;
  const start = performance.now() + 20;
  const interval = 1000 / rate;

  await new Promise((resolve) => {
    const finish = () => {
      if (sent === total && pending === 0) resolve();
    };
    const fire = (i, due) => {
      const { method = 'POST', path, headers = {}, body } = requestOf(i);
      const now = performance.now();
      lateness.push(now - due);
      pending++;
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          method,
          path,
          agent,
          headers: body === undefined ? headers : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
          timeout: timeoutMs,
        },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            statuses[code] = (statuses[code] ?? 0) + 1;
            if (code >= 200 && code < 300) ok++;
            latencies.push(performance.now() - due);
            pending--;
            finish();
          });
        },
      );
      req.on('socket', (socket) => {
        if (!socket.counted) {
          socket.counted = true;
          connections++;
        }
      });
      let timedOut = false;
      req.on('timeout', () => {
        timedOut = true;
        timeouts++;
        req.destroy(new Error('timeout'));
      });
      req.on('error', () => {
        if (!timedOut) errors++;
        latencies.push(performance.now() - due);
        pending--;
        finish();
      });
      req.end(body);
    };
    // A tick sends every request whose time has come; ticks follow each other as fast as timers
    // allow (about every millisecond), so a request leaves within about a millisecond of its time.
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + sent * interval <= now) {
        const i = sent++;
        fire(i, start + i * interval);
      }
      if (sent < total) setTimeout(tick, Math.max(0, Math.min(1, start + sent * interval - performance.now())));
      else finish();
    };
    setTimeout(tick, 20);
  });
  agent.destroy();
  latencies.sort((a, b) => a - b);
  lateness.sort((a, b) => a - b);
  const non2xx = Object.entries(statuses).reduce((a, [code, n]) => a + (Number(code) >= 200 && Number(code) < 300 ? 0 : n), 0);
  return {
    rate,
    sent: total,
    ok,
    okRate: ok / durationS,
    non2xx,
    errors,
    timeouts,
    p50: quantile(latencies, 0.5),
    p90: quantile(latencies, 0.9),
    p99: quantile(latencies, 0.99),
    latenessP99: quantile(lateness, 0.99),
    connections,
    statuses,
  };
}
