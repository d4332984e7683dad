/** npm run test:e2e: the operator's image on a real node (test/e2e), one file at a time. */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': 'ts-jest' },
  testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  maxWorkers: 1,
  testTimeout: 300000,
};
