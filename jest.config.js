/** Two tiers, one command: `npm test` runs unit tests (no cluster) and integration tests (a real API server). */
const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // @kubernetes/client-node and its auth dependencies ship ESM only; let ts-jest transform them.
  transformIgnorePatterns: ['/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
};

module.exports = {
  reporters: ['default', '<rootDir>/test/harness/failure-flag-reporter.js'],
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
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
