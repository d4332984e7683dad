import { BuiltinTypes, type ExternalContext, type PrepareApi } from '../contract';
import { CertManagerTypes, describeIssuer, secretOfCertificate } from '../core/cert-manager';
import type { EtcdCluster } from './api';
import type { CaRotationPhase } from './ca-rotation-names';
import { type CertificatesOutcome, ensureCertificates, operatorCertificate } from './certificates';
import type { EtcdClientTls } from './etcd-api';
import { type ClusterIssuers, ensureIssuedCertificates } from './issued-certificates';
import { etcdTlsSecrets } from './tls';

/**
 * Who issues a TLS cluster's certificates: the operator's own CAs (certificates.ts) or
 * cert-manager with the spec's issuerRef (issued-certificates.ts). Read from what the cluster
 * already has — its own CA Secret, or its own Certificates — and only for a cluster that has
 * neither, from the spec: the members trust the CA they started with, so the source never
 * switches under them (a spec that asks is told `IssuerChangeRefused`). Loaded by the runtime
 * only (node:crypto).
 */
export async function ensureClusterCertificates(
  api: PrepareApi,
  cluster: EtcdCluster,
  now = new Date(),
  rolled?: CaRotationPhase,
): Promise<CertificatesOutcome> {
  const secrets = etcdTlsSecrets(cluster.metadata.name);
  const asked = cluster.spec.tls?.issuerRef;
  // Read once here; the operator's own CAs start from this very read.
  const ca = await api.getOwn(BuiltinTypes.Secret, secrets.ca);
  if (ca.state === 'own') {
    const outcome = await ensureCertificates(api, cluster, now, rolled, ca);
    if (!asked) return outcome;
    return {
      ...outcome,
      problem: outcome.problem ?? {
        reason: 'IssuerChangeRefused',
        message: `spec.tls.issuerRef (${describeIssuer(asked)}) asks for cert-manager, but the cluster was made with the operator's own CAs (Secret ${secrets.ca}), which its members trust: they keep issuing its certificates; restore a backup into a new cluster to move to cert-manager`,
      },
    };
  }
  if (asked)
    return ensureIssuedCertificates(api, cluster, { client: asked, peer: cluster.spec.tls?.peerIssuerRef ?? asked });
  const made = await issuersOfCertificates(api, cluster);
  if (!made) return ensureCertificates(api, cluster, now, rolled, ca);
  const outcome = await ensureIssuedCertificates(api, cluster, made);
  return {
    ...outcome,
    problem: outcome.problem ?? {
      reason: 'IssuerChangeRefused',
      message: `spec.tls.issuerRef was removed, but the cluster's certificates are cert-manager's (${describeIssuer(made.client)}), whose CA its members trust: cert-manager keeps issuing them; put issuerRef back`,
    },
  };
}

/** The issuers of the cluster's own Certificates, if it has them (none where cert-manager is not installed). */
async function issuersOfCertificates(api: PrepareApi, cluster: EtcdCluster): Promise<ClusterIssuers | undefined> {
  const secrets = etcdTlsSecrets(cluster.metadata.name);
  const issuerOf = async (name: string) => {
    const found = await api.getOwn(CertManagerTypes.Certificate, name).catch((err: unknown) => {
      // No cert-manager: no Certificate of any name.
      if ((err as { status?: number }).status === 404) return { state: 'absent' as const };
      throw err;
    });
    return found.state === 'own' ? found.object.spec.issuerRef : undefined;
  };
  const client = await issuerOf(secrets.server);
  if (!client) return undefined;
  return { client, peer: (await issuerOf(secrets.peer)) ?? client };
}

/**
 * The operator's own client certificate for a TLS cluster: made in memory from the cluster's
 * client CA, or — with cert-manager — the client certificate cert-manager issued for the cluster
 * (`<name>-client-tls`, read only as the Secret of the cluster's own Certificate). Undefined while
 * neither is there.
 */
export async function operatorClientTls(
  cluster: EtcdCluster,
  context: Pick<ExternalContext, 'getOwn' | 'getMadeFor'>,
  now = new Date(),
): Promise<EtcdClientTls | undefined> {
  const own = await operatorCertificate(cluster, context, now);
  if (own) return own;
  const name = etcdTlsSecrets(cluster.metadata.name).client;
  const found = await context.getMadeFor(BuiltinTypes.Secret, name, secretOfCertificate(name));
  if (found.state !== 'own') return undefined;
  const data = found.object.data ?? {};
  const text = (key: string) => (data[key] ? Buffer.from(data[key], 'base64').toString('utf8') : undefined);
  const [ca, cert, key] = [text('ca.crt'), text('tls.crt'), text('tls.key')];
  return ca && cert && key ? { ca, cert, key } : undefined;
}
