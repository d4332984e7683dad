import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { HttpKubeClient } from '../operator/runtime/client/client';
import { loadKubeConfig } from '../operator/runtime/client/kubeconfig';
import { type ControlPlane, startControlPlane } from '../testing/control-plane';
import { runningProcesses } from '../testing/processes';
import { type BenchContext, kubectl, RECONCILER_TREE } from './measure';

/**
 * Runs `fn` on a control plane with an audit log of writes (the harness's own, or
 * OPKIT_KUBECONFIG with OPKIT_AUDIT_LOG, as the integration tests give it), with dist/ applied and
 * the reconciler bundle built.
 */
export async function withBenchCluster(
  fn: (ctx: BenchContext, cluster: ControlPlane) => Promise<void>,
  options: { featureGates?: Readonly<Record<string, boolean>>; extraApiserverArgs?: readonly string[] } = {},
): Promise<void> {
  const cp = await startControlPlane({
    verbose: true,
    audit: true,
    featureGates: options.featureGates,
    extraApiserverArgs: options.extraApiserverArgs,
  });
  try {
    const auditLog = cp.auditLog ?? process.env.OPKIT_AUDIT_LOG;
    if (!auditLog)
      throw new Error(
        "the bench counts writes in the API server's audit log: set OPKIT_AUDIT_LOG with OPKIT_KUBECONFIG",
      );
    // The CRDs and RBAC of the tree whose reconciler is measured, and that reconciler bundled from its own code.
    kubectl(cp.kubeconfig, ['apply', '--server-side', '-f', path.join(RECONCILER_TREE, 'dist')]);
    kubectl(cp.kubeconfig, ['wait', '--for', 'condition=established', 'crd/memcacheds.cache.example.com']);
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(RECONCILER_TREE, 'command', 'cli.ts'),
        'bundle',
        '--entry',
        'reconciler.ts',
        // OPKIT_BUNDLE_MINIFY=0: readable names in a CPU profile.
        ...(process.env.OPKIT_BUNDLE_MINIFY === '0' ? ['--no-minify'] : []),
      ],
      { cwd: RECONCILER_TREE, stdio: 'ignore' },
    );
    const client = new HttpKubeClient(loadKubeConfig({ path: cp.kubeconfig }), { fieldManager: 'bench' });
    try {
      await fn(
        {
          admin: cp.kubeconfig,
          client,
          auditLog,
          timeoutMs: Number(process.env.BENCH_TIMEOUT_S ?? 1800) * 1000,
          apiServerPid: apiServerPid(cp.server),
        },
        cp,
      );
    } finally {
      client.close();
    }
  } finally {
    await cp.stop();
  }
}

/** The kube-apiserver serving `server` (https://127.0.0.1:<port>), if it runs on this machine. */
function apiServerPid(server: string): number | undefined {
  const port = new URL(server).port;
  return runningProcesses().find(
    ({ args }) => args[0]?.endsWith('kube-apiserver') && args.includes(`--secure-port=${port}`),
  )?.pid;
}
