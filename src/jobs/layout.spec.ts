import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The house layout (STYLE.md): `jobs/` imports no domain, and no folder imports a folder that
 * imports it back; no file imports itself back through any chain (scripts/cycles.mjs, also run by
 * `npm run lint`). Read from the sources, so a new import that breaks it fails here.
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

/** scripts/cycles.mjs over `root`: its exit code and what it printed. */
function cycles(root: string): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(process.cwd(), 'scripts/cycles.mjs'), root], {
    encoding: 'utf8',
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('import circles', () => {
  it('none anywhere under src/, type-only imports included', () => {
    const { code, out } = cycles(SRC);
    expect(out).toContain('no import circle');
    expect(code).toBe(0);
  });

  describe('the check itself', () => {
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'cycles-'));
      mkdirSync(join(root, 'a'));
      mkdirSync(join(root, 'b'));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    const put = (file: string, text: string) => writeFileSync(join(root, file), text);

    it('finds a circle through a type-only import, a re-export and a folder index', () => {
      put(
        'a/service.ts',
        "import { op } from '../b';\nexport class Service { run() { return op(this); } }\n",
      );
      put('b/index.ts', "export * from './op';\n");
      put(
        'b/op.ts',
        "import type { Service } from '../a/service';\nexport const op = (s: Service) => s;\n",
      );
      const { code, out } = cycles(root);
      expect(code).toBe(1);
      expect(out).toContain('import circle (3 files)');
      expect(out).toContain('a/service.ts');
      expect(out).toContain('b/op.ts');
    });

    it('finds a dynamic import back, and a file importing itself', () => {
      put('a/one.ts', "export async function load() { return import('./two'); }\n");
      put('a/two.ts', "import { load } from './one';\nexport const again = load;\n");
      put('b/self.ts', "import { x } from './self';\nexport const x = 1; export const y = x;\n");
      const { code, out } = cycles(root);
      expect(code).toBe(1);
      expect(out).toContain('a/one.ts');
      expect(out).toContain('import circle (1 files):\n  b/self.ts');
    });

    it('passes a tree whose imports only go one way', () => {
      put('a/top.ts', "import { leaf } from '../b/leaf';\nexport const top = leaf;\n");
      put(
        'b/leaf.ts',
        "import { readFileSync } from 'node:fs';\nexport const leaf = readFileSync;\n",
      );
      expect(cycles(root).code).toBe(0);
    });
  });
});

describe('end-to-end suites by module', () => {
  it('every suite sits in the folder of what it tests (test/<module>/…), none flat in test/', () => {
    const flat = readdirSync(join(process.cwd(), 'test')).filter((f) => f.endsWith('.e2e-spec.ts'));
    expect(flat).toEqual([]);
  });
});
