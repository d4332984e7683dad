import type { EtcdCluster } from './api';
import { compareVersions } from './versions';

/**
 * Transport security of an etcd cluster: pure, for the render and the runtime alike.
 *
 * A cluster speaks TLS, peer and client traffic alike, and takes only clients and peers with a
 * certificate of its own certificate authorities (`--client-cert-auth`, `--peer-client-cert-auth`).
 * Two CAs per cluster, so a client's certificate can never join the peer port as a member:
 * - the peer CA signs the one peer certificate all members present to each other;
 * - the client CA signs the members' serving certificate and the client certificates: the one
 *   in `<name>-client-tls` for users and backup Jobs, and the operator's own, made in memory.
 */

/** What the status records: whether the cluster was made with TLS. It never changes in place. */
export type EtcdTransport = 'TLS' | 'Plaintext';

/** The Secrets of one cluster's certificates. */
export interface EtcdTlsSecrets {
  /** The two CAs' certificates and keys: only the operator reads it. */
  readonly ca: string;
  /** The members' peer certificate (and the peer CA). */
  readonly peer: string;
  /** The members' serving certificate for clients (and the client CA, which clients must present). */
  readonly server: string;
  /** A client certificate for users and backups (and the client CA, to check the members). */
  readonly client: string;
}

export function etcdTlsSecrets(cluster: string): EtcdTlsSecrets {
  return {
    ca: `${cluster}-ca`,
    peer: `${cluster}-peer-tls`,
    server: `${cluster}-server-tls`,
    client: `${cluster}-client-tls`,
  };
}

/** Where a member pod mounts its certificates: `<dir>/{peer,server}/{tls.crt,tls.key,ca.crt}`. */
export const MEMBER_TLS_DIR = '/etc/etcd/tls';
/** Where a backup Job's snapshot step mounts the client certificate. */
export const CLIENT_TLS_DIR = '/etc/etcd/client-tls';

/** The keys of the CA Secret. */
export const CA_KEYS = {
  peerCert: 'peer-ca.crt',
  peerKey: 'peer-ca.key',
  clientCert: 'client-ca.crt',
  clientKey: 'client-ca.key',
} as const;

/**
 * How the cluster's members talk: as its members' ConfigMap says it was made (`made`, the scheme
 * of its peer URLs; a cluster an operator without TLS made has `http` there), else as the status
 * recorded, else `spec.tls.enabled` for a cluster not made yet (TLS unless false). Never changes
 * once made: members cannot switch their peer URLs' scheme in place (see `tlsChangeRefused`).
 */
export function etcdTransport(cluster: Pick<EtcdCluster, 'spec' | 'status'>, made?: EtcdTransport): EtcdTransport {
  return made ?? cluster.status?.transport ?? (cluster.spec.tls?.enabled === false ? 'Plaintext' : 'TLS');
}

/** A `spec.tls.enabled` that asks for another transport than the cluster was made with, or undefined. */
export function tlsChangeRefused(
  cluster: Pick<EtcdCluster, 'spec' | 'status'>,
  made?: EtcdTransport,
): string | undefined {
  const asked = cluster.spec.tls?.enabled;
  const transport = etcdTransport(cluster, made);
  if (asked === undefined || asked === (transport === 'TLS')) return undefined;
  return transport === 'TLS'
    ? 'spec.tls.enabled: false cannot turn TLS off on a cluster made with it; its members keep TLS'
    : 'spec.tls.enabled: true cannot move a cluster made without TLS to it in place; restore a backup into a new cluster with TLS (see docs/operators/etcd.md); its members keep plaintext';
}

/** The transport of a members' ConfigMap's initial cluster (`name=scheme://host:port,...`), if it says. */
export function transportOfInitialCluster(initialCluster: string | undefined): EtcdTransport | undefined {
  const url = /=(https?):\/\//.exec(initialCluster ?? '')?.[1];
  return url === undefined ? undefined : url === 'https' ? 'TLS' : 'Plaintext';
}

/** `https` or `http`, for members' URLs. */
export function scheme(transport: EtcdTransport): 'https' | 'http' {
  return transport === 'TLS' ? 'https' : 'http';
}

/** Since etcd 3.6 the flag has lost its `experimental-` prefix (the old name goes in 3.7). */
const SKIP_SAN_STABLE_SINCE = '3.6.0';

/**
 * The member flags of TLS: both listeners serve certificates and take only those of the cluster's
 * CAs; the peer port only the members' certificate, by its common name too. etcd would also
 * match a peer's certificate names against the address it connects from, resolving each DNS
 * name: a wildcard never resolves, and every member holds the same certificate, so that check
 * is off and the peer CA (held by the members alone) is what admits a peer.
 */
export function memberTlsArgs(cluster: string, version: string): string[] {
  const file = (kind: 'peer' | 'server', name: string) => `${MEMBER_TLS_DIR}/${kind}/${name}`;
  const skipSan =
    compareVersions(version, SKIP_SAN_STABLE_SINCE) >= 0
      ? '--peer-skip-client-san-verification'
      : '--experimental-peer-skip-client-san-verification';
  return [
    `--cert-file=${file('server', 'tls.crt')}`,
    `--key-file=${file('server', 'tls.key')}`,
    `--trusted-ca-file=${file('server', 'ca.crt')}`,
    '--client-cert-auth',
    `--peer-cert-file=${file('peer', 'tls.crt')}`,
    `--peer-key-file=${file('peer', 'tls.key')}`,
    `--peer-trusted-ca-file=${file('peer', 'ca.crt')}`,
    '--peer-client-cert-auth',
    `--peer-cert-allowed-cn=${peerCommonName(cluster)}`,
    skipSan,
  ];
}

/** The common name of a cluster's peer certificate. */
export function peerCommonName(cluster: string): string {
  return `${cluster}-member`;
}

/** etcdctl's flags for the client certificate mounted at `CLIENT_TLS_DIR`. */
export function etcdctlTlsArgs(): string[] {
  return [`--cacert=${CLIENT_TLS_DIR}/ca.crt`, `--cert=${CLIENT_TLS_DIR}/tls.crt`, `--key=${CLIENT_TLS_DIR}/tls.key`];
}

/**
 * The names every member's certificates are valid for: any member through the headless Service
 * (one wildcard, so scaling needs no new certificate), and for the serving certificate the client
 * Service and loopback too.
 */
export function memberHostNames(cluster: string, namespace: string): string[] {
  return [`*.${cluster}.${namespace}.svc`, `*.${cluster}.${namespace}.svc.cluster.local`];
}

export function clientServiceHostNames(cluster: string, namespace: string): string[] {
  const service = `${cluster}-client`;
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
    'localhost',
    '127.0.0.1',
  ];
}

/**
 * A member's certificates, from the Secrets the operator issues (see certificates.ts): readable by
 * the member's group alone (the pod's fsGroup). A member renewed in place reads the new files as
 * the kubelet updates them: etcd loads its certificate at each new connection.
 */
export function memberTlsVolumes(cluster: string) {
  const secrets = etcdTlsSecrets(cluster);
  return [
    { name: 'peer-tls', secret: { secretName: secrets.peer, defaultMode: 0o440 } },
    { name: 'server-tls', secret: { secretName: secrets.server, defaultMode: 0o440 } },
  ];
}
