const os = require('node:os');
const LONG_INTEGRATION = require('./test/harness/long-integration-files.js');

/**
 * Two tiers, one command: `npm test` runs unit tests (no cluster) and integration tests (a real API
 * server), but for the long ones `npm run test:long` runs (test/harness/long-integration-files.js).
 */
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // @kubernetes/client-node and its auth dependencies ship ESM only; let ts-jest transform them.
  transformIgnorePatterns: ['/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
};

module.exports = {
  // Two workers per core. Suites share one control plane, and each works in namespaces of its own
  // and counts only its own processes' writes, so several run side by side; a file spends part of
  // its time waiting on the API server, kwok, a CronJob's minute or its reconciler, which more
  // workers fill (measured on 2 cores: 764 s with two workers, 635 s with three; later, with the
  // suite grown, 517 s with three and 466 s with four).
  // A number, not '200%': jest reads a percentage over 100 as that many workers.
  maxWorkers: Math.max(2, os.availableParallelism() * 2),
  reporters: ['default', '<rootDir>/test/harness/failure-flag-reporter.js'],
  // Runs after the tiers' set-ups: `npm test`'s type-check, started by them, has passed.
  globalSetup: '<rootDir>/test/harness/type-check.ts',
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      // Tools the unit tests run (helm), built or found before any test file starts.
      globalSetup: '<rootDir>/test/harness/unit-global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/unit-global-teardown.ts',
    },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // The long tier's files run by `npm run test:long` (jest.long.config.js), not here.
      testPathIgnorePatterns: ['/node_modules/', ...LONG_INTEGRATION.map((f) => `/test/integration/${f}\\.test\\.ts$`)],
      // One real control plane (etcd, kube-apiserver, kube-controller-manager) for the tier.
      globalSetup: '<rootDir>/test/harness/jest-global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/jest-global-teardown.ts',
      slowTestThreshold: 60,
    },
  ],
};
