import { createHash, X509Certificate } from 'node:crypto';
import { BuiltinTypes, type ExternalContext, type OwnLookup, type PrepareApi, type Secret } from '../contract';
import { issueCertificate, type KeyPair } from '../contract/x509';
import type { EtcdCluster } from './api';
import type { CaRotationPhase } from './ca-rotation-names';
import {
  beginRotation,
  type CaState,
  caStateOf,
  endRotation,
  markPhaseWritten,
  newCaSecret,
  operatorTrustPem,
  promoteNextCas,
  rotationDue,
  trustedPem,
} from './ca-secret';
import type { EtcdClientTls } from './etcd-api';
import { type LeafSpec, leafSpecs, tlsObjectMetadata } from './certificate-specs';
import { etcdTlsSecrets } from './tls';

/**
 * The certificates of an etcd cluster, issued and renewed by the operator at run time (loaded
 * only by the runtime: it needs `node:crypto`). Its CAs and the certificates they sign live in
 * Secrets the cluster controls (they go with it); the operator reads them back only through
 * `getOwn`, so a Secret of one of these names that the cluster does not control is never read,
 * used or changed.
 */

const DAY_MS = 86_400_000;
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
  /** A rotation of the operator's CAs: its phase after this reconcile, and what this one began or ended. */
  readonly rotation?: CaRotationOutcome;
}

/** Where a rotation of the CAs stands (see ca-secret.ts). */
export interface CaRotationOutcome {
  readonly phase?: CaRotationPhase;
  /** Begun now (and why), every member trusting both now, or over now. */
  readonly changed?: { readonly to: 'trust' | 'drop' | 'done'; readonly why?: string };
}

/**
 * Makes what is missing of the cluster's CAs and certificates, and renews a certificate a third
 * of its life before it expires, or once it is no longer of the cluster's CA or names. One
 * `replaceOwn` per Secret: a member reads the new files as the kubelet updates its volume, with
 * no restart, so quorum is never at stake. A rotation of the CAs themselves takes a step when due
 * or when the membership step says its member restarts are done (`rolled`; see ca-secret.ts).
 */
export async function ensureCertificates(
  api: PrepareApi,
  cluster: EtcdCluster,
  now = new Date(),
  rolled?: CaRotationPhase,
  caLookup?: OwnLookup<Secret>,
): Promise<CertificatesOutcome> {
  const secrets = etcdTlsSecrets(cluster.metadata.name);
  const issued: string[] = [];
  const renewed: string[] = [];
  const found = await ensureCas(api, cluster, now, caLookup);
  if (found === 'foreign') return { issued, renewed, foreign: [secrets.ca] };
  if (found.made) issued.push(secrets.ca);
  const { state: cas, changed } = await rotate(api, cluster, found.state, now, rolled);
  const { foreign, expiries } = await ensureLeaves(api, cluster, cas, now, { issued, renewed });
  // Every certificate Secret says the phase's trust now: a member pod made from here on mounts it.
  const rotation = cas.phase && !cas.since && foreign.length === 0 ? await markPhaseWritten(api, cas, now) : cas;
  const first = expiries.length > 0 ? Math.min(...expiries) : undefined;
  return {
    issued,
    renewed,
    foreign,
    expires: first === undefined ? undefined : new Date(first).toISOString(),
    ...(rotation.phase || changed ? { rotation: { phase: rotation.phase, ...(changed ? { changed } : {}) } } : {}),
  };
}

/**
 * The three certificate Secrets: each made when missing, renewed when due (see `validUntil`),
 * signed by the signing CA with `ca.crt` what is trusted now. Records what it made and renewed.
 */
async function ensureLeaves(
  api: PrepareApi,
  cluster: EtcdCluster,
  cas: CaState,
  now: Date,
  record: { issued: string[]; renewed: string[] },
): Promise<{ foreign: string[]; expiries: number[] }> {
  const foreign: string[] = [];
  const expiries: number[] = [];
  for (const spec of leafSpecs(cluster)) {
    const signer = cas.cas[spec.issuer];
    const trusted = trustedPem(cas, spec.issuer);
    const found = await api.getOwn(BuiltinTypes.Secret, spec.secret);
    if (found.state === 'foreign') {
      foreign.push(spec.secret);
      continue;
    }
    const keptUntil = found.state === 'own' ? validUntil(found.object, spec, signer, trusted, now) : undefined;
    if (keptUntil !== undefined) {
      expiries.push(keptUntil);
      continue;
    }
    const secret = leafSecret(cluster, spec, signer, trusted, now);
    if (found.state === 'absent') {
      if (await api.createIfAbsent(BuiltinTypes.Secret, secret)) record.issued.push(spec.secret);
    } else {
      await api.replaceOwn(BuiltinTypes.Secret, {
        ...found.object,
        data: secret.data,
        metadata: { ...found.object.metadata, annotations: secret.metadata.annotations },
      });
      record.renewed.push(spec.secret);
    }
    expiries.push(expiryOf(secret));
  }
  return { foreign, expiries };
}

/**
 * One step of a rotation of the CAs, if one is due or under way: begun when the user asks or a CA
 * has a third of its life left; moved on when the membership step found every member pod made
 * after the phase's certificates were written, and healthy (`rolled`).
 */
async function rotate(
  api: PrepareApi,
  cluster: EtcdCluster,
  state: CaState,
  now: Date,
  rolled: CaRotationPhase | undefined,
): Promise<{ state: CaState; changed?: CaRotationOutcome['changed'] }> {
  const why = rotationDue(cluster, state, now);
  if (why) return { state: await beginRotation(api, cluster, state, now), changed: { to: 'trust', why } };
  if (!state.since || rolled !== state.phase) return { state };
  if (state.phase === 'trust') return { state: await promoteNextCas(api, state), changed: { to: 'drop' } };
  if (state.phase === 'drop') return { state: await endRotation(api, state), changed: { to: 'done' } };
  return { state };
}

/**
 * The cluster's CA Secret: read (or taken from `known`, a read of it this reconcile made), or made
 * now (`made`); 'foreign' when a Secret of the name is not the cluster's.
 */
async function ensureCas(
  api: PrepareApi,
  cluster: EtcdCluster,
  now: Date,
  known?: OwnLookup<Secret>,
): Promise<{ state: CaState; made: boolean } | 'foreign'> {
  const name = etcdTlsSecrets(cluster.metadata.name).ca;
  const found = known ? caStateOfLookup(known) : await readCas(api, name);
  if (found) return found === 'foreign' ? found : { state: found, made: false };
  const made = await api.createIfAbsent(BuiltinTypes.Secret, newCaSecret(cluster, now));
  // Made now, or meanwhile (another reconcile, or one before a crash): read back either way.
  const again = await readCas(api, name);
  if (!again) throw new Error(`Secret ${name} was there to create, then gone: the next reconcile makes it`);
  return again === 'foreign' ? again : { state: again, made };
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
  const state = caStateOf(secret.object);
  if (!state) return undefined;
  const ca = state.cas;
  const trust = operatorTrustPem(state);
  const key = `${cluster.metadata.uid ?? ''}/${fingerprint(ca.client.cert)}/${fingerprint(trust)}`;
  const known = operatorCertificates.get(cluster.metadata.uid ?? '');
  if (known?.key === key && known.notAfter - now.getTime() > DAY_MS) return known.tls;
  const made = issueCertificate({
    commonName: 'cdk8s-operator-kit',
    usages: ['client'],
    issuer: ca.client,
    validForMs: OPERATOR_LIFETIME_MS,
    now,
  });
  const tls = { ca: trust, cert: made.cert, key: made.key };
  operatorCertificates.set(cluster.metadata.uid ?? '', { key, tls, notAfter: now.getTime() + OPERATOR_LIFETIME_MS });
  return tls;
}

/** The operator's client certificate per cluster (by uid): one small entry per cluster it reaches. */
const operatorCertificates = new Map<string, { key: string; tls: EtcdClientTls; notAfter: number }>();

async function readCas(api: Pick<PrepareApi, 'getOwn'>, name: string): Promise<CaState | 'foreign' | undefined> {
  return caStateOfLookup(await api.getOwn(BuiltinTypes.Secret, name));
}

function caStateOfLookup(found: OwnLookup<Secret>): CaState | 'foreign' | undefined {
  if (found.state === 'foreign') return 'foreign';
  return found.state === 'own' ? caStateOf(found.object) : undefined;
}

/**
 * When a Secret's certificate expires, if it is kept: undefined when it is due for renewal — a
 * third of its life or less left, not of this CA, not for these names, or its `ca.crt` not what
 * is trusted now.
 */
function validUntil(secret: Secret, spec: LeafSpec, ca: KeyPair, trusted: string, now: Date): number | undefined {
  const data = secret.data ?? {};
  if (!data['tls.crt'] || !data['tls.key'] || !data['ca.crt']) return undefined;
  if (secret.metadata.annotations?.[HOSTS_ANNOTATION] !== spec.hosts.join(',')) return undefined;
  if (Buffer.from(data['ca.crt'], 'base64').toString('utf8') !== trusted) return undefined;
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

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function leafSecret(cluster: EtcdCluster, spec: LeafSpec, ca: KeyPair, trusted: string, now: Date): Secret {
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
    metadata: tlsObjectMetadata(cluster, spec.secret, { [HOSTS_ANNOTATION]: spec.hosts.join(',') }),
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(made.cert), 'tls.key': b64(made.key), 'ca.crt': b64(trusted) },
  };
}
