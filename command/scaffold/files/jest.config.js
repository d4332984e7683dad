/** Unit tests run in a moment; integration tests (*.integration.test.ts) share one control plane. */
module.exports = {
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/control-plane.setup.ts',
  globalTeardown: '<rootDir>/test/control-plane.teardown.ts',
  transform: { '^.+\\.ts$': 'ts-jest' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // The e2e tests run the operator on a real node: npm run test:e2e.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
  testTimeout: 120000,
};
