// Process, database and HTTP helpers of the load benchmark (bench/run.mjs).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import pg from 'pg';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A child process whose output is kept (last 64 kB) for the error message when it fails. */
export function spawnProcess(name, args, env) {
  let out = '';
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (d) => {
    out += d.toString();
    if (out.length > 65536) out = out.slice(-65536);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return { name, child, pid: child.pid, exited, output: () => out };
}

/** Polls until `url` answers `status`; throws with the process's output when it exits or times out. */
export async function waitForStatus(url, status, timeoutMs, proc) {
  const end = Date.now() + timeoutMs;
  let gone = false;
  void proc?.exited.then(() => (gone = true));
  while (Date.now() < end && !gone) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === status) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${proc?.name ?? url} did not answer ${status} at ${url}${proc ? `:\n${proc.output().slice(-4000)}` : ''}`);
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(proc, graceMs = 15_000) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

/** Samples VmRSS of `pid` every 100 ms (Linux /proc); `stop()` gives the peak in MB. */
export function rssSampler(pid) {
  let peakKb = 0;
  const read = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // process gone or not Linux
    }
  };
  read();
  const timer = setInterval(read, 100);
  return {
    stop() {
      clearInterval(timer);
      read();
      return peakKb > 0 ? peakKb / 1024 : null;
    },
  };
}

/** A PostgreSQL server for the run: DATABASE_URL's, or an embedded one; fresh databases on it. */
export async function startDatabaseServer(require) {
  if (process.env.DATABASE_URL) {
    return { serverUrl: process.env.DATABASE_URL, embedded: false, stop: async () => undefined };
  }
  const { startEmbeddedPostgres } = require('../dist/src/database/embedded-postgres.js');
  const port = await freePort();
  const db = await startEmbeddedPostgres({ dir: `.data/bench-postgres-${port}`, port, persistent: false, database: 'postgres' });
  return { serverUrl: db.url, embedded: true, port, stop: () => db.stop() };
}

export async function createDatabase(serverUrl, name) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(serverUrl, name) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** POST JSON with a keep-alive agent; resolves with { status, text }. */
export function postJson(url, body) {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (out += c));
        res.on('end', () => resolve({ status: res.statusCode, text: out }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** Gateway request signature (spec: signed fields sorted by name, values joined by ':', secret appended). */
export function gatewaySign(body, signed, secret) {
  const text = [...signed].sort().map((k) => String(body[k])).join(':');
  return createHash('sha256').update(text + secret, 'utf8').digest('hex');
}

/** Runs `fn` over 0..n-1 with at most `concurrency` in flight. */
export async function forEachBounded(n, concurrency, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
