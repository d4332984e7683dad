/**
 * The end-to-end tier (`npm run test:e2e`): the operator as users install it, on a real node —
 * its image built by the kit's `image` command and loaded, `dist/` applied with kubectl, its pods
 * and their children's run by containerd and runc. One real node per machine, so one worker,
 * and the files in name order but for the network file, which stops kube-proxy and so runs last.
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  transformIgnorePatterns: ['/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  maxWorkers: 1,
  testSequencer: '<rootDir>/test/harness/by-name-sequencer.js',
  globalSetup: '<rootDir>/test/harness/e2e-global-setup.ts',
  globalTeardown: '<rootDir>/test/harness/jest-global-teardown.ts',
  reporters: ['default', '<rootDir>/test/harness/failure-flag-reporter.js'],
  slowTestThreshold: 120,
};
