import { createTestNamespace, getJsonIfExists, installDist, kubectlOk } from './kube';
import { ReconcilerProcess, serviceAccountKubeconfig } from './reconciler';

export interface OperatorUnderTest {
  /** A fresh namespace the reconciler watches. */
  readonly ns: string;
  readonly reconciler: ReconcilerProcess;
  /** An object of that namespace as JSON, or undefined when it does not exist. */
  readonly get: (kind: string, name: string) => any;
  /** Starts another reconciler process like the first (e.g. after killing it). */
  startAgain(): Promise<ReconcilerProcess>;
}

/**
 * Installs dist/ with kubectl, waits for the operator's CRDs, creates a namespace, and starts the
 * reconciler running `controllers` as the operator's own ServiceAccount (`<operator>-operator`
 * in `<operator>-system`), so the synthesized RBAC is what it works with.
 */
export async function startOperatorUnderTest(options: {
  operator: string;
  controllers: string;
  crds: string[];
  args?: string[];
  env?: Record<string, string>;
}): Promise<OperatorUnderTest> {
  installDist();
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', ...options.crds.map((c) => `crd/${c}`)]);
  const ns = createTestNamespace(options.operator);
  const kubeconfig = serviceAccountKubeconfig({
    namespace: `${options.operator}-system`,
    serviceAccount: `${options.operator}-operator`,
  });
  const start = () =>
    ReconcilerProcess.start({
      kubeconfig,
      args: [`--controllers=${options.controllers}`, `--namespace=${ns}`, ...(options.args ?? [])],
      name: `${options.operator}-reconciler`,
      env: options.env,
    });
  const reconciler = await start();
  return {
    ns,
    reconciler,
    startAgain: start,
    get(kind: string, name: string) {
      return getJsonIfExists(['get', kind, name, '-n', ns]);
    },
  };
}
