import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { redisTarget } from '../../src/common/rate-limit-store';
import { freePort } from './ports';

/**
 * A real Redis for the suites that need one: TEST_REDIS_URL, else redis://127.0.0.1:6379 (the
 * development machines and CI have one there); when that does not answer, a `redis-server` of
 * this suite's own if one is on PATH. Neither: the suite fails with one line saying what to
 * install, never skips.
 */
export interface TestRedis {
  url: string;
  /** Keys under `prefix` (SCAN, never KEYS *). */
  keys(prefix: string): Promise<string[]>;
  /** Deletes the keys under `prefix`. */
  drop(prefix: string): Promise<void>;
  /** Lets go of the server (stops it if this suite started it). */
  close(): Promise<void>;
}

async function answers(url: string): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    client.disconnect();
  }
}

async function startOwnRedis(): Promise<{ url: string; child: ChildProcess } | null> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return null;
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    if ((await answers(url)) === null) return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  return null;
}

export async function startTestRedis(): Promise<TestRedis> {
  let url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  let child: ChildProcess | undefined;
  const problem = await answers(url);
  if (problem !== null) {
    const own = await startOwnRedis();
    if (!own) {
      throw new Error(
        `Redis does not answer at ${redisTarget(url)} (${problem}) and no redis-server is on PATH: install Redis (Debian: apt-get install redis-server) or set TEST_REDIS_URL`,
      );
    }
    ({ url, child } = own);
  }
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const keys = async (prefix: string): Promise<string[]> => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found.sort();
  };
  return {
    url,
    keys,
    drop: async (prefix: string) => {
      const found = await keys(prefix);
      if (found.length > 0) await client.del(...found);
    },
    close: async () => {
      client.disconnect();
      child?.kill();
    },
  };
}

/** A key prefix of this run alone, so parallel runs on one Redis never count each other's requests. */
export function runPrefix(name: string): string {
  return `test-${name}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/**
 * A TCP relay in front of Redis that a test can cut and restore: `down()` closes the port and
 * drops every connection (Redis unreachable), `stall()` keeps connections open but forwards
 * nothing (Redis hung), `up()` listens again on the same port.
 */
export class RedisRelay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  port = 0;

  constructor(private readonly target: string) {}

  /** The target URL (credentials and database kept) with the relay's host and port. */
  get url(): string {
    const u = new URL(this.target);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  async up(): Promise<void> {
    this.stalled = false;
    if (this.port === 0) this.port = await freePort();
    const { hostname, port } = new URL(this.target);
    const server = createServer((client) => {
      if (this.stalled) {
        this.track(client);
        return;
      }
      const upstream = connect(Number(port || 6379), hostname.replace(/^\[|\]$/g, ''));
      this.track(client);
      this.track(upstream);
      client.on('data', (d) => {
        if (!this.stalled) upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!this.stalled) client.write(d);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  stall(): void {
    this.stalled = true;
  }

  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => this.sockets.delete(s));
  }
}
