/**
 * Integration files of the long tier (`npm run test:long`, jest.long.config.js), left out of
 * `npm test` to keep it a before-a-commit check (warm under 6 minutes on 2 cores): each spends
 * minutes of CPU on a whole scenario, or starts a control plane of its own: real etcd members
 * through every membership step, a packed kit installed into new projects and their own tests
 * run, the bench, the reconciler killed and cut off again and again, its image built, the kit
 * compiled for Python and Java, an upgrade, the release download, `plan` against the audit log
 * for every kit kind, the conformance runs of the EtcdCluster and the shipped examples. CI runs
 * them after `npm test`, on a control plane of their own.
 */
module.exports = [
  'etcd-membership', // real etcd members: scaling, lost members, quorum loss, upgrades, TLS rotation
  'scaffold', // init and create kind, then the new project's own npm test (conformance included)
  'consumer-package', // the packed kit installed in new projects: CommonJS, ESM, tsx, each subpath
  'bench', // npm run bench at N = 3, its results file, its profile
  'reconciler-resilience', // restarts, leader takeover, watches cut, etcd compaction, 429s
  'reconciler-image', // the image built without a daemon, run with podman against the plane
  'languages', // the ready-made operators compiled with jsii from the packed kit: Python and Java apps
  'upgrade', // a first release's CRDs and controllers upgraded to these, on a control plane of its own
  'release-download', // a control plane of its own, from release binaries a loopback mirror serves
  'preview-matches-writes', // plan -o json against the audit log, case by case, for every kit kind
  'conformance-etcd', // the EtcdCluster through every conformance check, real etcd members for each cluster it makes
  'conformance-examples', // the shipped examples' kinds (StaticSite, BlogSite, KeyValueStore) through every check
];
