import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  embeddedPostmaster,
  killEmbeddedPostgres,
  spawnService,
  startEnv,
  startPorts,
  waitForStatus,
} from '../support/process';

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** The banner's curl: `curl -X POST <url> -H '<header>'... -d '<body>'` (single-quoted, no escapes). */
function parseCurl(line: string): { method: string; url: string; headers: Record<string, string>; body: string } {
  const words = line.match(/'[^']*'|\S+/g)!.map((w) => (w.startsWith("'") ? w.slice(1, -1) : w));
  expect(words[0]).toBe('curl');
  const out = { method: 'GET', url: '', headers: {} as Record<string, string>, body: '' };
  for (let i = 1; i < words.length; i++) {
    if (words[i] === '-X') out.method = words[++i];
    else if (words[i] === '-H') {
      const [name, ...value] = words[++i].split(':');
      out.headers[name.trim()] = value.join(':').trim();
    } else if (words[i] === '-d') out.body = words[++i];
    else out.url = words[i];
  }
  return out;
}

/** Ends what a test started on `dataDir`: the services still running, their database, the directory. */
function endAll(dataDir: string, ...services: Array<ReturnType<typeof spawnService> | undefined>): void {
  for (const svc of services) if (svc && svc.child.exitCode === null) svc.child.kill('SIGKILL');
  killEmbeddedPostgres(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}

/** The service as `npm start` runs it: a real process, its real configuration handling. */
describe('start-up', () => {
  it('with no settings starts an embedded PostgreSQL and the sandbox, and is ready within 60 s', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const ports = await startPorts();
    const { port, sandboxPort } = ports;
    const svc = spawnService(startEnv(ports, dataDir));
    try {
      const ready = await waitForStatus(`http://127.0.0.1:${port}/health/ready`, 200, 60_000, svc);
      expect({ ready, output: ready ? '' : svc.output() }).toEqual({ ready: true, output: '' });
      expect((await fetch(`http://127.0.0.1:${port}/docs`)).status).toBe(200);
      // The development key ring is made once, under the data directory, readable by its owner only.
      expect(statSync(join(dataDir, 'data-encryption-keys')).mode & 0o077).toBe(0);
      // The start ends with one block: addresses, the development keys and a curl that works.
      const bannerShown = await waitFor(() => svc.output().includes('curl -X POST'), 15_000);
      expect(bannerShown).toBe(true);
      const output = svc.output();
      const bannerAt = output.indexOf('Payment orchestration service is ready');
      expect(bannerAt).toBeGreaterThan(0);
      // Not a terminal: every log line before the banner is JSON; the banner is one block.
      for (const line of output.slice(0, bannerAt).split('\n').filter((l) => l.trim() !== '')) {
        expect(() => JSON.parse(line)).not.toThrow();
      }
      const banner = output.slice(bannerAt).split('\n');
      const curlLine = banner.findIndex((l) => l.trimStart().startsWith('curl '));
      expect(banner.slice(0, curlLine).every((l) => !l.startsWith('{'))).toBe(true);
      expect(output).toContain(`http://localhost:${port}/docs`);
      expect(output).toContain(`http://localhost:${port}/admin`);
      expect(output).toContain(`http://localhost:${sandboxPort}/gateway/v1/`);
      const key = /shop:\s+(\S+)/.exec(output)?.[1];
      const adminKey = /admin:\s+(\S+)/.exec(output)?.[1];
      expect(key).toBeDefined();
      expect(adminKey).toBeDefined();
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/payways?direction=payment`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      const admin = await fetch(`http://127.0.0.1:${port}/api/v1/admin/refunds`, {
        headers: { Authorization: `Bearer ${adminKey}` },
      });
      expect(admin.status).toBe(200);
      // The printed curl, run as printed (by fetch: the test machine needs no curl).
      const curl = parseCurl(banner[curlLine].trim());
      const created = await fetch(curl.url, { method: curl.method, headers: curl.headers, body: curl.body });
      expect({ status: created.status, body: await created.json() }).toMatchObject({
        status: 201,
        body: { shopOrderId: JSON.parse(curl.body).shopOrderId, amount: '100.00' },
      });
      // The default start runs two sandbox shops: the balance is the agent shop's.
      const balance = await fetch(`http://127.0.0.1:${port}/api/v1/balance`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(balance.status).toBe(200);
      expect(((await balance.json()) as { shopId: number }).shopId).toBe(1002);
    } finally {
      svc.child.kill('SIGTERM');
      expect(await svc.exited).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('killed outright (SIGKILL), a restart on the same data directory stops the database it left running and starts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const ports = await startPorts();
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const parentOf = (pid: number): number =>
      Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
    let second: ReturnType<typeof spawnService> | undefined;
    const first = spawnService(startEnv(ports, dataDir));
    try {
      expect(await waitForStatus(`http://127.0.0.1:${ports.port}/health/ready`, 200, 60_000, first)).toBe(true);
      const left = embeddedPostmaster(dataDir)!;
      first.child.kill('SIGKILL');
      await first.exited;
      // Nothing ends a child with its parent: the server runs on, an orphan.
      expect(await waitFor(() => alive(left) && parentOf(left) === 1, 5_000)).toBe(true);

      second = spawnService(startEnv(ports, dataDir));
      const ready = await waitForStatus(`http://127.0.0.1:${ports.port}/health/ready`, 200, 60_000, second);
      expect({ ready, output: ready ? '' : second.output().slice(-3000) }).toEqual({ ready: true, output: '' });
      expect(alive(left)).toBe(false);
      expect(second.output()).toContain('stopping the embedded PostgreSQL a killed service left running');
      const running = embeddedPostmaster(dataDir)!;
      expect(running).not.toBe(left);
      // The new server is this service's child, and its stop ends it.
      expect(parentOf(running)).toBe(second.child.pid);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(await waitFor(() => !alive(running), 10_000)).toBe(true);
    } finally {
      endAll(dataDir, first, second);
    }
  }, 150_000);

  it('a live service\'s database on the same data directory is left alone: the second start reports the conflict', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const ports = await startPorts();
    const first = spawnService(startEnv(ports, dataDir));
    let second: ReturnType<typeof spawnService> | undefined;
    try {
      expect(await waitForStatus(`http://127.0.0.1:${ports.port}/health/ready`, 200, 60_000, first)).toBe(true);
      const running = embeddedPostmaster(dataDir)!;
      // Other ports for the service and the sandbox, the same data directory and database port.
      const other = { ...(await startPorts()), pgPort: ports.pgPort };
      second = spawnService(startEnv(other, dataDir));
      const code = await Promise.race([second.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]);
      expect(code).toBe(1);
      expect(second.output()).toContain('Cannot start the embedded PostgreSQL');
      expect(second.output()).not.toContain('a killed service left running');
      // The first service and its database are untouched.
      expect(embeddedPostmaster(dataDir)).toBe(running);
      expect((await fetch(`http://127.0.0.1:${ports.port}/health/ready`)).status).toBe(200);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    } finally {
      endAll(dataDir, first, second);
    }
  }, 150_000);

  it('EMBEDDED_PG_PORT taken: exits 1 naming the setting and PostgreSQL\'s own reason', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const ports = await startPorts();
    const { port, pgPort } = ports;
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(pgPort, '127.0.0.1', resolve));
    const svc = spawnService(startEnv(ports, dataDir));
    try {
      const code = await Promise.race([svc.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]);
      const output = svc.output();
      expect({ code, output }).toMatchObject({ code: 1 });
      expect(output).toContain(`Cannot start the embedded PostgreSQL on EMBEDDED_PG_PORT ${pgPort}`);
      expect(output).toContain('Address already in use');
      expect(output).not.toContain('undefined');
      // Nothing was left listening: the service's own port was never opened.
      expect(await fetch(`http://127.0.0.1:${port}/health/live`).then(() => 'answered', () => 'refused')).toBe('refused');
    } finally {
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
      await new Promise((r) => holder.close(r));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
