import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnService } from '../support/process';

/** Settings of a real deployment, each case below spoils one. */
const REAL = {
  GATEWAY_BASE_URL: 'https://gw.example/gateway/v1/',
  GATEWAY_SHOP_ID: '4242',
  GATEWAY_SECRET_KEY: 'a-real-looking-secret',
  API_KEYS: 'shop-key-0123456789abcdef',
  ADMIN_API_KEYS: 'admin-key-0123456789abcdef',
  PUBLIC_BASE_URL: 'https://payments.example.com',
  DATA_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 9).toString('base64')}`,
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
};

/**
 * A bad setting stops the real process with one line. Apart from test/start/startup.e2e-spec.ts so the
 * two process-spawning suites run on different Jest workers; the cases are independent
 * processes that mostly wait on Node's start, so they run side by side.
 */
describe('start-up with a bad setting', () => {
  it.concurrent.each([
    [{ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ GATEWAY_BASE_URL: 'https://gw.example/gateway/v1/' }, 'GATEWAY_SHOP_ID'],
    [{ NODE_ENV: 'production' }, 'GATEWAY_BASE_URL'],
    [{ ...REAL, DATA_ENCRYPTION_KEYS: '' }, 'DATA_ENCRYPTION_KEYS'],
    [{ ...REAL, GATEWAY_BASE_URL: 'http://gw.example/gateway/v1/' }, 'GATEWAY_BASE_URL'],
    [{ ...REAL, GATEWAY_SECRET_KEY: 'sandbox-secret-key' }, 'GATEWAY_SECRET_KEY'],
    [{ ...REAL, GATEWAY_SHOP_ID: '1001' }, 'GATEWAY_SHOP_ID'],
    // Trusted proxies covering every address would let any client pick its own.
    [{ ...REAL, TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1' }, 'TRUST_PROXY'],
    [{ ...REAL, TRUST_PROXY: '::ffff:0:0/96' }, 'TRUST_PROXY'],
    [{ ...REAL, HTTP_HEADERS_TIMEOUT_MS: '0' }, 'HTTP_HEADERS_TIMEOUT_MS'],
  ])('stops with one line naming the bad setting: %p', async (env, name) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-bad-'));
    const svc = spawnService({ DATA_DIR: dataDir, ...env });
    expect(await svc.exited).toBe(1);
    rmSync(dataDir, { recursive: true, force: true });
    const lines = svc.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    expect(lines[0]).not.toContain('a-real-looking-secret');
    expect(lines[0]).not.toContain(Buffer.alloc(32, 9).toString('base64'));
  });
});
