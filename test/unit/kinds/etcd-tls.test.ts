import { X509Certificate } from 'node:crypto';
import { BuiltinTypes, ChildMap, type ExternalContext } from '../../../constructs/contract';
import { desiredEtcdStatus, etcdClusterController, etcdEvents } from '../../../constructs/etcd/controller';
import { ensureCertificates, LEAF_LIFETIME_MS, operatorCertificate } from '../../../constructs/etcd/certificates';
import { etcdTransport, tlsChangeRefused, transportOfInitialCluster } from '../../../constructs/etcd/tls';
import { renderChildren, renderChildrenWithWaits } from '../../../operator/runtime/children/render';
import { getOwn, prepareApi } from '../../../operator/runtime/reconcile/controller-parts';
import { FakeKubeClient } from '../../../testing/fake-kube-client';
import { etcdResource } from '../../support/data-resources';
import { validateBuiltin } from '../../support/builtin-validator';

const statefulSetOf = (cluster: any) =>
  renderChildren(etcdClusterController, cluster).find((c) => c.kind === 'StatefulSet') as any;
const backups = { backup: { schedule: '@daily', retention: 7, storage: '5Gi' } };

describe('which transport a cluster has', () => {
  test.each([
    ['a new cluster, nothing asked', {}, undefined, undefined, 'TLS'],
    ['a new cluster asking for plaintext', { tls: { enabled: false } }, undefined, undefined, 'Plaintext'],
    ['a new cluster asking for TLS', { tls: { enabled: true } }, undefined, undefined, 'TLS'],
    // An operator before TLS made it: its members' ConfigMap has http peer URLs.
    ['a cluster an operator without TLS made', {}, { phase: 'Running' }, 'Plaintext', 'Plaintext'],
    ['made with TLS, whatever the spec says now', { tls: { enabled: false } }, { transport: 'TLS' }, 'TLS', 'TLS'],
    [
      'made plaintext, TLS asked later',
      { tls: { enabled: true } },
      { transport: 'Plaintext' },
      'Plaintext',
      'Plaintext',
    ],
    ['recorded, its ConfigMap not there now', { tls: { enabled: false } }, { transport: 'TLS' }, undefined, 'TLS'],
  ] as const)('%s', (_, spec, status, made, transport) => {
    expect(etcdTransport(etcdResource(spec, status), made)).toBe(transport);
  });

  test("how it was made is read from the members' ConfigMap: the scheme of its peer URLs", () => {
    expect(transportOfInitialCluster('kv-0=https://kv-0.kv.db.svc:2380,kv-1=https://kv-1.kv.db.svc:2380')).toBe('TLS');
    expect(transportOfInitialCluster('kv-0=http://kv-0.kv.db.svc:2380')).toBe('Plaintext');
    expect(transportOfInitialCluster(undefined)).toBeUndefined();
  });

  test('a change of spec.tls.enabled once made is refused, naming the field; the same answer is not', () => {
    expect(tlsChangeRefused(etcdResource({ tls: { enabled: true } }), 'Plaintext')).toMatch(
      /^spec\.tls\.enabled: true cannot move a cluster made without TLS/,
    );
    expect(tlsChangeRefused(etcdResource({ tls: { enabled: false } }, { transport: 'TLS' }))).toMatch(
      /^spec\.tls\.enabled: false cannot turn TLS off/,
    );
    expect(tlsChangeRefused(etcdResource({ tls: { enabled: true } }, { transport: 'TLS' }))).toBeUndefined();
    expect(tlsChangeRefused(etcdResource({}, { transport: 'Plaintext' }))).toBeUndefined();
  });
});

describe('a TLS cluster renders', () => {
  test('members serving both ports over TLS, taking only certificates of their CAs, from the Secrets mounted read-only', () => {
    const sts = statefulSetOf(etcdResource({}));
    validateBuiltin(sts);
    const pod = sts.spec.template.spec;
    const etcd = pod.containers[0];
    expect(etcd.args).toEqual(
      expect.arrayContaining([
        '--listen-client-urls=https://0.0.0.0:2379',
        '--advertise-client-urls=https://$(POD_NAME).kv.db.svc:2379',
        '--listen-peer-urls=https://0.0.0.0:2380',
        '--initial-advertise-peer-urls=https://$(POD_NAME).kv.db.svc:2380',
        '--cert-file=/etc/etcd/tls/server/tls.crt',
        '--key-file=/etc/etcd/tls/server/tls.key',
        '--trusted-ca-file=/etc/etcd/tls/server/ca.crt',
        '--client-cert-auth',
        '--peer-cert-file=/etc/etcd/tls/peer/tls.crt',
        '--peer-key-file=/etc/etcd/tls/peer/tls.key',
        '--peer-trusted-ca-file=/etc/etcd/tls/peer/ca.crt',
        '--peer-client-cert-auth',
        // The peer port takes the members' certificate alone, by its common name too.
        '--peer-cert-allowed-cn=kv-member',
        '--experimental-peer-skip-client-san-verification',
      ]),
    );
    // etcd 3.6 names the flag without its prefix.
    expect(statefulSetOf(etcdResource({ version: '3.6.16' })).spec.template.spec.containers[0].args).toContain(
      '--peer-skip-client-san-verification',
    );
    // Probes stay on the plain metrics port: the kubelet has no client certificate.
    expect(etcd.args).toContain('--listen-metrics-urls=http://0.0.0.0:2381');
    expect(etcd.livenessProbe.httpGet.port).toBe('metrics');
    expect(pod.volumes).toEqual([
      { name: 'peer-tls', secret: { secretName: 'kv-peer-tls', defaultMode: 0o440 } },
      { name: 'server-tls', secret: { secretName: 'kv-server-tls', defaultMode: 0o440 } },
    ]);
    expect(etcd.volumeMounts).toEqual([
      { name: 'data', mountPath: '/var/lib/etcd' },
      { name: 'peer-tls', mountPath: '/etc/etcd/tls/peer', readOnly: true },
      { name: 'server-tls', mountPath: '/etc/etcd/tls/server', readOnly: true },
    ]);
    // The CA's Secret is mounted nowhere: only the operator reads it.
    expect(JSON.stringify(renderChildren(etcdClusterController, etcdResource(backups)))).not.toContain('kv-ca');
  });

  test('a plaintext cluster (asked, or made before TLS) renders as before: http, no certificates', () => {
    // Made before TLS: its members' ConfigMap says http, and the status records no transport.
    const madeBefore = new ChildMap();
    madeBefore.set('ConfigMap/kv-members', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kv-members', namespace: 'db' },
      data: { ETCD_INITIAL_CLUSTER: 'kv-0=http://kv-0.kv.db.svc:2380', ETCD_INITIAL_CLUSTER_STATE: 'existing' },
    });
    for (const [cluster, children] of [
      [etcdResource({ tls: { enabled: false }, ...backups }), new ChildMap()],
      [etcdResource(backups, { phase: 'Running' }), madeBefore],
    ] as const) {
      const rendered = renderChildrenWithWaits(etcdClusterController, cluster, children).objects;
      const sts = rendered.find((c) => c.kind === 'StatefulSet') as any;
      const etcd = sts.spec.template.spec.containers[0];
      expect(etcd.args).toContain('--listen-client-urls=http://0.0.0.0:2379');
      expect(etcd.args.filter((a: string) => /cert|https/.test(a))).toEqual([]);
      expect(sts.spec.template.spec.volumes).toBeUndefined();
      const cronJob = rendered.find((c) => c.kind === 'CronJob') as any;
      const snapshot = cronJob.spec.jobTemplate.spec.template.spec.initContainers[0];
      expect(snapshot.command).toContain('--endpoints=http://kv-client.db.svc:2379');
      expect(snapshot.command.filter((a: string) => a.startsWith('--ca'))).toEqual([]);
    }
  });
});

describe('the status', () => {
  test("records the transport and the certificates' expiry; a refused change or a foreign Secret is Degraded naming it", () => {
    const base = { members: [] as string[], now: new Date('2026-12-02T00:00:00Z') };
    const fresh = desiredEtcdStatus(etcdResource({}), {
      ...base,
      certificates: { issued: ['kv-ca'], renewed: [], foreign: [], expires: '2027-12-02T00:00:00.000Z' },
    });
    expect(fresh).toMatchObject({ transport: 'TLS', certificatesExpire: '2027-12-02T00:00:00.000Z' });

    const refused = desiredEtcdStatus(
      etcdResource({ tls: { enabled: true } }, { phase: 'Running', transport: 'Plaintext' }),
      base,
    );
    expect(refused.transport).toBe('Plaintext');
    expect(refused.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'TLSChangeRefused',
      message: expect.stringMatching(/^spec\.tls\.enabled: true/),
    });

    const foreign = desiredEtcdStatus(etcdResource({}), {
      ...base,
      certificates: { issued: [], renewed: [], foreign: ['kv-peer-tls'], expires: undefined },
    });
    expect(foreign.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'SecretNotOwned',
      message: expect.stringContaining('Secret kv-peer-tls exists but is not this cluster'),
    });
  });
});

/** A reconcile's prepare step against a fake API server. */
function prepareOn(client: FakeKubeClient, cluster: any) {
  return prepareApi(client, new AbortController().signal, {
    uid: cluster.metadata.uid,
    namespace: cluster.metadata.namespace,
    keeps: [BuiltinTypes.Secret],
  });
}

const pemOf = (secret: any, key: string) => Buffer.from(secret.data[key], 'base64').toString('utf8');

describe('the certificates', () => {
  const NOW = new Date('2026-12-02T00:00:00Z');

  test('first reconcile: two CAs and three certificates, each of its CA, for its names and use, owned by the cluster', async () => {
    const client = new FakeKubeClient();
    const cluster = etcdResource({});
    const outcome = await ensureCertificates(prepareOn(client, cluster), cluster, NOW);
    expect(outcome.issued).toEqual(['kv-ca', 'kv-peer-tls', 'kv-server-tls', 'kv-client-tls']);
    expect(outcome.foreign).toEqual([]);
    expect(outcome.expires).toBe(new Date(NOW.getTime() + LEAF_LIFETIME_MS).toISOString());

    const secret = (name: string) => client.peek(BuiltinTypes.Secret, name, 'db') as any;
    for (const name of ['kv-ca', 'kv-peer-tls', 'kv-server-tls', 'kv-client-tls']) {
      expect(secret(name).metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'EtcdCluster', name: 'kv', uid: 'u-kv', controller: true }),
      ]);
    }
    const peerCa = new X509Certificate(pemOf(secret('kv-ca'), 'peer-ca.crt'));
    const clientCa = new X509Certificate(pemOf(secret('kv-ca'), 'client-ca.crt'));
    const peer = new X509Certificate(pemOf(secret('kv-peer-tls'), 'tls.crt'));
    const server = new X509Certificate(pemOf(secret('kv-server-tls'), 'tls.crt'));
    const user = new X509Certificate(pemOf(secret('kv-client-tls'), 'tls.crt'));
    // Two CAs: a client's certificate is not a peer's, so it can never join the peer port.
    expect(peer.checkIssued(peerCa)).toBe(true);
    expect(peer.checkIssued(clientCa)).toBe(false);
    expect(user.checkIssued(clientCa)).toBe(true);
    expect(user.checkIssued(peerCa)).toBe(false);
    expect(server.checkIssued(clientCa)).toBe(true);
    expect(peer.checkHost('kv-4.kv.db.svc')).toBeDefined();
    expect(server.checkHost('kv-client.db.svc')).toBeDefined();
    expect(server.checkHost('kv-0.kv.db.svc.cluster.local')).toBeDefined();
    expect(peer.checkHost('kv-client.db.svc')).toBeUndefined();
    expect(pemOf(secret('kv-client-tls'), 'ca.crt')).toBe(pemOf(secret('kv-ca'), 'client-ca.crt'));
    expect(pemOf(secret('kv-peer-tls'), 'ca.crt')).toBe(pemOf(secret('kv-ca'), 'peer-ca.crt'));
    expect(secret('kv-client-tls').type).toBe('kubernetes.io/tls');
  });

  test('the next reconciles change nothing; a third of the life left, each certificate is renewed of the same CA', async () => {
    const client = new FakeKubeClient();
    const cluster = etcdResource({});
    await ensureCertificates(prepareOn(client, cluster), cluster, NOW);
    const before = client.peek(BuiltinTypes.Secret, 'kv-server-tls', 'db') as any;
    const again = await ensureCertificates(prepareOn(client, cluster), cluster, new Date(NOW.getTime() + 86_400_000));
    expect(again).toMatchObject({ issued: [], renewed: [], foreign: [] });
    expect((client.peek(BuiltinTypes.Secret, 'kv-server-tls', 'db') as any).data).toEqual(before.data);

    const late = new Date(NOW.getTime() + (LEAF_LIFETIME_MS * 2) / 3 + 86_400_000);
    const renewal = await ensureCertificates(prepareOn(client, cluster), cluster, late);
    expect(renewal).toMatchObject({ issued: [], renewed: ['kv-peer-tls', 'kv-server-tls', 'kv-client-tls'] });
    const after = client.peek(BuiltinTypes.Secret, 'kv-server-tls', 'db') as any;
    expect(after.data['tls.crt']).not.toBe(before.data['tls.crt']);
    expect(after.data['ca.crt']).toBe(before.data['ca.crt']);
    expect(new Date(new X509Certificate(pemOf(after, 'tls.crt')).validTo).getTime()).toBeGreaterThan(
      late.getTime() + LEAF_LIFETIME_MS - 120_000,
    );
  });

  test('a certificate Secret deleted is issued again of the same CA (a rotation by hand)', async () => {
    const client = new FakeKubeClient();
    const cluster = etcdResource({});
    await ensureCertificates(prepareOn(client, cluster), cluster, NOW);
    const ca = (client.peek(BuiltinTypes.Secret, 'kv-ca', 'db') as any).data;
    await client.delete(BuiltinTypes.Secret, 'kv-peer-tls', 'db');
    const outcome = await ensureCertificates(prepareOn(client, cluster), cluster, NOW);
    expect(outcome).toMatchObject({ issued: ['kv-peer-tls'], renewed: [] });
    expect((client.peek(BuiltinTypes.Secret, 'kv-ca', 'db') as any).data).toEqual(ca);
  });

  test('a Secret of these names the cluster does not control is never read or changed, and reported', async () => {
    const client = new FakeKubeClient();
    const cluster = etcdResource({});
    const theirs = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kv-server-tls', namespace: 'db' },
      data: { x: 'eQ==' },
    };
    client.seed(BuiltinTypes.Secret, theirs);
    const outcome = await ensureCertificates(prepareOn(client, cluster), cluster, NOW);
    expect(outcome.foreign).toEqual(['kv-server-tls']);
    expect((client.peek(BuiltinTypes.Secret, 'kv-server-tls', 'db') as any).data).toEqual({ x: 'eQ==' });

    const caTaken = new FakeKubeClient();
    caTaken.seed(BuiltinTypes.Secret, { ...theirs, metadata: { name: 'kv-ca', namespace: 'db' } });
    await expect(ensureCertificates(prepareOn(caTaken, cluster), cluster, NOW)).resolves.toEqual({
      issued: [],
      renewed: [],
      foreign: ['kv-ca'],
    });
    expect(caTaken.peekAll(BuiltinTypes.Secret, 'db')).toHaveLength(1);
  });

  test("the operator's own client certificate: made in memory of the client CA, for client use only; none before the CA", async () => {
    const client = new FakeKubeClient();
    const cluster = etcdResource({});
    const keptBy = { uid: 'u-kv', namespace: 'db', keeps: [BuiltinTypes.Secret] };
    const context: Pick<ExternalContext, 'getOwn'> = { getOwn: (type, name) => getOwn(client, type, name, keptBy) };
    await expect(operatorCertificate(cluster, context, NOW)).resolves.toBeUndefined();
    await ensureCertificates(prepareOn(client, cluster), cluster, NOW);
    const tls = await operatorCertificate(cluster, context, NOW);
    const ca = pemOf(client.peek(BuiltinTypes.Secret, 'kv-ca', 'db'), 'client-ca.crt');
    expect(tls?.ca).toBe(ca);
    expect(new X509Certificate(tls!.cert).checkIssued(new X509Certificate(ca))).toBe(true);
    // Nothing of it is written: the Secrets are those the cluster's certificates are in.
    expect(
      client
        .peekAll(BuiltinTypes.Secret, 'db')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['kv-ca', 'kv-client-tls', 'kv-peer-tls', 'kv-server-tls']);
    // The same one while it is valid for more than a day.
    await expect(operatorCertificate(cluster, context, new Date(NOW.getTime() + 3_600_000))).resolves.toBe(tls);
  });
});

test('Events: issued and renewed certificates say which Secrets', () => {
  const cluster = etcdResource({});
  const observed = (certificates: any) =>
    ({
      children: { of: () => undefined },
      before: { of: () => undefined },
      prepared: { certificates },
      read: () => [],
      health: {},
    }) as any;
  const reasons = (certificates: any) =>
    etcdEvents(cluster, observed(certificates), cluster.status).map((e) => `${e.reason}: ${e.message}`);
  expect(reasons({ issued: ['kv-ca', 'kv-peer-tls'], renewed: [], foreign: [] })).toContain(
    "CertificatesIssued: issued the cluster's TLS certificates in Secret kv-ca, kv-peer-tls",
  );
  expect(reasons({ issued: [], renewed: ['kv-peer-tls'], foreign: [], expires: '2027-12-02T00:00:00.000Z' })).toContain(
    'CertificatesRenewed: renewed the certificates in Secret kv-peer-tls (valid until 2027-12-02T00:00:00.000Z); members read them without a restart',
  );
  expect(reasons({ issued: [], renewed: [], foreign: [] }).filter((r) => r.startsWith('Certificates'))).toEqual([]);
});
