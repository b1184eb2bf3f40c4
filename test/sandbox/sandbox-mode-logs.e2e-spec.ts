import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEnv, startPorts, waitForStatus } from '../support/process';

/**
 * `npm start` with no settings, at a terminal (a pseudo-terminal made by `script`): readable
 * lines through pino-pretty and no route map at the default level; `LOG_FORMAT=json` gives a
 * parser JSON lines even there. Sandbox settings changed in one run and kept in the sandbox's
 * stored state are named by the next start's block.
 */
const SCRIPT = spawnSync('script', ['--version']).status === 0;

interface Terminal {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** The compiled service under a pseudo-terminal, with exactly `env` (plus PATH). */
function atTerminal(env: Record<string, string>): Terminal {
  let out = '';
  const command = `exec ${process.execPath} dist/src/main.js`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** The service's own process: the descendant of `script` running dist/src/main.js. */
function servicePid(root: number): number | null {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (pid !== root && cmd.includes('dist/src/main.js')) return pid;
      for (const t of readdirSync(`/proc/${pid}/task`))
        queue.push(
          ...readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')
            .trim()
            .split(/\s+/)
            .filter((x) => x !== '')
            .map(Number),
        );
    } catch {
      // gone
    }
  }
  return null;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

(SCRIPT ? describe : describe.skip)('sandbox mode at a terminal', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-tty-'));
  let env: Record<string, string>;
  let base = '';
  let sandboxOrigin = '';
  let running: Terminal | undefined;

  beforeAll(async () => {
    const ports = await startPorts();
    base = `http://127.0.0.1:${ports.port}`;
    sandboxOrigin = `http://127.0.0.1:${ports.sandboxPort}`;
    env = startEnv(ports, dataDir);
  });

  async function start(extra: Record<string, string> = {}): Promise<Terminal> {
    const t = atTerminal({ ...env, ...extra });
    running = t;
    const ready = await waitForStatus(`${base}/health/ready`, 200, 90_000);
    expect({ ready, output: ready ? '' : t.output() }).toEqual({ ready: true, output: '' });
    expect(await until(() => t.output().includes('curl -X POST'), 15_000)).toBe(true);
    return t;
  }

  async function stop(t: Terminal): Promise<void> {
    const pid = servicePid(t.child.pid!);
    expect(pid).not.toBeNull();
    process.kill(pid!, 'SIGTERM');
    await t.exited;
  }

  afterAll(async () => {
    if (running !== undefined && running.child.exitCode === null) {
      const pid = servicePid(running.child.pid!);
      if (pid !== null) process.kill(pid, 'SIGTERM');
      await running.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('LOG_FORMAT=json gives JSON lines even at a terminal; a setting changed then is named by the next start, whose lines are readable and carry no route map', async () => {
    const first = await start({ LOG_FORMAT: 'json' });
    const lines = first
      .output()
      .split(/\r?\n/)
      .filter((l) => /"msg":"service listening"/.test(l));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0].trim())).toMatchObject({ level: 'info', msg: 'service listening' });
    const changed = await fetch(`${sandboxOrigin}/sandbox/settings`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ latencyMs: 300, notifyFormat: 'form' }),
    });
    expect(changed.status).toBe(200);
    expect(first.output()).not.toContain('kept from an earlier run');
    await stop(first);

    const second = await start();
    const out = second.output();
    // Readable lines: pino-pretty's, not JSON objects.
    expect(out).toMatch(/INFO.*service listening/);
    expect(out).not.toMatch(/^\{"level"/m);
    expect(out).not.toContain('"msg":"service listening"');
    // No route map at the default level.
    expect(out).not.toContain('Mapped {');
    expect(out).not.toMatch(/RouterExplorer|RoutesResolver/);
    // The block names what the sandbox kept.
    expect(out).toMatch(/settings: kept from an earlier run: .*notifyFormat: "form"/);
    expect(out).toMatch(/settings: kept from an earlier run: .*latencyMs: 300/);
    await stop(second);
  });
});
