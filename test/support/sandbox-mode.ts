import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService } from '../../src/bootstrap';
import { loadConfig } from '../../src/config/config';
import { DATA_KEYS } from './app';
import { createTestDatabase } from './database';
import { freePort } from './ports';

export const SANDBOX_SHOP_KEY = 'clock-shop-key-0123456789';
export const SANDBOX_ADMIN_KEY = 'clock-admin-key-0123456789';

export interface SandboxModeService {
  service: RunningService;
  /** The in-process sandbox's origin (SANDBOX_PORT). */
  sandboxOrigin: string;
  databaseUrl: string;
  close(): Promise<void>;
}

/**
 * The service in sandbox mode as `npm start` runs it (no GATEWAY_BASE_URL: the sandbox
 * in-process, its clock movable), in this process, on a fresh database; jobs run only when a
 * test (or the sandbox clock) runs them unless `env.SCHEDULER_ENABLED` says otherwise.
 */
export async function startSandboxModeService(env: Record<string, string> = {}): Promise<SandboxModeService> {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'sandbox-mode-'));
  const port = await freePort();
  const sandboxPort = await freePort();
  const service = await startService(
    loadConfig({
      PORT: String(port),
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_TIME_SCALE: '0.001',
      API_KEYS: SANDBOX_SHOP_KEY,
      ADMIN_API_KEYS: SANDBOX_ADMIN_KEY,
      DATA_ENCRYPTION_KEYS: DATA_KEYS,
      SCHEDULER_ENABLED: 'false',
      RATE_LIMIT_PER_KEY_RPS: '0',
      RATE_LIMIT_PUBLIC_PER_IP_RPS: '0',
      RATE_LIMIT_UNAUTHENTICATED_PER_IP_RPS: '0',
      ...env,
    }),
    { host: '127.0.0.1' },
  );
  return {
    service,
    sandboxOrigin: `http://127.0.0.1:${sandboxPort}`,
    databaseUrl: db.url,
    close: async () => {
      await service.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
