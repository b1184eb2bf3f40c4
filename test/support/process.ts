import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports';

/** The three listeners of a service started with no settings (npm start's): each its own port. */
export interface StartPorts {
  port: number;
  sandboxPort: number;
  pgPort: number;
}

export async function startPorts(): Promise<StartPorts> {
  return { port: await freePort(), sandboxPort: await freePort(), pgPort: await freePort() };
}

/**
 * The process id of the embedded PostgreSQL of a service started with `dataDir`, from its
 * `postmaster.pid`; null when there is none.
 */
export function embeddedPostmaster(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Ends what a test left of such a service's embedded PostgreSQL. It runs in a process group of
 * its own (a Ctrl-C must not reach it), so killing the service's group leaves it running.
 */
export function killEmbeddedPostgres(dataDir: string): void {
  const pid = embeddedPostmaster(dataDir);
  if (pid === null) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The settings that put such a service's listeners on `ports` and its data under `dataDir`. */
export function startEnv(ports: StartPorts, dataDir: string): Record<string, string> {
  return {
    PORT: String(ports.port),
    SANDBOX_PORT: String(ports.sandboxPort),
    EMBEDDED_PG_PORT: String(ports.pgPort),
    DATA_DIR: dataDir,
  };
}

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
}

/**
 * Runs the compiled service (`node dist/src/main.js`, built by global-setup) with exactly `env`
 * (plus PATH), as `npm start` would after the build.
 */
export function spawnService(env: Record<string, string>): ServiceProcess {
  let out = '';
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  // 'close', not 'exit': 'exit' can come before the last output is read from the pipes.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** Polls `url` until it answers `status`, `timeoutMs` passes, or the process (if given) exits. */
export async function waitForStatus(url: string, status: number, timeoutMs: number, proc?: ServiceProcess): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  let gone = false;
  void proc?.exited.then(() => (gone = true));
  while (Date.now() < end && !gone) {
    try {
      const res = await fetch(url);
      if (res.status === status) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}
