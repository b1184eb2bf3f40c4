/**
 * The randomized history search (npm run test:histories, issue #46): its own Jest configuration,
 * so plain `npm test` never runs it. One worker: every history runs its own service process and
 * the machine's cores are shared. The global setup is the e2e suite's (the build in dist/, the
 * migrated template database; TEST_DATABASE_URL or an embedded PostgreSQL). The runner,
 * scripts/histories.mjs, turns `--seed N --runs M` and the generator flags into HISTORY_*
 * variables.
 */
const tsJest = ['ts-jest', { diagnostics: false, useESM: true, tsconfig: '<rootDir>/tsconfig.jest.json' }];
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': tsJest },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  testMatch: ['<rootDir>/test/histories/**/*.history-spec.ts'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 3_600_000,
  maxWorkers: 1,
  forceExit: true,
};
