import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

/**
 * `engines.node` of package.json is a promise to whoever installs the service: every installed
 * package must run on the oldest Node it admits, or `npm install` warns EBADENGINE on the
 * documented Node (@nestjs/common 12.5 pins file-type 22, which wants Node 22; the
 * override to file-type 21 keeps Node 20 honest).
 */
// Jest runs from the repository's root (npm test).
const root = process.cwd();
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
};

function installedPackages(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    if (name.startsWith('@')) {
      for (const sub of readdirSync(path)) out.push(join(path, sub));
    } else out.push(path);
  }
  // Nested copies (a dependency's own node_modules) count as well.
  return out.flatMap((p) => [p, ...installedPackages(join(p, 'node_modules'))]);
}

describe('engines', () => {
  it('every installed package runs on the oldest Node that package.json admits', () => {
    const oldest = semver.minVersion(own.engines.node);
    expect(oldest).not.toBeNull();
    const refusing: string[] = [];
    for (const dir of installedPackages(join(root, 'node_modules'))) {
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: string;
        version?: string;
        engines?: { node?: unknown };
      };
      const wants = pkg.engines?.node;
      if (typeof wants !== 'string' || semver.validRange(wants) === null) continue;
      if (!semver.satisfies(oldest!, wants))
        refusing.push(`${pkg.name}@${pkg.version} wants node ${wants}`);
    }
    expect(refusing).toEqual([]);
  });
});
