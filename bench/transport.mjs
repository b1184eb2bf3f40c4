// The gateway client's transport, measured: node:http with keep-alive agents (what the service
// uses, src/gateway/http-post.ts) against axios configured as the gateway client would need it
// (the same agents, the body kept as exact text, every status an answer). axios is not a
// dependency of the service: install it for this measurement only (`npm install --no-save axios`)
// or point AXIOS_PATH at an install. Client CPU per request is measured in this process, in
// alternated rounds, against a local server in a child process answering a gateway-sized JSON.
import { fork } from 'node:child_process';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.TRANSPORT_ROUNDS ?? 5);
const REQUESTS = Number(process.env.TRANSPORT_REQUESTS ?? 4000);
const CONCURRENCY = 16;
const ANSWER = JSON.stringify({
  data: { id: 123456789, url: 'https://pay.example/checkout?session_id=abc', method: 'GET' },
  error_code: 0, message: 'Ok', result: true,
});

if (process.argv[2] === 'server') {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.setHeader('Content-Type', 'application/json'); res.end(ANSWER); });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else {
  const require = createRequire(import.meta.url);
  let axios;
  try { axios = require(process.env.AXIOS_PATH ?? 'axios'); } catch {
    console.error('axios is not installed: npm install --no-save axios (or set AXIOS_PATH)');
    process.exit(2);
  }
  const { postText } = require('../dist/src/gateway/http-post.js');
  const child = fork(fileURLToPath(import.meta.url), ['server']);
  const port = await new Promise((r) => child.once('message', r));
  const url = new URL(`http://127.0.0.1:${port}/gateway/v1/invoice/create`);
  const httpAgent = new HttpAgent({ keepAlive: true });
  const httpsAgent = new HttpsAgent({ keepAlive: true });
  const body = JSON.stringify({ amount: '100.00', currency: 643, payway: 'card', shop_id: 1, shop_order_id: 'x', sign: 'f'.repeat(64) });
  const headers = { 'Content-Type': 'application/json' };
  const client = axios.create({
    httpAgent, httpsAgent, timeout: 30_000, responseType: 'text', maxRedirects: 0,
    transformResponse: [(d) => d], validateStatus: () => true,
  });
  const viaNode = () => postText(url, body, headers, { timeoutMs: 30_000, httpAgent, httpsAgent });
  const viaAxios = () => client.post(url.href, body, { headers });
  async function run(send) {
    let left = REQUESTS;
    const cpu0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (left-- > 0) await send(); }));
    const cpu = process.cpuUsage(cpu0); const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    return { cpuUs: (cpu.user + cpu.system) / REQUESTS, rps: (REQUESTS / ms) * 1000 };
  }
  await run(viaNode); await run(viaAxios); // warm-up
  const rows = { node: [], axios: [] };
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 ? [['axios', viaAxios], ['node', viaNode]] : [['node', viaNode], ['axios', viaAxios]];
    for (const [name, send] of order) rows[name].push(await run(send));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const name of ['node', 'axios']) {
    console.log(`${name.padEnd(6)} client CPU ${median(rows[name].map((r) => r.cpuUs)).toFixed(1)} µs/request, ${Math.round(median(rows[name].map((r) => r.rps)))} req/s (medians of ${ROUNDS} rounds, ${REQUESTS} requests each, ${CONCURRENCY} in flight)`);
  }
  child.kill(); httpAgent.destroy();
}
