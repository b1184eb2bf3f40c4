import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The house layout (STYLE.md): `jobs/` imports no domain, and no folder imports a folder that
 * imports it back. Read from the sources, so a new import that breaks it fails here.
 */
const SRC = join(process.cwd(), 'src');
const DOMAINS = ['invoices', 'refunds', 'payouts', 'notifications', 'payway-config', 'attention', 'payment-links'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

function folderImports(): Map<string, Set<string>> {
  const deps = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    const from = relative(SRC, file).split('/')[0];
    if (from.endsWith('.ts')) continue;
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const to = relative(SRC, normalize(join(dirname(file), m[1]))).split('/')[0];
      if (to === from || to.startsWith('..') || to.endsWith('.ts')) continue;
      if (!deps.has(from)) deps.set(from, new Set());
      deps.get(from)?.add(to);
    }
  }
  return deps;
}

describe('source layout', () => {
  const deps = folderImports();

  it('jobs/ imports no domain folder', () => {
    expect([...(deps.get('jobs') ?? [])].filter((d) => DOMAINS.includes(d))).toEqual([]);
  });

  it('no domain or jobs folder imports a folder that imports it back', () => {
    const watched = new Set([...DOMAINS, 'jobs']);
    const cycles: string[] = [];
    for (const [a, targets] of deps)
      for (const b of targets)
        if (a < b && (watched.has(a) || watched.has(b)) && deps.get(b)?.has(a))
          cycles.push(`${a} <-> ${b}`);
    expect(cycles).toEqual([]);
  });
});
