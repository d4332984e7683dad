/**
 * `cdk8s-operator-kit/testing`: a real control plane for your own operator's integration tests,
 * as envtest is for controller-runtime users — etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok's simulated nodes, built from their Go modules and cached, or taken
 * from KUBEBUILDER_ASSETS, or an existing cluster from OPKIT_KUBECONFIG; or one real node where
 * containers run (`startControlPlane({ nodes: 'real' })`, Linux and root) — and `FakeKubeClient`,
 * an in-memory API server for unit tests of a controller.
 *
 * @module cdk8s-operator-kit/testing
 */
export {
  CRASH_LOOP_LABEL,
  IMAGE_PULL_FAILURE_LABEL,
  freePort,
  resolveBinaries,
  startControlPlane,
} from './control-plane';
export type { ControlPlane, ControlPlaneBinaries, SpareApiserver, StartOptions } from './control-plane';
export { realNodeUnavailable } from './node/real-node';
export type { RealNode, RealNodeAccess } from './node/real-node';
export type { IngressController } from './node/ingress';
export { FakeKubeClient } from './fake-kube-client';
export type { FakeWrite, FakeWriteVerb } from './fake-kube-client';
export { addEgressRoute, egressDecisions, isLoopbackHost } from './egress-proxy';
export type { EgressDecision } from './egress-proxy';
export { upgradeTest } from './upgrade';
export { CONFORMANCE_CHECKS, conformanceTest } from './conformance';
export type { ConformanceCheckName, ConformanceOptions, ConformanceReport } from './conformance';
export { tightPriorityLevel } from './priority-level';
export type { TightPriorityLevelOptions } from './priority-level';
export type { UpgradeReport, UpgradeTestOptions } from './upgrade';
