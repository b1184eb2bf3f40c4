import { ChildProcess, spawn } from 'node:child_process';
import { Client } from 'pg';
import { startSandbox, SandboxHandle } from '../../../src/sandbox/sandbox.server';
import {
  startEmbeddedPostgres,
  type EmbeddedDatabase,
} from '../../../src/database/embedded-postgres';
import { freePort } from '../../support/ports';

/**
 * One chaos world: a database of its own on a PostgreSQL the suite controls, the gateway sandbox
 * (in this process, so the suite reads its books and request log directly and injects faults),
 * and the compiled service as a child process that the suite kills with SIGKILL and restarts on
 * the same port (the gateway's notification URLs stay valid across restarts).
 */

/** Not the sandbox's default shop (1001): the service refuses that one outside sandbox mode. */
export const SHOP_ID = 4242;
export const SECRET = 'chaos-secret-key-0123456789';
export const SHOP_KEY = 'chaos-shop-key-0123456789';
export const ADMIN_KEY = 'chaos-admin-key-0123456789';

// Payway literals, in one place: the sandbox catalogue's listed aliases (their listed names).
const RUB = 'card_core_payin_rub';
const USD = 'card_core_payin_usd';
const PAYOUT = 'qiwi_topup_rub_to_card';
export const PAYOUT_ACCOUNT = '4111111111111111';
const SANDBOX_TAGS = new Set([
  'timeout_done',
  'timeout_not_done',
  'reset',
  'reset_done',
  'nonfatal',
  'fatal',
  'dup_notify',
  'notify_none',
  'out_of_order',
  'pending',
]);

/**
 * A payment alias by what the scenario needs: `success` paid at once (no notification), `payer`
 * the payer page (the suite presses Pay; the outcome is notified), `rejected` rejected and
 * notified, `server_error` an HTTP 500; a sandbox fault or notification scenario (`timeout_done`,
 * `dup_notify`, …) on an invoice that then waits for the payer.
 */
export function paymentPayway(tag: string, usd = false): string {
  if (usd) return `${USD}[mock_server,${tag === 'success' ? 'success' : 'success_with_callback'}]`;
  if (tag === 'success') return `${RUB}[mock_server,success]`;
  if (tag === 'rejected') return `${RUB}[mock_server,rejected_with_callback]`;
  if (tag === 'server_error') return `${RUB}[mock_server,internal_server_error]`;
  if (SANDBOX_TAGS.has(tag)) return `${RUB}[sandbox,${tag}]`;
  return `${RUB}[mock_server,success_with_callback]`;
}

/** A payout alias: `success` (sent, then paid out), or a sandbox scenario or fault (`reject`, `decline`, `timeout_done`, …). */
export function payoutPayway(tag: string): string {
  return tag === 'success' ? `${PAYOUT}[mock_server,success]` : `${PAYOUT}[sandbox,${tag}]`;
}

/** A fixed test key ring (id:base64 of 32 bytes) for the payout accounts sealed at rest. */
const CHAOS_KEY_RING = 'chaos1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';

export const GATEWAY_TIMEOUT_MS = 1000;
/** Delay of the sandbox's time-out faults: past the service's gateway time-out. */
export const TIMEOUT_FAULT_MS = 2000;

/**
 * Compressed intervals: every wait of the service in seconds, so that a few seconds of real time
 * cover grace periods, absence windows, polls and deadlines. The deadlines stay long enough that
 * an object normally settles before it is flagged.
 */
export const COMPRESSED_ENV: Record<string, string> = {
  GATEWAY_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS),
  GATEWAY_NONFATAL_ERROR_CODES: '100',
  RECONCILE_TICK_MS: '250',
  INVOICE_RECONCILE_GRACE_S: '1',
  INVOICE_RECONCILE_MAX_S: '40',
  REFUND_RECONCILE_GRACE_S: '1',
  REFUND_RECONCILE_MAX_S: '40',
  PAYOUT_POLL_INTERVAL_S: '1',
  PAYOUT_POLL_MAX_S: '40',
  PAYOUT_LEASE_S: '4',
  // The watch after a flag, compressed like the deadlines (600 s to 7200 s in production): at
  // its default a payout flagged at the 40 s deadline was next polled 10 minutes later, after
  // the suite's settle window (a crash-points run on a loaded machine: books differed).
  WATCH_INTERVAL_S: '3',
  PAYWAY_REFRESH_S: '3600',
  // The re-create discipline's settings (ignored by a service that does not have them yet).
  ABSENT_CHECKS: '3',
  ABSENT_WINDOW_S: '3',
  PAYOUT_MAX_CREATES: '3',
  CREATE_WAIT_MS: '3000',
  DB_POOL_SIZE: '20',
  // One key drives every scenario: the rate limits are not what this suite is about.
  RATE_LIMIT_PER_KEY_RPS: '0',
  RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
  RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '0',
};

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<string>;
  output(): string;
  alive(): boolean;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function waitUntil<T>(
  check: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
  everyMs = 100,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A PostgreSQL server of the suite's own: embedded, on its own port, stoppable and restartable. */
export class ControlledPostgres {
  private db: EmbeddedDatabase | null = null;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<ControlledPostgres> {
    // Below the ephemeral range (freePort): the restart reuses the port, and under the other
    // scenarios' load a random one in that range was once taken as an outgoing connection's.
    const port = await freePort();
    const pg = new ControlledPostgres(port, `.data/chaos-postgres-${port}`);
    await pg.start();
    return pg;
  }

  get url(): string {
    return `postgres://postgres:postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    this.db = await startEmbeddedPostgres({
      dir: this.dir,
      port: this.port,
      persistent: true,
      database: 'postgres',
    });
  }

  async stop(): Promise<void> {
    await this.db?.stop();
    this.db = null;
  }
}

export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const c = new Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export class World {
  service: ServiceProcess | null = null;
  readonly url: string;
  private db: Client | null = null;

  private constructor(
    readonly name: string,
    readonly databaseUrl: string,
    readonly sandbox: SandboxHandle,
    readonly port: number,
    readonly baseEnv: Record<string, string>,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  /** A world on the server `serverUrl` (its own database), with a sandbox of its own. */
  static async create(
    name: string,
    serverUrl: string,
    env: Record<string, string> = {},
  ): Promise<World> {
    const databaseUrl = await createDatabase(serverUrl, `chaos_${name}`);
    const sandbox = await startSandbox({
      port: 0,
      shopId: SHOP_ID,
      secretKey: SECRET,
      timeScale: 0.01,
    });
    sandbox.state.settings.timeoutDelayMs = TIMEOUT_FAULT_MS;
    return new World(name, databaseUrl, sandbox, await freePort(), env);
  }

  /** Starts the compiled service (not in production mode: the crash points work only outside it). */
  async start(
    env: Record<string, string> = {},
    opts: { waitReady?: boolean } = {},
  ): Promise<ServiceProcess> {
    if (this.service?.alive()) throw new Error('the service is already running');
    let out = '';
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        PATH: process.env.PATH ?? '',
        TZ: 'UTC',
        NODE_ENV: 'test',
        LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
        PORT: String(this.port),
        DATABASE_URL: this.databaseUrl,
        GATEWAY_BASE_URL: this.sandbox.baseUrl,
        GATEWAY_SHOP_ID: String(SHOP_ID),
        GATEWAY_SECRET_KEY: SECRET,
        API_KEYS: SHOP_KEY,
        ADMIN_API_KEYS: ADMIN_KEY,
        PUBLIC_BASE_URL: this.url,
        NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
        // A real gateway's settings on plain http (the sandbox): allowed explicitly, with a key ring.
        ALLOW_INSECURE_HTTP: 'true',
        DATA_ENCRYPTION_KEYS: CHAOS_KEY_RING,
        ...COMPRESSED_ENV,
        ...this.baseEnv,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer): void => {
      out += d.toString();
      if (out.length > 200_000) out = out.slice(-200_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let gone = false;
    const exited = new Promise<string>((resolve) =>
      child.on('exit', (code, signal) => {
        gone = true;
        resolve(signal ?? String(code));
      }),
    );
    const proc: ServiceProcess = {
      child,
      pid: child.pid!,
      exited,
      output: () => out,
      alive: () => !gone,
    };
    this.service = proc;
    if (opts.waitReady !== false) await this.waitReady(proc);
    return proc;
  }

  async waitReady(proc: ServiceProcess, timeoutMs = 60_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end && proc.alive()) {
      if ((await this.ready()) === 200) return;
      await sleep(100);
    }
    if (!proc.alive()) throw new ServiceDied(proc);
    throw new Error(`service not ready after ${timeoutMs} ms:\n${proc.output().slice(-3000)}`);
  }

  /** Status of /health/ready, or 0 when nothing answers. */
  async ready(): Promise<number> {
    try {
      const res = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  }

  async kill(): Promise<void> {
    const proc = this.service;
    if (!proc || !proc.alive()) return;
    proc.child.kill('SIGKILL');
    await proc.exited;
  }

  async stop(): Promise<void> {
    const proc = this.service;
    if (!proc || !proc.alive()) return;
    proc.child.kill('SIGTERM');
    const t = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
    await proc.exited;
    clearTimeout(t);
  }

  async api(
    method: string,
    path: string,
    body?: unknown,
    key = SHOP_KEY,
    timeoutMs = 30_000,
  ): Promise<ApiAnswer> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { text };
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    if (this.db === null) {
      const c = new Client({ connectionString: this.databaseUrl });
      c.on('error', () => undefined);
      await c.connect();
      this.db = c;
    }
    try {
      return (await this.db.query(sql, params)).rows as T[];
    } catch (e) {
      // A restarted database drops the connection: reconnect once.
      await this.db.end().catch(() => undefined);
      this.db = null;
      throw e;
    }
  }

  /** Posts to the sandbox's control API. */
  async control(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.sandbox.origin}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`sandbox ${method} ${path}: ${res.status} ${text}`);
    return (JSON.parse(text) as { data: unknown }).data;
  }

  async close(): Promise<void> {
    await this.kill();
    await this.db?.end().catch(() => undefined);
    this.db = null;
    await this.sandbox.close();
  }
}

export class ServiceDied extends Error {
  constructor(readonly proc: ServiceProcess) {
    super(`the service exited during start-up:\n${proc.output().slice(-3000)}`);
  }
}
