/**
 * `npm run test:long`: the integration files `npm test` leaves out for their length
 * (test/harness/long-integration-files.js), on a control plane of their own. CI runs it after
 * `npm test`; run it before a change to what they cover (docs/testing.md says which).
 */
const full = require('./jest.config.js');
const LONG_INTEGRATION = require('./test/harness/long-integration-files.js');

const integration = full.projects.find((project) => project.displayName === 'integration');

module.exports = {
  ...full,
  projects: [
    {
      ...integration,
      testMatch: LONG_INTEGRATION.map((f) => `<rootDir>/test/integration/${f}.test.ts`),
      testPathIgnorePatterns: ['/node_modules/'],
    },
  ],
};
