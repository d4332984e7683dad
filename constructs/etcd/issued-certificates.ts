import type { PrepareApi } from '../contract';
import {
  type CertificateObject,
  CertManagerTypes,
  certificateReadiness,
  describeIssuer,
  fullIssuerRef,
  type IssuerRef,
} from '../core/cert-manager';
import type { EtcdCluster } from './api';
import type { CertificatesOutcome } from './certificates';
import { type LeafSpec, leafSpecs, tlsLabels, tlsObjectMetadata } from './certificate-specs';

/**
 * An etcd cluster's certificates from cert-manager (`spec.tls.issuerRef`): one Certificate per
 * Secret the members and clients mount, of the same names, common names, host names and usages
 * the operator's own CAs would issue (certificate-specs.ts), owned by the cluster. cert-manager
 * writes the Secrets and renews them in place; members read a renewed certificate at their next
 * connection, as with the operator's own.
 *
 * An issuer is kept once it has issued: the members trust the CA they started with (etcd reads
 * its trusted CA files only at start), so a Certificate that was issued never moves to another
 * issuer (`IssuerChangeRefused`); one never issued yet (a mistyped issuer) follows the spec.
 */

/** The issuers the spec names: the peer certificate's, and the serving and client certificates'. */
export interface ClusterIssuers {
  readonly peer: IssuerRef;
  readonly client: IssuerRef;
}

const KEY_USAGES: Record<LeafSpec['usages'][number], string> = { server: 'server auth', client: 'client auth' };
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The Certificate cert-manager is asked for, for one of the cluster's Secrets. */
export function desiredCertificate(cluster: EtcdCluster, spec: LeafSpec, issuer: IssuerRef): CertificateObject {
  const labels = tlsLabels(cluster);
  const dnsNames = spec.hosts.filter((h) => !IPV4.test(h) && !h.includes(':'));
  const ipAddresses = spec.hosts.filter((h) => IPV4.test(h) || h.includes(':'));
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    // The cluster's own: it goes with it. The Secret is cert-manager's (see docs: its
    // --enable-certificate-owner-ref has it go with the Certificate).
    metadata: tlsObjectMetadata(cluster, spec.secret),
    spec: {
      secretName: spec.secret,
      commonName: spec.commonName,
      ...(dnsNames.length > 0 ? { dnsNames } : {}),
      ...(ipAddresses.length > 0 ? { ipAddresses } : {}),
      usages: ['digital signature', 'key encipherment', ...spec.usages.map((u) => KEY_USAGES[u])],
      issuerRef: fullIssuerRef(issuer),
      // A new key at each renewal: a leaked key is good only until the next one.
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      secretTemplate: { labels },
    },
  };
}

/** Whether a kept Certificate asks for what is desired, as far as the operator decides it. */
function sameRequest(found: CertificateObject, desired: CertificateObject): boolean {
  const pick = (c: CertificateObject) =>
    JSON.stringify([c.spec.secretName, c.spec.commonName, c.spec.dnsNames, c.spec.ipAddresses, c.spec.usages]);
  return pick(found) === pick(desired);
}

const sameIssuer = (a: CertificateObject['spec']['issuerRef'], b: CertificateObject['spec']['issuerRef']) =>
  a.name === b.name && a.kind === b.kind && a.group === b.group;

/** A 404 to a create in the cluster's own namespace: the API server does not serve the type. */
const notServed = (err: unknown) => (err as { status?: number } | undefined)?.status === 404;

/** What became of one of the cluster's Certificates in this reconcile. */
type CertificateStep =
  | { readonly step: 'foreign' | 'notServed' }
  | { readonly step: 'requested' | 'askedAgain' }
  | {
      readonly step: 'kept';
      readonly ready: boolean;
      readonly message: string;
      readonly notAfter?: string;
      /** The issuer that issued it, when the spec asks for another (kept: see above). */
      readonly keptIssuer?: string;
    };

/**
 * One Certificate: created when missing, asked again when its names or usages (or, never issued,
 * its issuer) are not what is desired, else reported as cert-manager has it.
 */
async function keepCertificate(api: PrepareApi, name: string, desired: CertificateObject): Promise<CertificateStep> {
  const found = await api.getOwn(CertManagerTypes.Certificate, name);
  if (found.state === 'foreign') return { step: 'foreign' };
  if (found.state === 'absent') {
    try {
      await api.createIfAbsent(CertManagerTypes.Certificate, desired);
    } catch (err) {
      if (notServed(err)) return { step: 'notServed' };
      throw err;
    }
    return { step: 'requested' };
  }
  const certificate = found.object;
  const issuedBy = certificate.spec.issuerRef;
  const keepIssuer = certificate.status?.notAfter !== undefined && !sameIssuer(issuedBy, desired.spec.issuerRef);
  const wanted = { ...desired.spec, issuerRef: keepIssuer ? issuedBy : desired.spec.issuerRef };
  if (!sameRequest(certificate, desired) || !sameIssuer(issuedBy, wanted.issuerRef)) {
    await api.replaceOwn(CertManagerTypes.Certificate, { ...certificate, spec: { ...certificate.spec, ...wanted } });
    return { step: 'askedAgain' };
  }
  return {
    step: 'kept',
    ...certificateReadiness(certificate),
    notAfter: certificate.status?.notAfter,
    ...(keepIssuer ? { keptIssuer: describeIssuer(issuedBy) } : {}),
  };
}

/**
 * Makes the cluster's Certificates that are missing, keeps their names and usages as desired, and
 * reports what cert-manager has issued: `expires` from their status, `pending` for those not
 * Ready (with cert-manager's reason), and a problem for what cannot go on.
 */
export async function ensureIssuedCertificates(
  api: PrepareApi,
  cluster: EtcdCluster,
  issuers: ClusterIssuers,
): Promise<CertificatesOutcome> {
  const tally: Tally = { issued: [], pending: [], foreign: [], keptIssuer: [], expiries: [] };
  for (const spec of leafSpecs(cluster)) {
    const desired = desiredCertificate(cluster, spec, spec.issuer === 'peer' ? issuers.peer : issuers.client);
    const step = await keepCertificate(api, spec.secret, desired);
    if (step.step === 'notServed') return outcomeOf([], issuers, { problem: certManagerMissing(issuers.client) });
    count(tally, spec.secret, step);
  }
  const { issued, pending, foreign, keptIssuer, expiries } = tally;
  return outcomeOf(issued, issuers, {
    pending,
    expires: expiries.length > 0 ? new Date(Math.min(...expiries)).toISOString() : undefined,
    problem: certificatesProblem(issuers, foreign, keptIssuer),
  });
}

/** What the Certificates' steps add up to, by Certificate name. */
interface Tally {
  readonly issued: string[];
  readonly pending: string[];
  readonly foreign: string[];
  readonly keptIssuer: string[];
  readonly expiries: number[];
}

function count(tally: Tally, name: string, step: CertificateStep): void {
  if (step.step === 'foreign') tally.foreign.push(name);
  if (step.step === 'requested') {
    tally.issued.push(name);
    tally.pending.push(`${name}: just requested`);
  }
  if (step.step === 'askedAgain') tally.pending.push(`${name}: asked again for new names or issuer`);
  if (step.step !== 'kept') return;
  if (!step.ready) tally.pending.push(`${name}: ${step.message}`);
  if (step.notAfter) tally.expiries.push(Date.parse(step.notAfter));
  if (step.keptIssuer) tally.keptIssuer.push(`${name} (by ${step.keptIssuer})`);
}

function certificatesProblem(
  issuers: ClusterIssuers,
  foreign: readonly string[],
  keptIssuer: readonly string[],
): { reason: string; message: string } | undefined {
  if (foreign.length > 0)
    return {
      reason: 'CertificateNotOwned',
      message: `Certificate ${foreign.join(', ')} exists but is not this cluster's (no controller owner reference to it): not read or changed, so its Secret is not used; delete or rename it`,
    };
  if (keptIssuer.length > 0)
    return {
      reason: 'IssuerChangeRefused',
      message: `spec.tls.issuerRef (${describeIssuer(issuers.client)}) or peerIssuerRef asks for another issuer than the one that issued Certificate ${keptIssuer.join(', ')}: its members trust the CA they started with, so the issuer is kept; restore a backup into a new cluster to move to another CA`,
    };
  return undefined;
}

function certManagerMissing(issuer: IssuerRef): { reason: string; message: string } {
  return {
    reason: 'CertManagerNotInstalled',
    message: `spec.tls.issuerRef names ${describeIssuer(issuer)}, but this cluster serves no cert-manager.io/v1 Certificate: install cert-manager, or remove spec.tls.issuerRef before the cluster is made to have the operator issue its certificates`,
  };
}

function outcomeOf(
  issued: string[],
  issuers: ClusterIssuers,
  o: { pending?: string[]; expires?: string; problem?: { reason: string; message: string } },
): CertificatesOutcome {
  return {
    issued,
    renewed: [],
    foreign: [],
    issuer: describeIssuer(issuers.client),
    ...(o.pending?.length ? { pending: o.pending } : {}),
    ...(o.expires ? { expires: o.expires } : {}),
    ...(o.problem ? { problem: o.problem } : {}),
  };
}
