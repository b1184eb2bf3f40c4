import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Access lines (and gateway call lines) are written in blocks (src/common/logger.ts): never held
 * longer than the flush interval, and never lost on an orderly exit, a thrown error or
 * process.exit. Run against the compiled logger in a child process, as the service runs it.
 */
const LOGGER = join(process.cwd(), 'dist', 'src', 'common', 'logger.js');

function run(script: string): {
  lines: () => string[];
  output: () => string;
  done: Promise<number | null>;
  child: ReturnType<typeof spawn>;
} {
  let out = '';
  const child = spawn(process.execPath, ['-e', script], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'info', LOGGER },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    lines: () => out.split('\n').filter((l) => l.includes('"component":"access"')),
    output: () => out,
    done,
    child,
  };
}

const line = (n: number) =>
  `accessLogger.info({ method: 'GET', route: '/x', status: 200, requestId: 'r-${n}' }, 'request');`;

describe('access lines in blocks', () => {
  it('writes a quiet service’s last line within the flush interval, without an exit', async () => {
    // The child says on stderr (not through the logger) when the line is logged: the wait is
    // timed from there, not from the spawn (a child's start took over 2 s on a loaded machine).
    const p = run(
      `const { accessLogger } = require(process.env.LOGGER); ${line(1)} process.stderr.write('LOGGED\\n'); setTimeout(() => {}, 5000);`,
    );
    const until = Date.now() + 20000;
    while (!p.output().includes('LOGGED') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    expect(p.output()).toContain('LOGGED');
    const logged = Date.now();
    while (p.lines().length === 0 && Date.now() - logged < 3000)
      await new Promise((r) => setTimeout(r, 10));
    expect(p.lines()).toHaveLength(1);
    // The block waits for more lines, but not longer than the interval (200 ms) and some slack.
    expect(Date.now() - logged).toBeLessThan(1500);
    p.child.kill('SIGKILL');
    await p.done;
  });

  it.each([
    ['a natural exit', ''],
    ['process.exit', 'process.exit(0);'],
    ['a thrown error', "throw new Error('boom');"],
  ])('keeps every line on %s', async (_name, end) => {
    const lines = Array.from({ length: 30 }, (_, i) => line(i)).join(' ');
    const p = run(`const { accessLogger } = require(process.env.LOGGER); ${lines} ${end}`);
    await p.done;
    const ids = p.lines().map((l) => (JSON.parse(l) as { requestId: string }).requestId);
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => `r-${i}`));
  });

  it('writes a warning at once, with every line logged before it, in order', async () => {
    // Killed right after the warning: no exit hook runs, so only the warning's own write can
    // have put the lines out.
    const p = run(
      `const { accessLogger, logger } = require(process.env.LOGGER); ${line(1)} ${line(2)} logger.warn({ component: 'test' }, 'careful'); process.kill(process.pid, 'SIGKILL');`,
    );
    await p.done;
    expect(p.lines().map((l) => (JSON.parse(l) as { requestId: string }).requestId)).toEqual(['r-1', 'r-2']);
    expect(p.output()).toContain('"msg":"careful"');
  });

  it('can lose at most the info lines of the last interval to a kill -9 (the price of blocks)', async () => {
    const p = run(`const { accessLogger } = require(process.env.LOGGER); ${line(1)} process.kill(process.pid, 'SIGKILL');`);
    await p.done;
    expect(p.lines()).toEqual([]);
  });

  it('puts the lines in blocks: far fewer writes than lines', async () => {
    // Many lines in one turn: without blocks each would be its own write(2); the child counts
    // the writes made to its stdout.
    const script = `
      const fs = require('node:fs');
      let writes = 0;
      const writeSync = fs.writeSync;
      fs.writeSync = function (fd, ...rest) { if (fd === 1) writes++; return writeSync.call(this, fd, ...rest); };
      const { accessLogger, flushLogLines } = require(process.env.LOGGER);
      for (let i = 0; i < 600; i++) ${line(0).replace("'r-0'", '`r-${i}`')}
      flushLogLines();
      process.stderr.write('writes=' + writes + '\\n');`;
    let err = '';
    const child = spawn(process.execPath, ['-e', script], {
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'info', LOGGER },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise((r) => child.on('exit', r));
    const writes = Number(/writes=(\d+)/.exec(err)?.[1]);
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThan(60);
  });
});
