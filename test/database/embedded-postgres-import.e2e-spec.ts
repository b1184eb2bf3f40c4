import { spawnSync } from 'node:child_process';

/**
 * CI once failed a suite that started the embedded PostgreSQL after another suite in the same
 * Jest process had loaded the module: the package's dynamic import resolved in the first suite's
 * torn-down environment ("import a file after the Jest environment has been torn down"). The
 * fixture run reproduces that order deterministically (a global set-up that loads the package,
 * a suite that only loads the module, then one that loads the package); both suites must pass.
 */
it('a second suite in the same worker loads the embedded PostgreSQL package', () => {
  const run = spawnSync(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--disable-warning=ExperimentalWarning',
      'node_modules/jest/bin/jest.js',
      '-i',
      '-c',
      'test/fixtures/two-suites-one-worker/jest.config.js',
    ],
    { encoding: 'utf8', timeout: 100_000 },
  );
  const output = `${run.stdout}${run.stderr}`;
  expect(output).toMatch(/Tests:\s+2 passed, 2 total/);
  expect(run.status).toBe(0);
}, 120_000);
