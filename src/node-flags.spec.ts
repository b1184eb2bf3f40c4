import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The service runs with one set of Node flags wherever it is started: `npm start`, `npm run
 * start:prod` and the container image. `--no-allocation-site-pretenuring` keeps V8 from
 * allocating a request's short-lived objects straight into old space after it has seen them
 * survive at start-up; with it on, P5's peak RSS under P1 read 249–281 MB in 8 of 18 bench runs
 * (goal ≤ 250), with it off 162–173 MB in 8 of 8 (and 167, 168 in two full runs) (docs/design-watch-and-runner.md).
 */
const root = process.cwd();

function flagsOfScript(script: string): string[] {
  const m = /\bexec node((?:\s+--[\w-]+(?:=\S+)?)*)\s+dist\/src\/main\.js$/.exec(script);
  if (!m) throw new Error(`not a start script this test reads: ${script}`);
  return m[1].trim().split(/\s+/).filter(Boolean);
}

describe('Node flags of the service', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }).scripts;

  it('npm start runs the service without allocation-site pretenuring', () => {
    expect(flagsOfScript(scripts.start)).toContain('--no-allocation-site-pretenuring');
  });

  it('start:prod and the container image run it with the same flags as npm start', () => {
    const flags = flagsOfScript(scripts.start);
    expect(flagsOfScript(scripts['start:prod'])).toEqual(flags);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'));
    expect(cmd).not.toBeNull();
    expect(JSON.parse(cmd![1])).toEqual(['node', ...flags, 'dist/src/main.js']);
  });
});
