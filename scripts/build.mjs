// The build: TypeScript to dist/, the console's views beside it, and a fingerprint of what it
// was built from (dist/.build-inputs). `--if-changed` skips the build when that fingerprint is
// still the one of the tree (so `npm start` with nothing changed starts at once);
// `--no-check` emits without type-checking (the test run: `npm run typecheck` reports types).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const stamp = join(root, 'dist', '.build-inputs');
const args = new Set(process.argv.slice(2));

/** Every file the build reads, in a fixed order. */
function inputs() {
  const files = ['ormconfig.ts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (!name.endsWith('.spec.ts')) files.push(path);
    }
  };
  walk('src');
  return files.filter((f) => existsSync(join(root, f)));
}

function fingerprint() {
  const h = createHash('sha256');
  h.update(process.version.split('.')[0]);
  for (const f of inputs()) {
    h.update(`\0${relative(root, join(root, f))}\0`);
    h.update(readFileSync(join(root, f)));
  }
  return h.digest('hex');
}

const want = fingerprint();
if (
  args.has('--if-changed') &&
  existsSync(join(root, 'dist', 'src', 'main.js')) &&
  existsSync(stamp) &&
  readFileSync(stamp, 'utf8').trim() === want
) {
  process.stdout.write('build: dist/ is up to date with the sources, not rebuilt\n');
  process.exit(0);
}

// The first build takes a while (tens of seconds on a small machine): say so before it starts,
// so a first `npm start` is not silence.
const first = !existsSync(join(root, 'dist', 'src', 'main.js'));
process.stdout.write(
  `build: compiling TypeScript to dist/${args.has('--no-check') ? '' : ' with type checks'}` +
    `${first ? ' (first build: this takes a while, once)' : ' (sources changed)'}...\n`,
);
const started = Date.now();
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(
  process.execPath,
  [tsc, '-p', 'tsconfig.build.json', ...(args.has('--no-check') ? ['--noCheck'] : [])],
  { cwd: root, stdio: 'inherit' },
);
cpSync(join(root, 'src', 'console', 'views'), join(root, 'dist', 'src', 'console', 'views'), {
  recursive: true,
});
writeFileSync(stamp, `${want}\n`);
process.stdout.write(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
