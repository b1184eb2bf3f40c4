import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import {
  embeddedPostmaster,
  killEmbeddedPostgres,
  startEnv,
  startPorts,
  waitForStatus,
  type ServiceProcess,
} from '../support/process';

/**
 * `npm start` as a process manager runs it: the build is skipped when nothing
 * changed since the last one (global-setup built this tree), and a SIGTERM or SIGINT sent to the
 * npm process itself stops the service and its embedded PostgreSQL, leaving nothing behind.
 */

function npmStart(env: Record<string, string>): ServiceProcess {
  let out = '';
  // Under `npm test`, npm_execpath names this npm's own CLI: the same npm a developer runs.
  const npmCli = process.env.npm_execpath;
  const child = spawn(
    npmCli ? process.execPath : 'npm',
    [...(npmCli ? [npmCli] : []), 'start', '--silent'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, so a failed test can still end everything it started.
      detached: true,
    },
  );
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => resolve(code)),
  );
  return { child, output: () => out, exited };
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

describe('npm start under a process manager', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /**
   * `npm start` on ports of its own, ready before `test` runs; afterwards its whole process group
   * is killed, whatever the test left running.
   */
  async function withNpmStart(
    test: (s: {
      svc: ServiceProcess;
      port: number;
      sandboxPort: number;
      pgPort: number;
    }) => Promise<void>,
  ): Promise<void> {
    const ports = await startPorts();
    const { port, sandboxPort, pgPort } = ports;
    const svc = npmStart(startEnv(ports, dataDir));
    try {
      const ready = await waitForStatus(`http://127.0.0.1:${port}/health/ready`, 200, 90_000, svc);
      expect({ ready, output: ready ? '' : svc.output().slice(-3000) }).toEqual({
        ready: true,
        output: '',
      });
      await test({ svc, port, sandboxPort, pgPort });
    } finally {
      try {
        process.kill(-svc.child.pid!, 'SIGKILL');
      } catch {
        // already gone: the test's own point
      }
      killEmbeddedPostgres(dataDir);
    }
  }

  /** True once nothing listens on any of `ports` (within 10 s). */
  const allStopped = (...ports: number[]) =>
    within(10_000, async () => !(await Promise.all(ports.map(listening))).some(Boolean));

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process stops the service and its PostgreSQL within 10 s; an unchanged tree is not rebuilt',
    (signal) =>
      withNpmStart(async ({ svc, port, sandboxPort, pgPort }) => {
        expect(svc.output()).toContain('dist/ is up to date with the sources, not rebuilt');
        expect(await listening(pgPort)).toBe(true);

        svc.child.kill(signal);
        const stopped = await allStopped(port, sandboxPort, pgPort);
        expect({ stopped, output: stopped ? '' : svc.output().slice(-3000) }).toEqual({
          stopped: true,
          output: '',
        });
        expect(
          await Promise.race([svc.exited.then(() => true), within(2000, async () => false)]),
        ).toBe(true);
      }),
    150_000,
  );

  it(
    'Ctrl-C in a terminal (SIGINT to the whole process group, forwarded again by npm a moment later) is one graceful stop',
    () =>
      withNpmStart(async ({ svc, port, sandboxPort, pgPort }) => {
        // A create in flight (the sandbox answers after 3 s) keeps the service closing, and npm
        // running its child, while the repeat arrives.
        const banner = await within(30_000, async () => /shop: +dev_\S+/.test(svc.output()));
        const shopKey = /shop: +(dev_\S+)/.exec(svc.output())?.[1];
        expect({ banner, shopKey: typeof shopKey }).toEqual({ banner: true, shopKey: 'string' });
        const settings = await fetch(`http://127.0.0.1:${sandboxPort}/sandbox/settings`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ latencyMs: 3000 }),
        });
        expect(settings.status).toBe(200);
        // The embedded PostgreSQL is the leader of a process group of its own: the terminal's
        // SIGINT below does not reach it, and the service stops it once its requests are done.
        const postmaster = embeddedPostmaster(dataDir);
        const groupOf = (pid: number): number =>
          Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);
        expect(postmaster).not.toBeNull();
        expect(groupOf(postmaster!)).toBe(postmaster);
        expect(groupOf(postmaster!)).not.toBe(groupOf(svc.child.pid!));
        const inFlight = fetch(`http://127.0.0.1:${port}/api/v1/invoices`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${shopKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            shopOrderId: `ctrl-c-${Date.now()}`,
            amount: '100.00',
            currency: 643,
            payway: 'card_core_payin_rub[mock_server,success_with_callback]',
          }),
        }).then(
          async (r) => ({
            status: r.status,
            invoiceId: ((await r.json()) as { invoiceId?: unknown }).invoiceId,
          }),
          () => 'no answer',
        );
        await new Promise((r) => setTimeout(r, 500));
        // As a terminal delivers it: to every process of the foreground group at once; npm then
        // sends the service the SIGINT it got, so the service sees the one Ctrl-C twice. The two
        // may reach it together and merge into one pending signal; npm's forward arriving a moment
        // later (its event loop busy) is the case that used to force an exit, so it is made here.
        process.kill(-svc.child.pid!, 'SIGINT');
        await new Promise((r) => setTimeout(r, 100));
        svc.child.kill('SIGINT');
        // The create in flight finishes: the gateway's answer is recorded and sent (before, the
        // same SIGINT stopped the database under it, and it answered 500).
        expect(await inFlight).toEqual({ status: 201, invoiceId: expect.any(String) });
        const stopped = await allStopped(port, sandboxPort, pgPort);
        const code = await Promise.race([
          svc.exited,
          new Promise<number>((r) => setTimeout(() => r(-1), 5000).unref()),
        ]);
        const out = svc.output();
        expect({
          stopped,
          code,
          shuttingDown: out.includes('"msg":"shutting down"'),
          forced: out.includes('second stop signal'),
          repeatSeen: out.includes('stop signal delivered again'),
          output: stopped && code === 0 ? '' : out.slice(-3000),
        }).toEqual({
          stopped: true,
          code: 0,
          shuttingDown: true,
          forced: false,
          repeatSeen: true,
          output: '',
        });
      }),
    150_000,
  );
});
