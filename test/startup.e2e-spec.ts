import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support/ports';
import { spawnService, waitForStatus } from './support/process';

/** The service as `npm start` runs it: a real process, its real configuration handling. */
describe('start-up', () => {
  it('with no settings starts an embedded PostgreSQL and the sandbox, and is ready within 60 s', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const [port, sandboxPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    const svc = spawnService({
      PORT: String(port),
      SANDBOX_PORT: String(sandboxPort),
      EMBEDDED_PG_PORT: String(pgPort),
      DATA_DIR: dataDir,
    });
    try {
      const ready = await waitForStatus(`http://127.0.0.1:${port}/health/ready`, 200, 60_000, svc);
      expect({ ready, output: ready ? '' : svc.output() }).toEqual({ ready: true, output: '' });
      expect((await fetch(`http://127.0.0.1:${port}/docs`)).status).toBe(200);
      // Development keys are printed once, and they work.
      const key = /shop:\s+(\S+)/.exec(svc.output())?.[1];
      expect(key).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/payways?direction=payment`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(res.status).not.toBe(401);
    } finally {
      svc.child.kill('SIGTERM');
      expect(await svc.exited).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it.each([
    [{ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ GATEWAY_BASE_URL: 'https://gw.example/gateway/v1/' }, 'GATEWAY_SHOP_ID'],
  ])('stops with one line naming the bad setting: %p', async (env, name) => {
    const svc = spawnService({ DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bad-')), ...env });
    expect(await svc.exited).toBe(1);
    const lines = svc.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
  });
});
