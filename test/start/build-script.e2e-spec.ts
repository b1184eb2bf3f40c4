import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * scripts/build.mjs on a tree of its own (a tiny project beside the real node_modules): the first
 * build says it is running before it compiles, so a first `npm start` is not silence; a build with
 * nothing changed says it was skipped.
 */
describe('scripts/build.mjs', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'build-script-'));
    mkdirSync(join(root, 'scripts'));
    cpSync(join(process.cwd(), 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
    symlinkSync(join(process.cwd(), 'node_modules'), join(root, 'node_modules'));
    mkdirSync(join(root, 'src', 'console', 'views'), { recursive: true });
    writeFileSync(join(root, 'src', 'console', 'views', 'page.html'), '<p>x</p>\n');
    writeFileSync(join(root, 'src', 'main.ts'), 'export const answer: number = 42;\n');
    writeFileSync(
      join(root, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: '.', module: 'commonjs', target: 'es2022', strict: true, types: [] } }),
    );
    writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['src/**/*.ts'] }));
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('prints a line before the first build compiles, then when it is done; skips an unchanged tree', () => {
    const first = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed', '--no-check'], { cwd: root, encoding: 'utf8' });
    expect(first.status).toBe(0);
    const lines = first.stdout.split('\n').filter((l) => l !== '');
    expect(lines[0]).toMatch(/^build: compiling TypeScript to dist\/ \(first build: this takes a while, once\)\.\.\.$/);
    expect(lines[lines.length - 1]).toMatch(/^build: done in \d+\.\d s$/);
    expect(existsSync(join(root, 'dist', 'src', 'main.js'))).toBe(true);

    const again = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed', '--no-check'], { cwd: root, encoding: 'utf8' });
    expect(again.stdout).toContain('not rebuilt');
    expect(again.stdout).not.toContain('compiling');

    writeFileSync(join(root, 'src', 'main.ts'), 'export const answer: number = 43;\n');
    const changed = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed', '--no-check'], { cwd: root, encoding: 'utf8' });
    expect(changed.stdout.split('\n')[0]).toBe('build: compiling TypeScript to dist/ (sources changed)...');
  }, 120000);
});
