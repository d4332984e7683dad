import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleReconciler } from '../../command/image/bundle';
import { startControlPlane } from '../../testing/control-plane';
import { startConversionHarness } from './conversion-webhook';
import { etcdTools } from '../../testing/etcd-tools';
import { provisionBenchPeers } from '../support/bench-peers';
import { bundledSource } from '../support/bundle-sources';
import { COMMAND_SOURCE } from '../support/command';
import { provisionCertManager } from '../support/cert-manager';
import { provisionHelm } from '../support/helm';
import { installDist } from '../support/kube';
import { provisionKstatus } from '../support/kstatus';
import { provisionOlmValidate } from '../support/olm';
import { provisionPrometheus } from '../support/prometheus';
import { enterRunTempDir } from './run-temp-dir';
import { startTypeCheck } from './type-check';

/**
 * Starts one control plane for the whole integration tier. Test files reach it through
 * OPKIT_TEST_* variables (workers inherit this process's environment).
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  enterRunTempDir();
  // npm test's type-check, beside the set-up (test/harness/type-check.ts).
  startTypeCheck();
  // Helm, kstatus, Prometheus and the bench's peers first: the first time, each is built from the Go module proxy,
  // which would hold up this thread for minutes, past the control plane's start-up deadline.
  provisionTools();
  // Sharded list and watch (alpha in v1.36) on, for the sharded operators' server-side path. Its
  // start is mostly waiting on the API server; the bundles are made meanwhile.
  const starting = startControlPlane({ audit: true, featureGates: { ShardedListAndWatch: true } });
  try {
    await makeBundles();
  } catch (err) {
    await (await starting.catch(() => undefined))?.stop();
    throw err;
  }
  const cp = await starting;
  (globalThis as Record<string, unknown>).__OPKIT_CONTROL_PLANE__ = cp;
  process.env.OPKIT_TEST_KUBECONFIG = cp.kubeconfig;
  process.env.OPKIT_TEST_K8S_VERSION = cp.version;
  if (cp.etcdUrl) process.env.OPKIT_TEST_ETCD_URL = cp.etcdUrl;
  const etcd = etcdTools(cp.binDir);
  process.env.OPKIT_TEST_ETCD_RELEASES = JSON.stringify(etcd.releases);
  if (etcd.etcdctl) process.env.OPKIT_TEST_ETCDCTL = etcd.etcdctl;
  if (cp.auditLog) process.env.OPKIT_TEST_AUDIT_LOG = cp.auditLog;
  if (cp.egress) process.env.OPKIT_TEST_EGRESS_LOG = cp.egress.log;
  if (cp.binDir) process.env.OPKIT_TEST_BIN_DIR = cp.binDir;
  process.env.OPKIT_TEST_NODES = cp.nodes ? '1' : '';
  // The kit's conversion webhook on loopback, where CRDs that call a Service are pointed.
  (globalThis as Record<string, unknown>).__OPKIT_CONVERSION__ = await startConversionHarness(cp.kubeconfig);
  // dist/ applied once, for the files that start from an installed kit (installDist).
  installDist({ kubeconfig: cp.kubeconfig });
  process.env.OPKIT_TEST_DIST_INSTALLED = '1';
  process.stderr.write(
    `[control-plane] Kubernetes ${cp.version} ready for tests after ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
  );
}

/** The tools the tier's tests run, each found or built once before any test file runs. */
function provisionTools(): void {
  // Helm for the chart install tests.
  provisionHelm();
  // kstatus (the readiness rules Helm 4, Flux and kpt wait with), built from the Go module proxy too.
  provisionKstatus();
  // operator-framework/api's bundle validators, for the OLM bundle tests: from the Go module proxy too.
  provisionOlmValidate();
  // Prometheus and promtool, for the monitoring tests: from the Go module proxy too.
  provisionPrometheus();
  // The bench's Go peers, for the bench test: it runs them, it never builds them.
  provisionBenchPeers();
  // cert-manager, for an EtcdCluster's certificates from an issuer: from the Go module proxy too.
  provisionCertManager();
}

/** The bundles the tier's tests start, each made once before any test file runs. */
async function makeBundles(): Promise<void> {
  // reconciler.ts bundled once for the tier: the reconcilers the tests start run it.
  process.env.OPKIT_TEST_RECONCILER_BUNDLE = await bundleTestReconciler();
  // The package's command bundled once too: the tests start it a few dozen times.
  process.env.OPKIT_TEST_COMMAND ??= await bundledSource(COMMAND_SOURCE);
  // Where the first test file that installs the packed kit packs it, for the others to share.
  process.env.OPKIT_TEST_PACK_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-pack-'));
}

/** reconciler.ts as one file in the run's directory, unminified for readable stacks. */
async function bundleTestReconciler(): Promise<string> {
  const root = path.resolve(__dirname, '..', '..');
  const outfile = path.join(os.tmpdir(), 'opkit-reconciler-bundle', 'main.js');
  await bundleReconciler({ entry: 'reconciler.ts', outfile, cwd: root, minify: false });
  return outfile;
}
