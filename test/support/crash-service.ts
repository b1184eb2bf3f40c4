import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startSandbox, SandboxHandle } from '../../src/sandbox/sandbox.server';
import { DATA_KEYS, PAYOUT_SHOP_ID, SHOP_ID } from './app';
import { createTestDatabase } from './database';
import { freePort } from './ports';

/**
 * The harness of the suites that kill the compiled service (SIGKILL) and start it again on the
 * same database: its own copy of the run's build, the sandbox in the test's process (its books
 * and request log are read directly), a database of its own, and the service as child processes.
 */
export const CRASH_SHOP_KEY = 'crash-shop-key-0123456789';
const SECRET = 'crash-secret-key';
/** Payouts go through an agent shop of their own, as on a real contract. */
const PAYOUT_SECRET = 'crash-payout-secret-key';
/** npm test runs from the repository root. */
const ROOT = process.cwd();

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined>,
  maxMs: number,
): Promise<T> {
  const until = Date.now() + maxMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    // A function is read at the time-out: what was still missing then, the output until then.
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(50);
  }
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export interface ServiceChild {
  child: ChildProcess;
  url: string;
  output: () => string;
}

export class CrashWorld {
  private readonly children: ChildProcess[] = [];

  private constructor(
    /** Own build directory: other suites or engineers may be rebuilding dist/ at the same time. */
    private readonly out: string,
    readonly sandbox: SandboxHandle,
    private readonly database: { url: string; drop(): Promise<void> },
    readonly db: Client,
  ) {}

  static async open(name: string): Promise<CrashWorld> {
    // A copy of the build global-setup made for this run (a tenth of a second, where compiling
    // again took half a minute of CPU per suite), taken before anything else may rebuild dist/.
    const out = join(ROOT, '.data', `${name}-dist-${process.pid}`);
    if (!existsSync(join(ROOT, 'dist', 'src', 'main.js')))
      throw new Error('no build in dist/ (global-setup did not run?)');
    cpSync(join(ROOT, 'dist'), out, { recursive: true });
    const sandbox = await startSandbox({
      port: 0,
      shopId: SHOP_ID,
      secretKey: SECRET,
      payoutShopId: PAYOUT_SHOP_ID,
      payoutSecretKey: PAYOUT_SECRET,
      timeScale: 0.001,
    });
    const database = await createTestDatabase();
    const db = new Client({ connectionString: database.url });
    await db.connect();
    return new CrashWorld(out, sandbox, database, db);
  }

  /**
   * The compiled service on a free port (or `env.PORT`, so every life of the service keeps one
   * address), its scheduler on, ready once /health answers.
   */
  async start(env: Record<string, string> = {}): Promise<ServiceChild> {
    const port = env.PORT !== undefined ? Number(env.PORT) : await freePort();
    const child = spawn(process.execPath, [join(this.out, 'src', 'main.js')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        TZ: 'UTC',
        PORT: String(port),
        DATABASE_URL: this.database.url,
        GATEWAY_BASE_URL: this.sandbox.baseUrl,
        GATEWAY_SHOP_ID: String(SHOP_ID),
        ALLOW_INSECURE_HTTP: 'true',
        DATA_ENCRYPTION_KEYS: DATA_KEYS,
        GATEWAY_SECRET_KEY: SECRET,
        GATEWAY_PAYOUT_SHOP_ID: String(PAYOUT_SHOP_ID),
        GATEWAY_PAYOUT_SECRET_KEY: PAYOUT_SECRET,
        GATEWAY_TIMEOUT_MS: '3000',
        API_KEYS: CRASH_SHOP_KEY,
        ADMIN_API_KEYS: 'crash-admin-key-0123456789',
        SCHEDULER_ENABLED: 'true',
        RECONCILE_TICK_MS: '200',
        PAYOUT_POLL_INTERVAL_S: '0.5',
        PAYOUT_POLL_MAX_S: '600',
        PAYWAY_REFRESH_S: '600',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    const diedAtCrashPoint = (): boolean =>
      env.CHAOS_CRASH_AT !== undefined && child.signalCode === 'SIGKILL';
    try {
      await waitFor(
        `the service on ${url}`,
        async () => {
          // A child started to die at a crash point may reach it before its first /health answer
          // (a scheduler round right after start, on a busy machine): it is returned dead, and the
          // caller's wait for the crash sees it at once.
          if (diedAtCrashPoint()) return true;
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`service exited (${child.exitCode ?? child.signalCode}): ${output}`);
          const ok = await fetch(`${url}/health`).then(
            (r) => r.ok,
            () => false,
          );
          return ok ? true : undefined;
        },
        30000,
      );
    } catch (e) {
      // The output as it is now, not as it was when the wait began.
      throw new Error(`${(e as Error).message} (output: ${output.slice(-3000)})`, { cause: e });
    }
    return { child, url, output: () => output };
  }

  async close(): Promise<void> {
    for (const c of this.children) await killHard(c);
    await this.db.end();
    await this.sandbox.close();
    await this.database.drop();
    execFileSync('rm', ['-rf', this.out]);
  }
}
