import type { ObjectMeta } from '../contract';
import type { CertificateUsage } from '../contract/x509';
import { standardLabels } from '../core/labels';
import type { EtcdCluster } from './api';
import { mappedMemberHosts } from './member-hosts';
import { clientServiceHostNames, etcdTlsSecrets, memberHostNames, peerCommonName } from './tls';

/**
 * The certificates an etcd cluster's Secrets hold, whoever issues them (the operator's own CAs,
 * certificates.ts, or cert-manager, issued-certificates.ts): the names, usages and signing CA of
 * each, so both issue the same.
 */

/** The most members a cluster has (the schema's maximum): the hosts file may map each. */
const MAX_MEMBERS = 9;

/** One certificate Secret: what it is issued for, by which CA (the peer CA or the client CA). */
export interface LeafSpec {
  readonly secret: string;
  readonly commonName: string;
  readonly hosts: readonly string[];
  readonly usages: readonly CertificateUsage[];
  readonly issuer: 'peer' | 'client';
}

/** The cluster's three certificate Secrets: the members' peer and serving certificates and the client's. */
export function leafSpecs(cluster: EtcdCluster): LeafSpec[] {
  const name = cluster.metadata.name;
  const namespace = cluster.metadata.namespace ?? '';
  const secrets = etcdTlsSecrets(name);
  // An operator or test that reaches members at other addresses (the hosts file) has them named too.
  const members = [...memberHostNames(name, namespace), ...mappedMemberHosts(name, namespace, MAX_MEMBERS)];
  return [
    // Presented both ways: a member serves its peer port and dials the others with it.
    {
      secret: secrets.peer,
      commonName: peerCommonName(name),
      hosts: members,
      usages: ['server', 'client'],
      issuer: 'peer',
    },
    {
      secret: secrets.server,
      commonName: `${name}-server`,
      hosts: [...members, ...clientServiceHostNames(name, namespace)],
      // Client use too: etcd's own JSON gateway dials the member's gRPC port with it.
      usages: ['server', 'client'],
      issuer: 'client',
    },
    { secret: secrets.client, commonName: `${name}-client`, hosts: [], usages: ['client'], issuer: 'client' },
  ];
}

/** The labels of the cluster's certificate objects (CA Secret, certificate Secrets, Certificates). */
export function tlsLabels(cluster: EtcdCluster): Record<string, string> {
  return standardLabels({
    name: 'etcd',
    instance: cluster.metadata.name,
    component: 'tls',
    managedBy: 'etcd-operator',
  });
}

/**
 * The metadata of one of the cluster's certificate objects: its labels, and the cluster as its
 * controller owner — they go with it (its members' data does not: claims have no owner).
 */
export function tlsObjectMetadata(
  cluster: EtcdCluster,
  name: string,
  annotations?: Record<string, string>,
): ObjectMeta {
  return {
    name,
    namespace: cluster.metadata.namespace,
    labels: tlsLabels(cluster),
    ...(annotations ? { annotations } : {}),
    ownerReferences: [
      {
        apiVersion: cluster.apiVersion,
        kind: cluster.kind,
        name: cluster.metadata.name,
        uid: cluster.metadata.uid ?? '',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  };
}
