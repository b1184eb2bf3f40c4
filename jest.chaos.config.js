/**
 * The chaos suite (npm run test:chaos): its own Jest configuration, so plain `npm test`
 * never runs it. The scenario files run side by side (each has its own worlds: database, sandbox,
 * service port; the database-loss file its own PostgreSQL), so the run takes as long as the
 * longest file. forceExit: a scenario that timed out may leave a chain's promise behind.
 */
const tsJest = ['ts-jest', { diagnostics: false, useESM: true, tsconfig: '<rootDir>/tsconfig.jest.json' }];
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': tsJest },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  testMatch: ['<rootDir>/test/chaos/**/*.chaos-spec.ts'],
  globalSetup: '<rootDir>/test/chaos/global-setup.ts',
  globalTeardown: '<rootDir>/test/chaos/global-teardown.ts',
  testTimeout: 330000,
  maxWorkers: 4,
  forceExit: true,
};
