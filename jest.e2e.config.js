/**
 * The end-to-end tier (`npm run test:e2e`): the operator as users install it, on a real node —
 * its image built by the kit's `image` command and loaded, `dist/` applied with kubectl, its pods
 * and their children's run by containerd and runc. One real node per machine, which the files
 * share two at a time: most of a file's time is spent waiting on the node (a probe, a failover, a
 * member's restart), so the longest file (seed-samples) runs beside the others rather than before
 * them. Each file works in namespaces of its own; what they share is arbitrated in
 * test/e2e/run-coordination.ts: the network file, which stops kube-proxy, runs last and alone.
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  transformIgnorePatterns: ['/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/harness/e2e-sequencer.js',
  globalSetup: '<rootDir>/test/harness/e2e-global-setup.ts',
  globalTeardown: '<rootDir>/test/harness/jest-global-teardown.ts',
  reporters: [
    'default',
    '<rootDir>/test/harness/failure-flag-reporter.js',
    '<rootDir>/test/harness/finished-files-reporter.js',
  ],
  slowTestThreshold: 120,
};
