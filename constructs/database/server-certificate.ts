/**
 * The TLS Secret of a PostgreSQL Database, made once at run time (it needs `node:crypto`, so only
 * the runtime loads this module): a CA of its own, made for this one Database and used once — its
 * key signs the server's certificate and is then dropped, so nobody holds a key that could sign
 * another — and the server's certificate for every name its Services and pods answer to.
 *
 * The operator can only create Secrets, never read or change one, so the certificate is not
 * renewed: it is valid for ten years from the Secret's creation (the `CertificateIssued` Event
 * says until when). A status field would have to be carried from the one reconcile that made it
 * to the one that writes the status — a reconcile that also changes children defers its status
 * write (the runtime's coalescing window), and the next one only learns the Secret exists.
 */
import type { KubeObject, Secret } from '../contract';
import { issueCertificate } from '../contract/x509';
import type { Database } from './api';
import { databaseNames } from './database-resources';

const YEAR_MS = 365 * 86_400_000;
/** How long the CA and the server's certificate are valid. */
export const SERVER_CERTIFICATE_LIFETIME_MS = 10 * YEAR_MS;

/** Every name a client may reach the Database's server by: its Services (those to come too) and its pods. */
export function serverHosts(name: string, namespace: string): string[] {
  const services = [name, `${name}-rw`, `${name}-ro`];
  const inCluster = (host: string) => [
    `${host}.${namespace}`,
    `${host}.${namespace}.svc`,
    `${host}.${namespace}.svc.cluster.local`,
  ];
  return [
    ...services.flatMap((service) => [service, ...inCluster(service)]),
    `*.${name}-headless.${namespace}.svc`,
    `*.${name}-headless.${namespace}.svc.cluster.local`,
  ];
}

/** A new CA, the server's certificate it signed, and the Secret holding both (owned by `retention`, as the credentials are). */
export function newTlsSecret(
  db: Database,
  retention: KubeObject,
  now = new Date(),
): { readonly secret: Secret; readonly expires: string } {
  const { name, namespace } = db.metadata;
  const names = databaseNames(name);
  const ca = issueCertificate({
    commonName: `Database ${namespace}/${name} CA`,
    ca: true,
    validForMs: SERVER_CERTIFICATE_LIFETIME_MS,
    now,
  });
  const server = issueCertificate({
    commonName: `${name}.${namespace}.svc`,
    hosts: serverHosts(name, namespace ?? 'default'),
    usages: ['server'],
    validForMs: SERVER_CERTIFICATE_LIFETIME_MS,
    issuer: ca,
    now,
  });
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: names.tls,
      namespace,
      labels: {
        'app.kubernetes.io/name': db.spec.type,
        'app.kubernetes.io/instance': name,
        'app.kubernetes.io/component': 'tls',
        'app.kubernetes.io/managed-by': 'database-operator',
      },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: names.retention, uid: retention.metadata.uid ?? '' },
      ],
    },
    type: 'kubernetes.io/tls',
    stringData: { 'tls.crt': server.cert, 'tls.key': server.key, 'ca.crt': ca.cert },
  };
  const expires = new Date(now.getTime() + SERVER_CERTIFICATE_LIFETIME_MS);
  expires.setUTCMilliseconds(0);
  return { secret, expires: expires.toISOString().replace('.000Z', 'Z') };
}
