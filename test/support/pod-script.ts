/**
 * Programs run inside pods on the e2e tier's real node: a Node.js script in the reconciler image
 * (the one image with a language runtime the node holds), as a ServiceAccount of the test's.
 */
import { eventually, getJson, getJsonIfExists, kubectlOk } from './kube';

/**
 * Runs a Node.js script in a pod of `namespace` as ServiceAccount `serviceAccount` (the reconciler
 * image has Node.js), and resolves with what it printed once it ended. With `claim`, that claim is
 * mounted at its `mountPath`.
 */
export async function nodeScriptInPod(
  namespace: string,
  serviceAccount: string,
  script: string,
  options: { readonly claim?: { readonly name: string; readonly mountPath: string } } = {},
): Promise<string> {
  const { claim } = options;
  const name = `script-${Math.random().toString(36).slice(2, 8)}`;
  const image: string = getJson(['get', 'deployment', 'memcached-operator', '-n', 'memcached-system']).spec.template
    .spec.containers[0].image;
  kubectlOk(['apply', '-n', namespace, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        serviceAccountName: serviceAccount,
        restartPolicy: 'Never',
        securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
        volumes: claim ? [{ name: 'data', persistentVolumeClaim: { claimName: claim.name } }] : [],
        containers: [
          {
            name: 'script',
            image,
            imagePullPolicy: 'IfNotPresent',
            command: ['/usr/local/bin/node', '-e', script],
            volumeMounts: claim ? [{ name: 'data', mountPath: claim.mountPath }] : [],
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
              readOnlyRootFilesystem: true,
            },
          },
        ],
      },
    }),
  });
  await eventually(
    `pod ${name} ended`,
    () => {
      const phase = getJsonIfExists(['get', 'pod', name, '-n', namespace])?.status?.phase;
      return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
    },
    60_000,
  );
  return kubectlOk(['logs', name, '-n', namespace]);
}
