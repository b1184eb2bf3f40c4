import request from 'supertest';
import { startService, RunningService } from '../../src/bootstrap';
import { KeyRing } from '../../src/common/key-ring';
import type { InvoiceEntity } from '../../src/invoices/invoice.entity';
import { revealPaymentToken } from '../../src/invoices/payment-token';
import { loadConfig } from '../../src/config/config';
import { startSandbox, SandboxHandle } from '../../src/sandbox/sandbox.server';
import { createTestDatabase } from './database';
import { freePort } from './ports';
import { answerChecker } from './answers';

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']);

/** A plain agent, for answers built from rows a test wrote by hand (not the service's own answers). */
export function unvalidatedHttp(ctx: { url: string }): ReturnType<typeof request> {
  return request(ctx.url);
}

/**
 * A supertest agent whose every request checks its answer against the contract first
 * (test/support/answers.ts: the OpenAPI schema of the route and status, and money digits), so
 * every JSON answer an end-to-end suite receives is validated. `RESPONSE_VALIDATION=off` skips it.
 */
export function validatedHttp(url: string): ReturnType<typeof request> {
  const agent = request(url);
  if (process.env.RESPONSE_VALIDATION === 'off') return agent;
  return new Proxy(agent, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== 'string' || !METHODS.has(prop) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => request.Test).apply(target, args);
        return test.expect((res) => {
          const path = new URL((test as unknown as { url: string }).url).pathname;
          const problem = answerChecker().check(
            prop.toUpperCase(),
            path,
            res.status,
            String(res.headers['content-type'] ?? ''),
            res.body,
          );
          if (problem !== null) throw new Error(problem);
        });
      };
    },
  });
}

export const SHOP_KEY = 'test-shop-key-0123456789';
export const ADMIN_KEY = 'test-admin-key-0123456789';
/**
 * The payment shop: invoices, refunds, payment ways. Not the sandbox's own shop id (1001): the
 * service refuses that as a real credential.
 */
export const SHOP_ID = 2001;
export const SECRET = 'test-secret-key';
/** The agent shop: payouts, payout ways, balance (a shop of its own unless `shops: 'single'`). */
export const PAYOUT_SHOP_ID = 2002;
export const PAYOUT_SECRET = 'test-payout-secret-key';
/** The data-encryption key ring every test service uses unless a test gives its own. */
export const DATA_KEYS = `test1:${Buffer.alloc(32, 7).toString('base64')}`;

/** `two`: a payment shop and an agent shop with different secrets (the default); `single`: one shop. */
export type ShopSetup = 'two' | 'single';

/** Starts a sandbox hosting the shops of that setup, with a fast clock. */
export function startTestSandbox(shops: ShopSetup = 'two'): Promise<SandboxHandle> {
  return startSandbox({
    port: 0,
    shopId: SHOP_ID,
    secretKey: SECRET,
    ...(shops === 'two' ? { payoutShopId: PAYOUT_SHOP_ID, payoutSecretKey: PAYOUT_SECRET } : {}),
    timeScale: 0.001,
  });
}

export interface TestContext {
  service: RunningService;
  sandbox: SandboxHandle;
  /** Base URL of the service, e.g. http://127.0.0.1:PORT */
  url: string;
  databaseUrl: string;
  /** supertest agent bound to the service; use `.set(auth())` or `.set(admin())`. */
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

export const auth = (): Record<string, string> => ({ Authorization: `Bearer ${SHOP_KEY}` });
export const admin = (): Record<string, string> => ({ Authorization: `Bearer ${ADMIN_KEY}` });

/**
 * The service on a fresh database, talking over real HTTP to its own gateway sandbox. The
 * scheduler is off unless `env.SCHEDULER_ENABLED` says otherwise: tests drive jobs by hand.
 * Two gateway shops by default, so every suite goes through the payment/agent shop split; a
 * given `sandbox` must host the shops of the same `shops` setup.
 */
export async function startTestApp(
  opts: {
    env?: Record<string, string>;
    sandbox?: SandboxHandle;
    databaseUrl?: string;
    shops?: ShopSetup;
  } = {},
): Promise<TestContext> {
  const shops = opts.shops ?? 'two';
  const sandbox = opts.sandbox ?? (await startTestSandbox(shops));
  const db = opts.databaseUrl ? null : await createTestDatabase();
  const databaseUrl = opts.databaseUrl ?? db!.url;
  // The port is chosen before the start (PUBLIC_BASE_URL names it); another suite, or another
  // app of the same suite, may take it in between, so a taken port is chosen again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), sandbox, databaseUrl, shops, opts, db);
    } catch (e) {
      if (attempt < 5 && (e as Error).message.includes('EADDRINUSE')) continue;
      if (!opts.sandbox) await sandbox.close();
      if (db) await db.drop();
      throw e;
    }
  }
}

async function startOn(
  port: number,
  sandbox: SandboxHandle,
  databaseUrl: string,
  shops: ShopSetup,
  opts: { env?: Record<string, string>; sandbox?: SandboxHandle },
  db: { drop(): Promise<void> } | null,
): Promise<TestContext> {
  const config = loadConfig({
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    GATEWAY_BASE_URL: sandbox.baseUrl,
    GATEWAY_SHOP_ID: String(SHOP_ID),
    GATEWAY_SECRET_KEY: SECRET,
    ...(shops === 'two'
      ? { GATEWAY_PAYOUT_SHOP_ID: String(PAYOUT_SHOP_ID), GATEWAY_PAYOUT_SECRET_KEY: PAYOUT_SECRET }
      : {}),
    GATEWAY_TIMEOUT_MS: '2000',
    GATEWAY_NONFATAL_ERROR_CODES: '100',
    API_KEYS: SHOP_KEY,
    ADMIN_API_KEYS: ADMIN_KEY,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
    SCHEDULER_ENABLED: 'false',
    // The sandbox listens on http://127.0.0.1: allowed for tests only, and warned about.
    ALLOW_INSECURE_HTTP: 'true',
    DATA_ENCRYPTION_KEYS: DATA_KEYS,
    // Suites send bursts far above production limits; the rate-limit suite sets its own.
    RATE_LIMIT_PER_KEY_RPS: '0',
    RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
    RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '0',
    ...opts.env,
  });
  const service = await startService(config, { host: '127.0.0.1' });
  return {
    service,
    sandbox,
    url: service.url,
    databaseUrl,
    http: validatedHttp(service.url),
    close: async () => {
      await service.close();
      if (!opts.sandbox) await sandbox.close();
      if (db) await db.drop();
    },
  };
}

/** The raw token a row holds, opened the way the service opens it. */
export function tokenOf(ctx: TestContext, row: Record<string, unknown>): string | null {
  return revealPaymentToken(ctx.service.app.get(KeyRing), {
    id: row.id,
    paymentTokenSealed: row.payment_token,
  } as InvoiceEntity);
}
