/** What every command that reads a cluster shares: kubectl's flags for it, and how it runs and ends. */
import type { ControllerDeclaration } from '../../constructs/core/controller-declaration';
import { HttpKubeClient, type ClusterConfig, loadKubeConfig } from '../../operator/runtime/client';
import { controllersFrom } from '../render';

/**
 * The flags of every command that reads a cluster, as kubectl spells them: which kubeconfig
 * (default $KUBECONFIG, then ~/.kube/config), which of its contexts, which namespace (default
 * the context's).
 */
export const CLUSTER_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'field-manager': { type: 'string', default: 'cdk8s-operator-kit' },
} as const;

/**
 * Runs a command that reads a cluster (--kubeconfig and --context, as kubectl takes them) with
 * the given controllers, as `kubectl diff` ends: its own exit code (0 no differences, 1
 * differences), or 2 with one line for an error. The client names the command in its
 * User-Agent, so the audit log tells its (dry-run) requests from the reconciler's, and applies
 * as the reconciler's field manager.
 */
export async function againstCluster(
  command: string,
  values: { controllers?: string; kubeconfig?: string; context?: string; 'field-manager': string },
  run: (
    client: HttpKubeClient,
    controllers: readonly ControllerDeclaration[],
    config: ClusterConfig,
  ) => Promise<number>,
): Promise<number> {
  try {
    const controllers = await controllersFrom(values.controllers);
    const config = loadKubeConfig({ path: values.kubeconfig, context: values.context });
    const client = new HttpKubeClient(config, {
      fieldManager: values['field-manager'],
      userAgent: `cdk8s-operator-kit-cli (${command})`,
    });
    try {
      return await run(client, controllers, config);
    } finally {
      client.close();
    }
  } catch (err) {
    process.stderr.write(`cdk8s-operator-kit: ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}
