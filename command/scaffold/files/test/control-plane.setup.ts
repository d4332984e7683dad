/**
 * One control plane for every integration test file (each one's startControlPlane() then uses
 * it through OPKIT_KUBECONFIG), started once per run. An OPKIT_KUBECONFIG already set (a cluster
 * of your own, e.g. from npm run cluster) is used as it is.
 */
import { startControlPlane } from 'cdk8s-operator-kit/testing';

export default async function setup(): Promise<void> {
  if (process.env.OPKIT_KUBECONFIG) return;
  const controlPlane = await startControlPlane();
  process.env.OPKIT_KUBECONFIG = controlPlane.kubeconfig;
  (globalThis as { controlPlane?: { stop(): Promise<void> } }).controlPlane = controlPlane;
}
