import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { etcdCall, listMembers } from '../../constructs/etcd/etcd-api';
import { caIssuer, certManagerBuild, type RunningCertManager, startCertManager } from '../support/cert-manager';
import { EtcdMembers, etcdReleases } from '../support/etcd-members';
import { peerHandshake, renewedSerial, servedSerial, triesWithoutCertificate } from '../support/etcd-tls-probes';
import { eventually, getJson, kubectl, kubectlOk, nodesRun, testIf } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';

/**
 * An EtcdCluster whose certificates cert-manager issues (spec.tls.issuerRef), against cert-manager
 * itself (its certificate controllers and CA issuer, built from its Go module) and real etcd
 * members (kwok runs the pods, EtcdMembers each pod's etcd on a loopback address, with the files
 * of the Secrets cert-manager wrote, refreshed as a kubelet would).
 */

const NAME = 'kv';
const VERSION = '3.5.21';
const releases = etcdReleases();
const { missing } = certManagerBuild();
const canRun = nodesRun && !!releases[VERSION] && !missing;
const testWithCertManager = testIf(canRun, missing ?? `needs simulated nodes and etcd ${VERSION}`);

jest.setTimeout(240_000);

let op: OperatorUnderTest;
let members: EtcdMembers;
let certManager: RunningCertManager | undefined;

const b64 = (s: string) => Buffer.from(s).toString('base64');
const cluster = () => op.get('etcdcluster', NAME);
const secret = (name: string) => op.get('secret', name);
const pem = (s: any, key: string) => Buffer.from(s.data[key], 'base64').toString('utf8');
/** The cluster's spec.tls.issuerRef set to the Issuer `name`. */
const asIssuer = (name: string) =>
  kubectlOk([
    'patch',
    'etcdcluster',
    NAME,
    '-n',
    op.ns,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { tls: { issuerRef: { name } } } }),
  ]);

async function healthy(n: number): Promise<any> {
  return eventually(
    `${n} healthy members with cert-manager's certificates`,
    () => {
      const c = cluster();
      const ok =
        c?.status?.etcdMembers?.length === n &&
        c.status.etcdMembers.every((m: any) => m.started && m.healthy && !m.learner) &&
        !c.status.step &&
        c.status.observedGeneration === c.metadata.generation;
      return ok ? c : undefined;
    },
    180_000,
    500,
  ).catch((err: unknown) => {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; status ${JSON.stringify(cluster()?.status)}; certificates ${kubectl(['get', 'certificates', '-n', op.ns, '-o', 'wide']).stdout}; reconciler ${op.reconciler.logs.slice(-10).join('\n')}; cert-manager ${certManager?.logs.slice(-10).join('\n')}`,
    );
  });
}

beforeAll(async () => {
  const hostsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-hosts-')), 'hosts.json');
  fs.writeFileSync(hostsFile, '{}');
  op = await startOperatorUnderTest({
    operator: 'etcd',
    controllers: 'etcdcluster',
    crds: ['etcdclusters.etcd.database.coreos.com'],
    env: { OPKIT_ETCD_HOSTS_FILE: hostsFile },
  });
  // Subnets 10–99: conformance's clusters take 100–209 and etcd-reconciler's 220–249 in the same run.
  members = new EtcdMembers(op.ns, NAME, hostsFile, 10 + Math.floor(Math.random() * 90));
  if (!canRun) return;
  certManager = startCertManager(op.ns);
  // Two CAs, as the operator's own: the peer port then takes no certificate of the clients' CA.
  caIssuer(op.ns, 'etcd-ca');
  caIssuer(op.ns, 'etcd-peer-ca');
  await members.start();
});

afterAll(async () => {
  await members?.stop();
  await certManager?.stop();
  const exit = await op?.reconciler.stop();
  expect(exit?.code).toBe(0);
});

describe('an EtcdCluster with spec.tls.issuerRef, against cert-manager and real etcd members', () => {
  testWithCertManager(
    "cert-manager issues the members' and the client's certificates; the cluster forms over TLS with them and makes no CA of its own",
    async () => {
      kubectlOk(['apply', '-n', op.ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'etcd.database.coreos.com/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name: NAME },
          spec: {
            replicas: 3,
            version: VERSION,
            tls: { issuerRef: { name: 'etcd-ca' }, peerIssuerRef: { name: 'etcd-peer-ca' } },
          },
        }),
      });
      const c = await healthy(3);
      expect(c.status.transport).toBe('TLS');
      expect(c.status.conditions.find((x: any) => x.type === 'Available')).toMatchObject({ status: 'True' });
      expect(c.status.conditions.find((x: any) => x.type === 'Degraded')).toMatchObject({ status: 'False' });

      // The cluster's Certificates, the Secrets cert-manager wrote for them, and no CA of the operator's.
      const certificates = getJson([
        'get',
        'certificates',
        '-n',
        op.ns,
        '-l',
        `app.kubernetes.io/instance=${NAME}`,
      ]).items;
      expect(certificates.map((x: any) => x.metadata.name).sort()).toEqual([
        `${NAME}-client-tls`,
        `${NAME}-peer-tls`,
        `${NAME}-server-tls`,
      ]);
      for (const x of certificates) {
        expect(x.metadata.ownerReferences).toEqual([
          expect.objectContaining({ kind: 'EtcdCluster', name: NAME, controller: true }),
        ]);
        expect(x.status.conditions.find((y: any) => y.type === 'Ready')).toMatchObject({ status: 'True' });
      }
      expect(secret(`${NAME}-ca`)).toBeUndefined();
      expect(secret(`${NAME}-server-tls`).metadata.annotations['cert-manager.io/certificate-name']).toBe(
        `${NAME}-server-tls`,
      );
      // Each certificate of its issuer's CA.
      const clientCa = new X509Certificate(pem(secret('etcd-ca-root'), 'tls.crt'));
      const peerCa = new X509Certificate(pem(secret('etcd-peer-ca-root'), 'tls.crt'));
      const peer = new X509Certificate(pem(secret(`${NAME}-peer-tls`), 'tls.crt'));
      const server = new X509Certificate(pem(secret(`${NAME}-server-tls`), 'tls.crt'));
      expect(peer.checkIssued(peerCa)).toBe(true);
      expect(peer.checkIssued(clientCa)).toBe(false);
      expect(server.checkIssued(clientCa)).toBe(true);
      expect(peer.subject).toContain(`CN=${NAME}-member`);
      // The status's expiry is the first of the Certificates'.
      const notAfters = certificates.map((x: any) => Date.parse(x.status.notAfter));
      expect(Date.parse(c.status.certificatesExpire)).toBe(Math.min(...notAfters));

      const reasons = getJson(['get', 'events.events.k8s.io', '-n', op.ns])
        .items.filter((e: any) => e.regarding?.kind === 'EtcdCluster' && e.regarding?.name === NAME)
        .map((e: any) => `${e.reason}: ${e.note}`);
      expect(reasons).toContainEqual(
        expect.stringMatching(
          /^CertificatesIssued: asked cert-manager \(Issuer etcd-ca\) for the cluster's TLS certificates/,
        ),
      );
    },
  );

  testWithCertManager(
    "a client with the cluster's client certificate reads and writes; none without one, nor a client certificate on the peer port",
    async () => {
      const ip = members.address(0);
      const endpoint = members.endpoint(0) as { tls: { ca: string; cert: string; key: string } };
      await etcdCall(members.endpoint(0), '/v3/kv/put', { key: b64('greeting'), value: b64('hello') });
      const read = await etcdCall<{ kvs?: { value: string }[] }>(members.endpoint(2), '/v3/kv/range', {
        key: b64('greeting'),
      });
      expect(Buffer.from(read.kvs![0]!.value, 'base64').toString()).toBe('hello');
      for (const [, overTls] of triesWithoutCertificate(ip, endpoint.tls.ca)) await expect(overTls()).rejects.toThrow();
      await expect(peerHandshake(ip, endpoint.tls)).resolves.toMatch(/^refused/);
      // What the member serves is the certificate cert-manager wrote.
      const written = new X509Certificate(pem(secret(`${NAME}-server-tls`), 'tls.crt'));
      expect(await servedSerial(ip, endpoint.tls)).toBe(written.serialNumber);
      expect((await listMembers(members.endpoint(1))).map((m) => m.peerURLs[0])).not.toContain('https://10.9.9.9:2380');
    },
  );

  testWithCertManager(
    'cert-manager renews a certificate in place: the members serve the new one with no restart, the keys kept',
    async () => {
      const ip = members.address(1);
      const endpoint = members.endpoint(1) as { tls: { ca: string; cert: string; key: string } };
      const before = await servedSerial(ip, endpoint.tls);
      const stopsBefore = members.events.filter((e) => e.what === 'stopped').length;
      // What `cmctl renew` does: the Certificate's Issuing condition set, so cert-manager issues it again.
      kubectlOk([
        'patch',
        'certificate',
        `${NAME}-server-tls`,
        '-n',
        op.ns,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            conditions: [
              ...op.get('certificate', `${NAME}-server-tls`).status.conditions,
              {
                type: 'Issuing',
                status: 'True',
                reason: 'ManuallyTriggered',
                message: 'renewed by the test',
                lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
              },
            ],
          },
        }),
      ]);
      const after = await renewedSerial(ip, endpoint.tls, before, 90_000);
      expect(after).not.toBe(before);
      await etcdCall(members.endpoint(2), '/v3/kv/put', { key: b64('after-renewal'), value: b64('kept') });
      const read = await etcdCall<{ kvs?: { value: string }[] }>(members.endpoint(0), '/v3/kv/range', {
        key: b64('greeting'),
      });
      expect(Buffer.from(read.kvs![0]!.value, 'base64').toString()).toBe('hello');
      await healthy(3);
      expect(members.events.filter((e) => e.what === 'stopped')).toHaveLength(stopsBefore);
    },
  );

  testWithCertManager(
    'the issuer of a cluster whose certificates were issued is kept; a change is refused, naming it',
    async () => {
      asIssuer('etcd-peer-ca');
      const degraded = await eventually(
        'IssuerChangeRefused',
        () => {
          const d = cluster()?.status?.conditions?.find((x: any) => x.type === 'Degraded');
          return d?.reason === 'IssuerChangeRefused' ? d : undefined;
        },
        60_000,
      );
      expect(degraded.message).toContain('Issuer etcd-ca');
      expect(op.get('certificate', `${NAME}-server-tls`).spec.issuerRef.name).toBe('etcd-ca');
      asIssuer('etcd-ca');
      await eventually(
        'Degraded to clear',
        () =>
          cluster()?.status?.conditions?.find((x: any) => x.type === 'Degraded')?.status === 'False' ? true : undefined,
        60_000,
      );
    },
  );

  test('the schema refuses an issuer without TLS, and a peer issuer alone, naming the field', () => {
    const apply = (tls: object) =>
      kubectl(['apply', '--dry-run=server', '-n', op.ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'etcd.database.coreos.com/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name: 'refused' },
          spec: { tls },
        }),
      });
    const noTls = apply({ enabled: false, issuerRef: { name: 'etcd-ca' } });
    expect(noTls.code).not.toBe(0);
    expect(noTls.stderr).toContain('spec.tls.issuerRef: Invalid value');
    expect(noTls.stderr).toContain('issuerRef issues TLS certificates: it needs TLS');
    const peerAlone = apply({ peerIssuerRef: { name: 'etcd-peer-ca' } });
    expect(peerAlone.code).not.toBe(0);
    expect(peerAlone.stderr).toContain('spec.tls.peerIssuerRef: Invalid value');
    const noName = apply({ issuerRef: { kind: 'ClusterIssuer' } });
    expect(noName.stderr).toContain('spec.tls.issuerRef.name: Required value');
  });
});
