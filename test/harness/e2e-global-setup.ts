import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ControlPlane, startControlPlane } from '../../testing/control-plane';
import { networkPolicyEnforcerUnavailable } from '../../testing/node/network-policies';
import { realNodeUnavailable } from '../../testing/node/real-node';
import { loadSampleImages } from '../../testing/node/sample-images';
import { buildImage, deploymentIn, missingContainerTools } from '../support/container';
import { goTool } from '../support/go-tool';
import { kubectlOk } from '../support/kube';
import { provisionHelm } from '../support/helm';
import { provisionOlm } from '../support/olm-cluster';
import { killARealNodeRun } from './killed-run';
import { keepKubectlCacheIn } from './run-temp-dir';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * One real-node control plane for the e2e tier, with the images its pods run loaded: the kit's
 * reconciler image as `dist/` names it (built by the `image` command), and the programs the seed
 * samples run: memcached, nginx and PostgreSQL from Debian's packages, etcd from the plane's builds.
 * Where a real node cannot run, says why in OPKIT_E2E_SKIP and starts nothing.
 */
export default async function globalSetup(): Promise<void> {
  const why = realNodeUnavailable() ?? missingContainerTools();
  if (why) {
    process.env.OPKIT_E2E_SKIP = why;
    process.stderr.write(`[e2e] skipped: ${why}\n`);
    return;
  }
  const started = Date.now();
  // kubectl's caches in a directory of the tier's own, removed by the teardown (run-temp-dir.ts).
  process.env.OPKIT_E2E_KUBECTL_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-e2e-kubectl-'));
  keepKubectlCacheIn(process.env.OPKIT_E2E_KUBECTL_DIR);
  // Where the tier's files, two at a time, tell each other what has finished and what is held
  // (test/e2e/run-coordination.ts); removed by the teardown.
  process.env.OPKIT_E2E_RUN_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-e2e-run-'));
  // A run killed outright first: the tier's own start must take back all it left.
  process.env.OPKIT_E2E_KILLED_RUN = JSON.stringify(await killARealNodeRun());
  // Helm, for a release's `upgrade --wait` on the node's workloads (cached: the tiers before built it).
  provisionHelm();
  // OLM's controllers, opm and grpc_health_probe, for a real install of a kit bundle (cached likewise).
  provisionOlm();
  // Traefik, the node's ingress controller: without it the tier runs and the Ingress tests say why.
  const traefik = goTool({ script: 'testing/build-traefik.sh', env: 'OPKIT_E2E_TRAEFIK', what: 'traefik' }).binary();
  // kube-router's policy controller, the node's NetworkPolicy enforcer: without it the tier runs
  // and the tests that need policies enforced say why.
  const enforcerMissing = networkPolicyEnforcerUnavailable();
  const kubeRouter = enforcerMissing
    ? { bin: undefined, missing: enforcerMissing }
    : goTool({ script: 'testing/build-kube-router.sh', env: 'OPKIT_E2E_KUBE_ROUTER', what: 'kube-router' }).binary();
  const cp = await startControlPlane({
    nodes: 'real',
    ingressController: traefik.bin,
    networkPolicyEnforcer: kubeRouter.bin,
  });
  (globalThis as Record<string, unknown>).__OPKIT_CONTROL_PLANE__ = cp;
  // Jest runs no teardown after a set-up that failed: a step failing here stops the plane itself.
  let node: NonNullable<typeof cp.realNode>;
  try {
    node = loadImages(cp);
    // The operators `kubectl apply -f dist/` installs, once for the tier: its files run two at a
    // time, and one applying them again while another has scaled an operator would fight it. Each
    // file waits for the rollouts it needs.
    kubectlOk(['apply', '--server-side', '-f', path.join(ROOT, 'dist')], { kubeconfig: cp.kubeconfig });
  } catch (err) {
    await cp.stop();
    throw err;
  }
  if (!kubeRouter.bin)
    process.env.OPKIT_E2E_NETWORK_POLICIES_MISSING = kubeRouter.missing ?? 'no NetworkPolicy enforcer started';
  if (node.ingress) process.env.OPKIT_E2E_INGRESS_URL = node.ingress.url;
  else process.env.OPKIT_E2E_INGRESS_MISSING = traefik.missing ?? 'no ingress controller started';
  process.env.OPKIT_TEST_KUBECONFIG = cp.kubeconfig;
  process.env.OPKIT_TEST_K8S_VERSION = cp.version;
  process.env.OPKIT_TEST_NODES = '1';
  if (cp.egress) process.env.OPKIT_TEST_EGRESS_LOG = cp.egress.log;
  if (cp.workDir) process.env.OPKIT_E2E_WORK_DIR = cp.workDir;
  // For a project's own e2e test run inside this tier: it uses this node (one per machine).
  process.env.OPKIT_TEST_REAL_NODE = JSON.stringify(node.access);
  process.stderr.write(
    `[e2e] a real node and its images ready after ${((Date.now() - started) / 1000).toFixed(1)}s (${cp.server})\n`,
  );
}

/**
 * Loads what the node's pods run: the kit's reconciler image as `dist/` names it (built by the
 * `image` command), and the seed samples' images. Returns the node.
 */
function loadImages(cp: ControlPlane): NonNullable<ControlPlane['realNode']> {
  const node = cp.realNode;
  if (!node) throw new Error('startControlPlane({ nodes: "real" }) returned no real node');
  const tag: string = deploymentIn(path.join(ROOT, 'dist', '0001-memcached.k8s.yaml')).spec.template.spec.containers[0]
    .image;
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-e2e-image-'));
  try {
    node.loadImage(buildImage({ entry: 'reconciler.ts', tag, outDir: out }).archive);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  const samples = loadSampleImages(node, { binDir: cp.binDir, workDir: cp.workDir ?? os.tmpdir() });
  process.env.OPKIT_E2E_ETCD_RELEASES = JSON.stringify(samples.etcdReleases);
  return node;
}
