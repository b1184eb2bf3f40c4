import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The service runs with one set of Node flags wherever it is started: `npm start`, `npm run
 * start:prod` and the container image. `--no-allocation-site-pretenuring` keeps V8 from
 * allocating a request's short-lived objects straight into old space after it has seen them
 * survive at start-up; with it on, P5's peak RSS under P1 read 249–281 MB in 8 of 18 bench runs
 * (goal ≤ 250), with it off 162–173 MB in 8 of 8 (and 167, 168 in two full runs) (docs/design.md).
 * `--max-semi-space-size=32` (MB; V8's default is 16 on 64-bit) halves how often the young
 * generation is scavenged: a create that waits 200 ms for the gateway then dies before its second
 * scavenge instead of being copied twice and promoted. Alternated at a fixed rate under P2's load,
 * a create cost 1.02 ms of CPU with it against 1.22 without (medians of 6 rounds, lower in 5);
 * under P1's the same (1.17 against 1.18); about 30 MB more at peak (docs/design.md,
 * "The young generation at 32 MB").
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

  it('npm start gives the young generation 32 MB semi-spaces', () => {
    expect(flagsOfScript(scripts.start)).toContain('--max-semi-space-size=32');
  });

  it('start:prod and the container image run it with the same flags as npm start', () => {
    const flags = flagsOfScript(scripts.start);
    expect(flagsOfScript(scripts['start:prod'])).toEqual(flags);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'));
    expect(cmd).not.toBeNull();
    expect(JSON.parse(cmd![1])).toEqual(['node', ...flags, 'dist/src/main.js']);
  });
});
