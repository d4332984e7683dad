/**
 * `npm run test:quick`: the unit tier and one integration file per capability, on the same shared
 * control plane as `npm test` — the answer in about a minute, while the whole suite takes five.
 * Run it while working; run `npm test` before a commit (docs/testing.md says which when).
 */
const full = require('./jest.config.js');

/** One file per capability: install, reconcile, readiness as kstatus judges it, webhooks, the command. */
const QUICK_INTEGRATION = [
  'memcached-install', // dist/ applies with kubectl; the CRD refuses bad specs, naming the field
  'memcached-reconciler', // a reconcile: children, status, events, owner references, writes counted
  'kstatus-kinds', // every kit kind Current as Helm 4, Flux and kpt wait for it
  'conversion-webhook', // a user's kind served in two versions through the reconciler's /convert
  'operator-security', // least privilege on Secrets, /metrics only to who may read it
  'diff-command', // the package's command against a live cluster
];

module.exports = {
  ...full,
  projects: full.projects.map((project) =>
    project.displayName === 'integration'
      ? { ...project, testMatch: QUICK_INTEGRATION.map((f) => `<rootDir>/test/integration/${f}.test.ts`) }
      : project,
  ),
};
