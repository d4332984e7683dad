/** Two tiers, one command: `npm test` runs unit tests (no cluster) and integration tests (a real API server). */
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // @kubernetes/client-node and its auth dependencies ship ESM only; let ts-jest transform them.
  transformIgnorePatterns: ['/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
};

module.exports = {
  // One worker per core (jest's default leaves one idle). Suites share one control plane, and
  // each works in namespaces of its own and counts only its own processes' writes, so two run
  // side by side; the API server and the reconcilers mostly wait on each other, not on the CPU.
  maxWorkers: '100%',
  reporters: ['default', '<rootDir>/test/harness/failure-flag-reporter.js'],
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      // Tools the unit tests run (helm), built or found before any test file starts.
      globalSetup: '<rootDir>/test/harness/unit-global-setup.ts',
    },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // One real control plane (etcd, kube-apiserver, kube-controller-manager) for the tier.
      globalSetup: '<rootDir>/test/harness/jest-global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/jest-global-teardown.ts',
      slowTestThreshold: 60,
    },
  ],
};
