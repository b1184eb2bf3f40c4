import request from 'supertest';
import { startService, RunningService } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/config';
import { startSandbox, SandboxHandle } from '../../src/sandbox/sandbox.server';
import { createTestDatabase } from './database';
import { freePort } from './ports';

export const SHOP_KEY = 'test-shop-key-0123456789';
export const ADMIN_KEY = 'test-admin-key-0123456789';
export const SHOP_ID = 1001;
export const SECRET = 'test-secret-key';

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
 */
export async function startTestApp(
  opts: { env?: Record<string, string>; sandbox?: SandboxHandle; databaseUrl?: string } = {},
): Promise<TestContext> {
  const sandbox =
    opts.sandbox ?? (await startSandbox({ port: 0, shopId: SHOP_ID, secretKey: SECRET, timeScale: 0.001 }));
  const db = opts.databaseUrl ? null : await createTestDatabase();
  const databaseUrl = opts.databaseUrl ?? db!.url;
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    GATEWAY_BASE_URL: sandbox.baseUrl,
    GATEWAY_SHOP_ID: String(SHOP_ID),
    GATEWAY_SECRET_KEY: SECRET,
    GATEWAY_TIMEOUT_MS: '2000',
    GATEWAY_NONFATAL_ERROR_CODES: '100',
    API_KEYS: SHOP_KEY,
    ADMIN_API_KEYS: ADMIN_KEY,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    NOTIFY_ALLOWED_IPS: '127.0.0.1,::1,::ffff:127.0.0.1',
    SCHEDULER_ENABLED: 'false',
    ...opts.env,
  });
  const service = await startService(config, { host: '127.0.0.1' });
  return {
    service,
    sandbox,
    url: service.url,
    databaseUrl,
    http: request(service.url),
    close: async () => {
      await service.close();
      if (!opts.sandbox) await sandbox.close();
      if (db) await db.drop();
    },
  };
}
