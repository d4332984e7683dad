import { createHash, X509Certificate } from 'node:crypto';
import { BuiltinTypes, type ExternalContext, type PrepareApi, type Secret } from '../contract';
import { issueCertificate, type KeyPair } from '../contract/x509';
import { standardLabels } from '../core/labels';
import type { EtcdCluster } from './api';
import type { EtcdClientTls } from './etcd-api';
import { type LeafSpec, leafSpecs } from './certificate-specs';
import { CA_KEYS, etcdTlsSecrets } from './tls';

/**
 * The certificates of an etcd cluster, issued and renewed by the operator at run time (loaded
 * only by the runtime: it needs `node:crypto`). Its CAs and the certificates they sign live in
 * Secrets the cluster controls (they go with it); the operator reads them back only through
 * `getOwn`, so a Secret of one of these names that the cluster does not control is never read,
 * used or changed.
 */

const DAY_MS = 86_400_000;
/** A CA outlives many renewals of what it signs; renewing a CA in place is not done (see docs). */
export const CA_LIFETIME_MS = 10 * 365 * DAY_MS;
/** The members' and the client certificate. */
export const LEAF_LIFETIME_MS = 365 * DAY_MS;
/** The operator's own client certificate, made in memory. */
const OPERATOR_LIFETIME_MS = 7 * DAY_MS;
/** Records the names a certificate was issued for, so a change of them issues it again. */
const HOSTS_ANNOTATION = 'etcd.database.coreos.com/certificate-hosts';

/** What `ensureCertificates` did. */
export interface CertificatesOutcome {
  /** Secrets made now. */
  readonly issued: readonly string[];
  /** Secrets whose certificate was renewed now (near its expiry, or no longer of the CA or names). */
  readonly renewed: readonly string[];
  /** Secrets of these names the cluster does not control: left alone, and TLS cannot work. */
  readonly foreign: readonly string[];
  /** When the first of the certificates in the Secrets expires. */
  readonly expires?: string;
  /** With cert-manager: the issuer that signs them (as messages name it). */
  readonly issuer?: string;
  /** With cert-manager: the Certificates not issued (Ready) yet, each with what cert-manager says. */
  readonly pending?: readonly string[];
  /** What keeps the certificates from being what the spec asks (Degraded). */
  readonly problem?: { readonly reason: string; readonly message: string };
}

interface ClusterCas {
  readonly peer: KeyPair;
  readonly client: KeyPair;
}

/**
 * Makes what is missing of the cluster's CAs and certificates, and renews a certificate a third
 * of its life before it expires, or once it is no longer of the cluster's CA or names. One
 * `replaceOwn` per Secret: a member reads the new files as the kubelet updates its volume, with
 * no restart, so quorum is never at stake.
 */
export async function ensureCertificates(
  api: PrepareApi,
  cluster: EtcdCluster,
  now = new Date(),
): Promise<CertificatesOutcome> {
  const secrets = etcdTlsSecrets(cluster.metadata.name);
  const issued: string[] = [];
  const renewed: string[] = [];
  const cas = await ensureCas(api, cluster, now);
  if (cas === 'foreign') return { issued, renewed, foreign: [secrets.ca] };
  if (cas.made) issued.push(secrets.ca);
  const foreign: string[] = [];
  const expiries: number[] = [];
  for (const spec of leafSpecs(cluster)) {
    const ca = cas.cas[spec.issuer];
    const found = await api.getOwn(BuiltinTypes.Secret, spec.secret);
    if (found.state === 'foreign') {
      foreign.push(spec.secret);
      continue;
    }
    const keptUntil = found.state === 'own' ? validUntil(found.object, spec, ca, now) : undefined;
    if (keptUntil !== undefined) {
      expiries.push(keptUntil);
      continue;
    }
    const secret = leafSecret(cluster, spec, ca, now);
    if (found.state === 'absent') {
      if (await api.createIfAbsent(BuiltinTypes.Secret, secret)) issued.push(spec.secret);
    } else {
      await api.replaceOwn(BuiltinTypes.Secret, {
        ...found.object,
        data: secret.data,
        metadata: { ...found.object.metadata, annotations: secret.metadata.annotations },
      });
      renewed.push(spec.secret);
    }
    expiries.push(expiryOf(secret));
  }
  const first = expiries.length > 0 ? Math.min(...expiries) : undefined;
  return { issued, renewed, foreign, expires: first === undefined ? undefined : new Date(first).toISOString() };
}

/** The cluster's CAs: read, or made now (`made`); 'foreign' when a Secret of the name is not the cluster's. */
async function ensureCas(
  api: PrepareApi,
  cluster: EtcdCluster,
  now: Date,
): Promise<{ cas: ClusterCas; made: boolean } | 'foreign'> {
  const name = etcdTlsSecrets(cluster.metadata.name).ca;
  const found = await readCas(api, name);
  if (found) return found === 'foreign' ? found : { cas: found, made: false };
  const made = {
    peer: newCa(`${cluster.metadata.name}-peer-ca`, now),
    client: newCa(`${cluster.metadata.name}-client-ca`, now),
  };
  if (await api.createIfAbsent(BuiltinTypes.Secret, caSecret(cluster, made))) return { cas: made, made: true };
  // Made meanwhile (another reconcile, or one before a crash): that one is the cluster's CA.
  const again = await readCas(api, name);
  if (!again) throw new Error(`Secret ${name} was there to create, then gone: the next reconcile makes it`);
  return again === 'foreign' ? again : { cas: again, made: false };
}

/**
 * The operator's own client certificate for one cluster, made in memory from the cluster's
 * client CA (never written anywhere), or undefined while the CA is not issued or is not the
 * cluster's own. Made again a day before it expires, or when the CA changes.
 */
export async function operatorCertificate(
  cluster: EtcdCluster,
  context: Pick<ExternalContext, 'getOwn'>,
  now = new Date(),
): Promise<EtcdClientTls | undefined> {
  const secret = await context.getOwn(BuiltinTypes.Secret, etcdTlsSecrets(cluster.metadata.name).ca);
  if (secret.state !== 'own') return undefined;
  const ca = casOf(secret.object);
  if (!ca) return undefined;
  const key = `${cluster.metadata.uid ?? ''}/${fingerprint(ca.client.cert)}`;
  const known = operatorCertificates.get(cluster.metadata.uid ?? '');
  if (known?.key === key && known.notAfter - now.getTime() > DAY_MS) return known.tls;
  const made = issueCertificate({
    commonName: 'cdk8s-operator-kit',
    usages: ['client'],
    issuer: ca.client,
    validForMs: OPERATOR_LIFETIME_MS,
    now,
  });
  const tls = { ca: ca.client.cert, cert: made.cert, key: made.key };
  operatorCertificates.set(cluster.metadata.uid ?? '', { key, tls, notAfter: now.getTime() + OPERATOR_LIFETIME_MS });
  return tls;
}

/** The operator's client certificate per cluster (by uid): one small entry per cluster it reaches. */
const operatorCertificates = new Map<string, { key: string; tls: EtcdClientTls; notAfter: number }>();

async function readCas(api: Pick<PrepareApi, 'getOwn'>, name: string): Promise<ClusterCas | 'foreign' | undefined> {
  const found = await api.getOwn(BuiltinTypes.Secret, name);
  if (found.state === 'foreign') return 'foreign';
  return found.state === 'own' ? casOf(found.object) : undefined;
}

function casOf(secret: Secret): ClusterCas | undefined {
  const data = secret.data ?? {};
  const read = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : undefined);
  const [peerCert, peerKey, clientCert, clientKey] = [
    read(CA_KEYS.peerCert),
    read(CA_KEYS.peerKey),
    read(CA_KEYS.clientCert),
    read(CA_KEYS.clientKey),
  ];
  if (!peerCert || !peerKey || !clientCert || !clientKey) return undefined;
  return { peer: { cert: peerCert, key: peerKey }, client: { cert: clientCert, key: clientKey } };
}

function newCa(commonName: string, now: Date): KeyPair {
  return issueCertificate({ commonName, ca: true, validForMs: CA_LIFETIME_MS, now });
}

/**
 * When a Secret's certificate expires, if it is kept: undefined when it is due for renewal — a
 * third of its life or less left, not of this CA, or not for these names.
 */
function validUntil(secret: Secret, spec: LeafSpec, ca: KeyPair, now: Date): number | undefined {
  const data = secret.data ?? {};
  if (!data['tls.crt'] || !data['tls.key'] || !data['ca.crt']) return undefined;
  if (secret.metadata.annotations?.[HOSTS_ANNOTATION] !== spec.hosts.join(',')) return undefined;
  if (Buffer.from(data['ca.crt'], 'base64').toString('utf8') !== ca.cert) return undefined;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(Buffer.from(data['tls.crt'], 'base64'));
  } catch {
    return undefined;
  }
  if (!cert.checkIssued(new X509Certificate(ca.cert))) return undefined;
  const from = new Date(cert.validFrom).getTime();
  const to = new Date(cert.validTo).getTime();
  return to - now.getTime() < (to - from) / 3 ? undefined : to;
}

function expiryOf(secret: Secret): number {
  const crt = secret.data?.['tls.crt'];
  return crt ? new Date(new X509Certificate(Buffer.from(crt, 'base64')).validTo).getTime() : Infinity;
}

function fingerprint(pem: string): string {
  return createHash('sha256').update(pem).digest('hex').slice(0, 16);
}

function metadataOf(cluster: EtcdCluster, name: string, annotations?: Record<string, string>): Secret['metadata'] {
  return {
    name,
    namespace: cluster.metadata.namespace,
    labels: standardLabels({
      name: 'etcd',
      instance: cluster.metadata.name,
      component: 'tls',
      managedBy: 'etcd-operator',
    }),
    annotations,
    // The cluster's own: they go with it (its members' data does not: claims have no owner).
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

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function caSecret(cluster: EtcdCluster, cas: ClusterCas): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadataOf(cluster, etcdTlsSecrets(cluster.metadata.name).ca),
    type: 'Opaque',
    data: {
      [CA_KEYS.peerCert]: b64(cas.peer.cert),
      [CA_KEYS.peerKey]: b64(cas.peer.key),
      [CA_KEYS.clientCert]: b64(cas.client.cert),
      [CA_KEYS.clientKey]: b64(cas.client.key),
    },
  };
}

function leafSecret(cluster: EtcdCluster, spec: LeafSpec, ca: KeyPair, now: Date): Secret {
  const made = issueCertificate({
    commonName: spec.commonName,
    hosts: spec.hosts,
    usages: spec.usages,
    issuer: ca,
    validForMs: LEAF_LIFETIME_MS,
    now,
  });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadataOf(cluster, spec.secret, { [HOSTS_ANNOTATION]: spec.hosts.join(',') }),
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(made.cert), 'tls.key': b64(made.key), 'ca.crt': b64(ca.cert) },
  };
}
