import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Nothing in the service turns on async hooks. On Node 20 a single AsyncLocalStorage
 * that has been entered, or an enabled `createHook`, puts a promise hook on every promise the
 * process makes, for every request, not only the code that asked for it: about 3 % of a
 * create's CPU and a tenth of what a create waiting on the gateway holds. Who acts is passed
 * explicitly instead (src/common/actor.ts; docs/design.md, "The acting key
 * passed explicitly"). `AsyncResource` alone enables nothing and is allowed.
 */
const SRC = join(process.cwd(), 'src');
const FORBIDDEN = [
  /\bAsyncLocalStorage\b/,
  /\bcreateHook\s*\(/,
  /\bpromiseHooks\b/,
  /\benterWith\s*\(/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The file's lines that use a forbidden API, as `path:line`. */
function asyncHookUses(path: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  return code.split('\n').flatMap((line, i) => {
    const bare = line.replace(/\/\/.*$/, '');
    return FORBIDDEN.some((re) => re.test(bare)) ? [`${path}:${i + 1}`] : [];
  });
}

describe('no async hooks in the service', () => {
  it('no source file of the service enables async hooks', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const uses = files.flatMap((f) =>
      asyncHookUses(relative(process.cwd(), f), readFileSync(f, 'utf8')),
    );
    expect(uses).toEqual([]);
  });

  it.each([
    "import { AsyncLocalStorage } from 'node:async_hooks';",
    "const { AsyncLocalStorage: Store } = require('async_hooks');",
    'const hook = async_hooks.createHook({ init() {} });',
    'const h = createHook ({ init })',
    "import { promiseHooks } from 'node:v8';",
    'storage.enterWith(ctx);',
  ])('finds %j', (line) => {
    expect(asyncHookUses('x.ts', `const a = 1;\n${line}\n`)).toEqual(['x.ts:2']);
  });

  it('does not count a comment that names them, nor AsyncResource', () => {
    const text = [
      '// AsyncLocalStorage tags every promise',
      '/* createHook( is not used',
      '   AsyncLocalStorage */',
      "import { AsyncResource } from 'node:async_hooks';",
    ].join('\n');
    expect(asyncHookUses('x.ts', text)).toEqual([]);
  });
});
