/**
 * Plays an ingress controller for one namespace, which the test plane has not: every Ingress there
 * without an address is given one through its status, as ingress-nginx or a cloud controller
 * gives it, until stopped. For a kind whose readiness waits on its Ingress's address (WebApp).
 */
import { BuiltinTypes } from '../../constructs/contract';
import { HttpKubeClient, loadKubeConfig } from '../../operator/runtime/client';

export function giveIngressesAddresses(kubeconfig: string, namespace: string, ip = '192.0.2.10'): { stop(): void } {
  const client = new HttpKubeClient(loadKubeConfig({ path: kubeconfig }), {
    fieldManager: 'ingress-stand-in',
    userAgent: 'ingress-stand-in',
  });
  let stopped = false;
  const round = async () => {
    // The namespace is made by the run it serves, later than this starts: nothing to list until then.
    const ingresses = await client.list(BuiltinTypes.Ingress, namespace).catch(() => ({ items: [] }));
    for (const ingress of ingresses.items) {
      if (ingress.status?.loadBalancer?.ingress?.length) continue;
      await client
        .mergePatch(
          BuiltinTypes.Ingress,
          ingress.metadata.name ?? '',
          namespace,
          { status: { loadBalancer: { ingress: [{ ip }] } } },
          { subresource: 'status' },
        )
        // Deleted meanwhile: the next round sees.
        .catch(() => undefined);
    }
  };
  const loop = async () => {
    while (!stopped) {
      await round();
      await new Promise((r) => setTimeout(r, 500));
    }
    client.close();
  };
  void loop();
  return {
    stop: () => {
      stopped = true;
    },
  };
}
