import type { ExternalContext } from '../contract';
import type { EtcdCluster } from './api';
import { operatorClientTls } from './cluster-certificates';
import type { EtcdClientTls, EtcdEndpoint } from './etcd-api';
import { clientURL } from './member-hosts';
import { etcdTlsSecrets, type EtcdTransport } from './tls';

/**
 * Where the operator asks a cluster's members, `count` ordinals of them: their client URLs, with
 * the operator's client certificate under TLS — or what it waits for while the cluster's CA is
 * not issued (or not the cluster's own: the status says why).
 */
export async function memberEndpoints(
  cluster: EtcdCluster,
  transport: EtcdTransport,
  context: Pick<ExternalContext, 'getOwn' | 'getMadeFor'>,
  count: number,
): Promise<
  | { readonly probe: EtcdEndpoint[]; readonly tls?: EtcdClientTls }
  | { readonly waiting: { readonly reason: string; readonly message: string } }
> {
  const name = cluster.metadata.name;
  // A namespaced kind: the API server always sets it.
  const namespace = cluster.metadata.namespace ?? '';
  const tls = transport === 'TLS' ? await operatorClientTls(cluster, context) : undefined;
  if (transport === 'TLS' && !tls) {
    return {
      waiting: {
        reason: 'WaitingForCertificates',
        message: cluster.spec.tls?.issuerRef
          ? `cert-manager has not issued the cluster's client certificate (Secret ${etcdTlsSecrets(name).client}) yet`
          : `the cluster's certificate authority (Secret ${etcdTlsSecrets(name).ca}) is not issued yet`,
      },
    };
  }
  const probe = Array.from({ length: count }, (_, i) => ({ url: clientURL(name, namespace, i, transport), tls }));
  return { probe, tls };
}
