import { BuiltinTypes, type ExternalContext, type KubeObject, type ResourceType } from '../../../constructs/contract';
import { CERTIFICATE_NAME_ANNOTATION, CertManagerTypes } from '../../../constructs/core/cert-manager';
import { ensureClusterCertificates, operatorClientTls } from '../../../constructs/etcd/cluster-certificates';
import { desiredEtcdStatus, etcdClusterController, etcdEvents } from '../../../constructs/etcd/controller';
import { ApiError } from '../../../operator/runtime/client';
import { getMadeFor, getOwn, prepareApi } from '../../../operator/runtime/reconcile/controller-parts';
import { FakeKubeClient } from '../../../testing/fake-kube-client';
import { etcdResource } from '../../support/data-resources';

/**
 * spec.tls.issuerRef: the cluster's certificates from cert-manager. What cert-manager itself does
 * with the Certificates (issuing, renewing) is tested against cert-manager in
 * test/integration/etcd-cert-manager.test.ts; here, what the operator asks and reads.
 */

const KEEPS = [BuiltinTypes.Secret, CertManagerTypes.Certificate];
const keptBy = (cluster: any) => ({ uid: cluster.metadata.uid, namespace: cluster.metadata.namespace, keeps: KEEPS });
const prepareOn = (client: FakeKubeClient, cluster: any) =>
  prepareApi(client, new AbortController().signal, keptBy(cluster));
const withIssuer = (tls: object = {}) => etcdResource({ tls: { issuerRef: { name: 'etcd-ca' }, ...tls } });
const certificate = (client: FakeKubeClient, name: string) =>
  client.peek(CertManagerTypes.Certificate, name, 'db') as any;

/** What cert-manager does once it has issued a Certificate: its Secret, and Ready with notAfter. */
function issue(client: FakeKubeClient, name: string, notAfter: string): void {
  const cert = certificate(client, name);
  client.seed(CertManagerTypes.Certificate, {
    ...cert,
    status: { notAfter, conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'up to date' }] },
  });
  client.seed(BuiltinTypes.Secret, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'db', annotations: { [CERTIFICATE_NAME_ANNOTATION]: name } },
    type: 'kubernetes.io/tls',
    data: {
      'ca.crt': Buffer.from('CA').toString('base64'),
      'tls.crt': Buffer.from(`CERT ${name}`).toString('base64'),
      'tls.key': Buffer.from(`KEY ${name}`).toString('base64'),
    },
  });
}

test("the kind keeps cert-manager's Certificates (get, create, update by name), never lists or deletes them", () => {
  expect(etcdClusterController.keeps).toContainEqual(CertManagerTypes.Certificate);
  expect(etcdClusterController.deletes ?? []).not.toContainEqual(expect.objectContaining({ kind: 'Certificate' }));
});

describe('with spec.tls.issuerRef', () => {
  test('the first reconcile asks cert-manager for the three certificates the operator would issue, owned by the cluster, and makes no CA', async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer();
    const outcome = await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(outcome).toMatchObject({
      issued: ['kv-peer-tls', 'kv-server-tls', 'kv-client-tls'],
      issuer: 'Issuer etcd-ca',
      pending: expect.arrayContaining(['kv-peer-tls: just requested']),
    });
    expect(outcome.problem).toBeUndefined();
    expect(client.peekAll(BuiltinTypes.Secret, 'db')).toEqual([]);

    const peer = certificate(client, 'kv-peer-tls');
    expect(peer.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'EtcdCluster', name: 'kv', uid: 'u-kv', controller: true }),
    ]);
    expect(peer.spec).toMatchObject({
      secretName: 'kv-peer-tls',
      // The peer port admits this common name only (--peer-cert-allowed-cn).
      commonName: 'kv-member',
      dnsNames: ['*.kv.db.svc', '*.kv.db.svc.cluster.local'],
      usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'],
      issuerRef: { name: 'etcd-ca', kind: 'Issuer', group: 'cert-manager.io' },
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    });
    const server = certificate(client, 'kv-server-tls');
    expect(server.spec.dnsNames).toEqual(expect.arrayContaining(['kv-client', 'kv-client.db.svc', 'localhost']));
    expect(server.spec.ipAddresses).toEqual(['127.0.0.1']);
    expect(certificate(client, 'kv-client-tls').spec).toMatchObject({
      commonName: 'kv-client',
      usages: ['digital signature', 'key encipherment', 'client auth'],
    });
    expect(certificate(client, 'kv-client-tls').spec.dnsNames).toBeUndefined();
  });

  test('a peerIssuerRef signs the peer certificate only', async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer({ peerIssuerRef: { name: 'peers', kind: 'ClusterIssuer' } });
    await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(certificate(client, 'kv-peer-tls').spec.issuerRef).toEqual({
      name: 'peers',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    expect(certificate(client, 'kv-server-tls').spec.issuerRef.name).toBe('etcd-ca');
    expect(certificate(client, 'kv-client-tls').spec.issuerRef.name).toBe('etcd-ca');
  });

  test("once issued: nothing written, the first expiry reported, the operator's calls use the client Secret cert-manager wrote", async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer();
    await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    const context: Pick<ExternalContext, 'getOwn' | 'getMadeFor'> = {
      getOwn: (type, name) => getOwn(client, type, name, keptBy(cluster)),
      getMadeFor: (type, name, madeFor) => getMadeFor(client, type, name, madeFor, keptBy(cluster)),
    };
    await expect(operatorClientTls(cluster, context)).resolves.toBeUndefined();
    issue(client, 'kv-peer-tls', '2027-03-01T00:00:00Z');
    issue(client, 'kv-server-tls', '2027-02-01T00:00:00Z');
    issue(client, 'kv-client-tls', '2027-03-01T00:00:00Z');
    const writes = client.writes.length;
    const outcome = await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(outcome).toMatchObject({ issued: [], expires: '2027-02-01T00:00:00.000Z' });
    expect(outcome.pending).toBeUndefined();
    expect(client.writes.length).toBe(writes);
    await expect(operatorClientTls(cluster, context)).resolves.toEqual({
      ca: 'CA',
      cert: 'CERT kv-client-tls',
      key: 'KEY kv-client-tls',
    });
  });

  test('a Secret of the name that does not say it is the Certificate’s, or is owned by something else, is never read', async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer();
    await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    issue(client, 'kv-client-tls', '2027-03-01T00:00:00Z');
    const secret = client.peek(BuiltinTypes.Secret, 'kv-client-tls', 'db')!;
    const read = () => getMadeFor(client, BuiltinTypes.Secret, 'kv-client-tls', madeFor, keptBy(cluster));
    const madeFor = {
      type: CertManagerTypes.Certificate,
      name: 'kv-client-tls',
      annotation: CERTIFICATE_NAME_ANNOTATION,
    };
    await expect(read()).resolves.toMatchObject({ state: 'own' });
    client.seed(BuiltinTypes.Secret, { ...secret, metadata: { ...secret.metadata, annotations: {} } });
    await expect(read()).resolves.toEqual({ state: 'foreign' });
    client.seed(BuiltinTypes.Secret, {
      ...secret,
      metadata: {
        ...secret.metadata,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'other', controller: true }],
      },
    });
    await expect(read()).resolves.toEqual({ state: 'foreign' });
    // Owned by the very Certificate (cert-manager's --enable-certificate-owner-ref): its.
    const cert = certificate(client, 'kv-client-tls');
    client.seed(BuiltinTypes.Secret, {
      ...secret,
      metadata: {
        ...secret.metadata,
        ownerReferences: [
          {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Certificate',
            name: 'kv-client-tls',
            uid: cert.metadata.uid,
            controller: true,
          },
        ],
      },
    });
    await expect(read()).resolves.toMatchObject({ state: 'own' });
    // A Certificate of the name that is not the cluster's: its Secret is not either.
    const other = new FakeKubeClient();
    other.seed(CertManagerTypes.Certificate, { ...cert, metadata: { name: 'kv-client-tls', namespace: 'db' } });
    other.seed(BuiltinTypes.Secret, secret);
    await expect(getMadeFor(other, BuiltinTypes.Secret, 'kv-client-tls', madeFor, keptBy(cluster))).resolves.toEqual({
      state: 'foreign',
    });
  });

  test('a Certificate not Ready is reported with what cert-manager says', async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer();
    await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    const cert = certificate(client, 'kv-server-tls');
    client.seed(CertManagerTypes.Certificate, {
      ...cert,
      status: {
        conditions: [{ type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuer etcd-ca not found' }],
      },
    });
    const outcome = await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(outcome.pending).toContain('kv-server-tls: DoesNotExist: Issuer etcd-ca not found');
  });

  test('an issuer never used is followed when the spec changes; one that issued is kept, and the change refused', async () => {
    const client = new FakeKubeClient();
    const typo = withIssuer();
    await ensureClusterCertificates(prepareOn(client, typo), typo);
    issue(client, 'kv-peer-tls', '2027-03-01T00:00:00Z');
    const fixed = etcdResource({ tls: { issuerRef: { name: 'etcd-ca-2' } } });
    const outcome = await ensureClusterCertificates(prepareOn(client, fixed), fixed);
    // Never issued: asked again of the new issuer.
    expect(certificate(client, 'kv-server-tls').spec.issuerRef.name).toBe('etcd-ca-2');
    // Issued: its members trust that CA.
    expect(certificate(client, 'kv-peer-tls').spec.issuerRef.name).toBe('etcd-ca');
    expect(outcome.problem).toMatchObject({
      reason: 'IssuerChangeRefused',
      message: expect.stringContaining('Certificate kv-peer-tls (by Issuer etcd-ca)'),
    });
  });

  test('names a later reconcile needs (a member address) are asked for again, by the same issuer', async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer();
    await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    issue(client, 'kv-server-tls', '2027-03-01T00:00:00Z');
    const cert = certificate(client, 'kv-server-tls');
    client.seed(CertManagerTypes.Certificate, { ...cert, spec: { ...cert.spec, dnsNames: ['kv-client'] } });
    const outcome = await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(certificate(client, 'kv-server-tls').spec.dnsNames).toEqual(
      expect.arrayContaining(['*.kv.db.svc', 'kv-client']),
    );
    expect(outcome.pending).toContain('kv-server-tls: asked again for new names or issuer');
    expect(outcome.problem).toBeUndefined();
  });

  test('a Certificate of these names the cluster does not control is left alone and reported', async () => {
    const client = new FakeKubeClient();
    const cluster = withIssuer();
    const theirs = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'kv-server-tls', namespace: 'db' },
      spec: { secretName: 'elsewhere', issuerRef: { name: 'x', kind: 'Issuer', group: 'cert-manager.io' } },
    };
    client.seed(CertManagerTypes.Certificate, theirs);
    const outcome = await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(outcome.problem).toMatchObject({
      reason: 'CertificateNotOwned',
      message: expect.stringContaining('Certificate kv-server-tls exists but is not this cluster'),
    });
    expect(certificate(client, 'kv-server-tls').spec.secretName).toBe('elsewhere');
  });

  test('without cert-manager installed: Degraded CertManagerNotInstalled, naming the field, nothing else written', async () => {
    const client = new (class extends FakeKubeClient {
      override create<T extends KubeObject>(type: ResourceType<T>, obj: KubeObject, namespace?: string): Promise<T> {
        if (type.group === 'cert-manager.io')
          return Promise.reject(new ApiError(404, 'NotFound', 'the server could not find the requested resource'));
        return super.create(type, obj, namespace);
      }
    })();
    const cluster = withIssuer();
    const outcome = await ensureClusterCertificates(prepareOn(client, cluster), cluster);
    expect(outcome.problem).toMatchObject({
      reason: 'CertManagerNotInstalled',
      message: expect.stringMatching(
        /^spec\.tls\.issuerRef names Issuer etcd-ca, but this cluster serves no cert-manager\.io\/v1 Certificate/,
      ),
    });
    expect(client.writes).toEqual([]);
    const status = desiredEtcdStatus(cluster, { members: [], certificates: outcome });
    expect(status.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'CertManagerNotInstalled',
    });
  });

  test('a cluster made with the operator’s own CAs keeps them when issuerRef is added, and says so', async () => {
    const client = new FakeKubeClient();
    const made = etcdResource({});
    await ensureClusterCertificates(prepareOn(client, made), made);
    const asked = withIssuer();
    const outcome = await ensureClusterCertificates(prepareOn(client, asked), asked);
    expect(outcome.problem).toMatchObject({
      reason: 'IssuerChangeRefused',
      message: expect.stringContaining('Secret kv-ca'),
    });
    expect(client.peekAll(CertManagerTypes.Certificate, 'db')).toEqual([]);
  });

  test('a cluster made with cert-manager keeps it when issuerRef is removed, and says so', async () => {
    const client = new FakeKubeClient();
    const made = withIssuer();
    await ensureClusterCertificates(prepareOn(client, made), made);
    const removed = etcdResource({});
    const outcome = await ensureClusterCertificates(prepareOn(client, removed), removed);
    expect(outcome.problem).toMatchObject({
      reason: 'IssuerChangeRefused',
      message: expect.stringContaining('put issuerRef back'),
    });
    expect(client.peek(BuiltinTypes.Secret, 'kv-ca', 'db')).toBeUndefined();
  });

  test('the Event says cert-manager was asked, by which issuer', () => {
    const cluster = withIssuer();
    const observed = {
      children: { of: () => undefined },
      before: { of: () => undefined },
      prepared: { certificates: { issued: ['kv-peer-tls'], renewed: [], foreign: [], issuer: 'Issuer etcd-ca' } },
      read: () => [],
      health: {},
    } as any;
    expect(etcdEvents(cluster, observed, cluster.status).map((e) => `${e.reason}: ${e.message}`)).toContain(
      "CertificatesIssued: asked cert-manager (Issuer etcd-ca) for the cluster's TLS certificates: Certificate kv-peer-tls",
    );
  });
});
