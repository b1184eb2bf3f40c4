import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox, SandboxHandle } from '../../src/sandbox/sandbox.server';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/ports';

/**
 * One world of the history search: a database of its own (a copy of the run's migrated
 * template), the gateway sandbox with a payment shop and an agent shop (in this process: the
 * invariants read the gateway's memory directly, as a finance reviewer reads the gateway's
 * cabinet), and the compiled service as a child process the history may SIGKILL and start again
 * on the same port (the notification URLs the gateway keeps stay valid).
 */
export const SHOP_ID = 3101;
export const PAYOUT_SHOP_ID = 3102;
const SECRET = 'histories-secret-key';
const PAYOUT_SECRET = 'histories-payout-secret-key';
export const SHOP_KEY = 'histories-shop-key-0123456789';
export const ADMIN_KEY = 'histories-admin-key-0123456789';
const KEY_RING = `hist1:${Buffer.alloc(32, 9).toString('base64')}`;
/** The approval threshold of the worlds (RUB): payouts at or above it wait for an admin. */
export const APPROVAL_THRESHOLD = '5000.00';
/**
 * A hold lasts this long at the sandbox, and the service warns of it (`invoice.hold_expiring`)
 * HOLD_WARNING_S before: a few seconds after the payer pays, within a history. (The service
 * has no hold policy of its own yet and this sandbox does not lapse holds, so "expiring" is the
 * warning.)
 */
export const HOLD_LIFETIME_S = 40;
const HOLD_WARNING_S = 36;

/** Every wait of the service compressed to seconds (as the chaos suite does). */
const ENV: Record<string, string> = {
  GATEWAY_TIMEOUT_MS: '1000',
  GATEWAY_NONFATAL_ERROR_CODES: '100',
  RECONCILE_TICK_MS: '250',
  INVOICE_RECONCILE_GRACE_S: '1',
  INVOICE_RECONCILE_MAX_S: '20',
  REFUND_RECONCILE_GRACE_S: '1',
  REFUND_RECONCILE_MAX_S: '20',
  PAYOUT_POLL_INTERVAL_S: '0.5',
  PAYOUT_POLL_MAX_S: '20',
  PAYOUT_LEASE_S: '3',
  WATCH_INTERVAL_S: '2',
  PAYWAY_REFRESH_S: '3600',
  ABSENT_CHECKS: '2',
  ABSENT_WINDOW_S: '1',
  PAYOUT_MAX_CREATES: '3',
  CREATE_WAIT_MS: '3000',
  // One conflicting repeat of a create flags the object: the history's cheap way to put any
  // object in front of an operator.
  IDEMPOTENCY_CONFLICT_LIMIT: '1',
  PAYOUT_APPROVAL_THRESHOLD: `643:${APPROVAL_THRESHOLD}`,
  HOLD_EXPIRY_WARNING_S: String(HOLD_WARNING_S),
  RATE_LIMIT_PER_KEY_RPS: '0',
  RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
  RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '0',
  DB_POOL_SIZE: '10',
};

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export class HistoryWorld {
  private child: ChildProcess | null = null;
  private output = '';
  readonly url: string;

  private constructor(
    readonly sandbox: SandboxHandle,
    private readonly database: { url: string; drop(): Promise<void> },
    readonly port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  static async open(): Promise<HistoryWorld> {
    if (!existsSync(join(process.cwd(), 'dist', 'src', 'main.js')))
      throw new Error('no build in dist/ (global-setup did not run?)');
    const sandbox = await startSandbox({
      port: 0,
      shopId: SHOP_ID,
      secretKey: SECRET,
      payoutShopId: PAYOUT_SHOP_ID,
      payoutSecretKey: PAYOUT_SECRET,
      timeScale: 0.001,
      holdLifetimeS: HOLD_LIFETIME_S,
    });
    // The time-out faults answer after the service's 1 s time-out.
    sandbox.state.settings.timeoutDelayMs = 1500;
    const database = await createTestDatabase();
    return new HistoryWorld(sandbox, database, await freePort());
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The compiled service, its scheduler on, ready once /health/ready answers. */
  async start(): Promise<void> {
    if (this.running) return;
    const child = spawn(process.execPath, [join('dist', 'src', 'main.js')], {
      cwd: process.cwd(),
      env: {
        PATH: process.env.PATH ?? '',
        TZ: 'UTC',
        NODE_ENV: 'test',
        LOG_LEVEL: process.env.HISTORY_LOG_LEVEL ?? 'error',
        PORT: String(this.port),
        DATABASE_URL: this.database.url,
        GATEWAY_BASE_URL: this.sandbox.baseUrl,
        GATEWAY_SHOP_ID: String(SHOP_ID),
        GATEWAY_SECRET_KEY: SECRET,
        GATEWAY_PAYOUT_SHOP_ID: String(PAYOUT_SHOP_ID),
        GATEWAY_PAYOUT_SECRET_KEY: PAYOUT_SECRET,
        API_KEYS: SHOP_KEY,
        ADMIN_API_KEYS: ADMIN_KEY,
        PUBLIC_BASE_URL: this.url,
        NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
        ALLOW_INSECURE_HTTP: 'true',
        DATA_ENCRYPTION_KEYS: KEY_RING,
        SCHEDULER_ENABLED: 'true',
        ...ENV,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (d: Buffer): void => {
      this.output = (this.output + d.toString()).slice(-100_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const until = Date.now() + 60_000;
    for (;;) {
      if (!this.running)
        throw new Error(`the service exited at start-up: ${this.output.slice(-3000)}`);
      const ok = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(3000) })
        .then(async (r) => {
          await r.arrayBuffer();
          return r.ok;
        })
        .catch(() => false);
      if (ok) return;
      if (Date.now() > until)
        throw new Error(`the service is not ready after 60 s: ${this.output.slice(-3000)}`);
      await sleep(100);
    }
  }

  /** SIGKILL: nothing of the process's own runs on the way out. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null || !this.running) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await gone;
  }

  serviceOutput(): string {
    return this.output;
  }

  /** A call of the service's API; a lost answer (refused, reset, time-out) is status 0. */
  async api(
    method: string,
    path: string,
    body?: unknown,
    key: 'shop' | 'admin' = 'shop',
  ): Promise<Answer> {
    try {
      const res = await fetch(`${this.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${key === 'shop' ? SHOP_KEY : ADMIN_KEY}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { text };
      }
      return { status: res.status, body: parsed };
    } catch (e) {
      return { status: 0, body: { error: (e as Error).message } };
    }
  }

  admin(method: string, path: string, body?: unknown): Promise<Answer> {
    return this.api(method, path, body, 'admin');
  }

  /** The sandbox's control API over HTTP; throws on a refusal. */
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
    await this.sandbox.close();
    await this.database.drop();
  }
}
