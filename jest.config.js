/**
 * NestJS 12 and TypeORM 1.x ship as ES modules only, so Jest runs the tests as native ES modules
 * (ts-jest `useESM`), which needs Node's --experimental-vm-modules: always run the tests through
 * `npm test` (filter with `npm test -- <path pattern>`; `npm run test:unit` / `npm run test:e2e` for one
 * project), never a bare `npx jest`.
 * In test files import `jest` itself from '@jest/globals' when you need jest.fn or fake timers.
 * The compiled service is CommonJS and loads those packages with require(esm) (Node >= 20.19).
 */
const os = require('node:os');

const tsJest = ['ts-jest', { diagnostics: false, useESM: true, tsconfig: '<rootDir>/tsconfig.jest.json' }];
const common = {
  testEnvironment: 'node',
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': tsJest },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
};
module.exports = {
  testTimeout: 60000,
  // Most of an e2e suite's time is waiting (HTTP round trips, timers, child processes, the
  // database), not CPU, so one worker more than the cores keeps both cores of a 2-core machine
  // busy; Jest starts the slowest suites (timed on the previous run) first. `--maxWorkers=N` overrides.
  maxWorkers: Math.max(2, os.availableParallelism() + 1),
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
  ],
};
