import { X509Certificate } from 'node:crypto';
import { BuiltinTypes, type ExternalContext } from '../../../constructs/contract';
import {
  CA_ROTATED_FOR_ANNOTATION,
  CA_ROTATION_ANNOTATION,
  CA_ROTATION_SINCE_ANNOTATION,
  ROTATE_CA_ANNOTATION,
} from '../../../constructs/etcd/ca-rotation-names';
import { CA_LIFETIME_MS } from '../../../constructs/etcd/ca-secret';
import { ensureCertificates, operatorCertificate } from '../../../constructs/etcd/certificates';
import { etcdEvents } from '../../../constructs/etcd/controller';
import { getOwn, prepareApi } from '../../../operator/runtime/reconcile/controller-parts';
import { FakeKubeClient } from '../../../testing/fake-kube-client';
import { etcdResource } from '../../support/data-resources';

/**
 * Rotating the operator's own CAs: the Secrets' part, phase by phase. The members' restarts
 * (ca-rotation.ts) are tested against real etcd members in test/integration/etcd-membership.test.ts.
 */

const NOW = new Date('2026-12-06T00:00:00Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);
const keptBy = { uid: 'u-kv', namespace: 'db', keeps: [BuiltinTypes.Secret] };
const prepareOn = (client: FakeKubeClient) => prepareApi(client, new AbortController().signal, keptBy);
const asked = (token: string) => {
  const c = etcdResource({});
  return { ...c, metadata: { ...c.metadata, annotations: { [ROTATE_CA_ANNOTATION]: token } } };
};
const secret = (client: FakeKubeClient, name: string) => client.peek(BuiltinTypes.Secret, name, 'db') as any;
const text = (s: any, key: string) => Buffer.from(s.data[key], 'base64').toString('utf8');
/** The PEM certificates in a bundle, one by one, each on lines of its own. */
const pems = (bundle: string) => {
  expect(bundle).not.toContain('----------');
  return bundle
    .split(/(?<=-----END CERTIFICATE-----)\n?/)
    .filter((p) => p.trim())
    .map((p) => `${p.trim()}\n`);
};
const issuedBy = (s: any, ca: string) => new X509Certificate(text(s, 'tls.crt')).checkIssued(new X509Certificate(ca));

async function madeCluster() {
  const client = new FakeKubeClient();
  await ensureCertificates(prepareOn(client), etcdResource({}), NOW);
  const ca = secret(client, 'kv-ca');
  return { client, oldPeer: text(ca, 'peer-ca.crt'), oldClient: text(ca, 'client-ca.crt') };
}

test('asked by annotation: new CAs beside the old, every ca.crt trusting both, certificates still of the old; the phase marked written after them', async () => {
  const { client, oldPeer, oldClient } = await madeCluster();
  const outcome = await ensureCertificates(prepareOn(client), asked('leak-1'), later(1000));
  expect(outcome.rotation).toEqual({
    phase: 'trust',
    changed: { to: 'trust', why: `asked by ${ROTATE_CA_ANNOTATION}=leak-1` },
  });
  const ca = secret(client, 'kv-ca');
  expect(ca.metadata.annotations).toMatchObject({
    [CA_ROTATION_ANNOTATION]: 'trust',
    [CA_ROTATED_FOR_ANNOTATION]: 'leak-1',
    [CA_ROTATION_SINCE_ANNOTATION]: later(1000).toISOString(),
  });
  const newPeer = text(ca, 'next-peer-ca.crt');
  expect(newPeer).not.toBe(oldPeer);
  expect(text(ca, 'peer-ca.crt')).toBe(oldPeer);
  expect(pems(text(secret(client, 'kv-peer-tls'), 'ca.crt'))).toEqual([oldPeer, newPeer]);
  expect(pems(text(secret(client, 'kv-client-tls'), 'ca.crt'))).toEqual([oldClient, text(ca, 'next-client-ca.crt')]);
  expect(issuedBy(secret(client, 'kv-peer-tls'), oldPeer)).toBe(true);
  // "since" comes after the certificates were written: the last write of the reconcile.
  const writes = client.writes.filter((w) => w.verb !== 'create').map((w) => w.name);
  expect(writes.at(-1)).toBe('kv-ca');
  expect(writes).toEqual(expect.arrayContaining(['kv-peer-tls', 'kv-server-tls', 'kv-client-tls']));

  // The same annotation again: nothing more happens until the members have restarted.
  const count = client.writes.length;
  const again = await ensureCertificates(prepareOn(client), asked('leak-1'), later(2000));
  expect(again.rotation).toEqual({ phase: 'trust' });
  expect(client.writes).toHaveLength(count);
});

test('every member restarted (trust rolled): the new CAs sign, ca.crt the new alone, the old kept only for the operator; then, rolled again, the old go', async () => {
  const { client, oldPeer, oldClient } = await madeCluster();
  await ensureCertificates(prepareOn(client), asked('leak-1'), later(1000));
  const newPeer = text(secret(client, 'kv-ca'), 'next-peer-ca.crt');
  const newClient = text(secret(client, 'kv-ca'), 'next-client-ca.crt');

  const dropping = await ensureCertificates(prepareOn(client), asked('leak-1'), later(60_000), 'trust');
  expect(dropping.rotation).toEqual({ phase: 'drop', changed: { to: 'drop' } });
  const ca = secret(client, 'kv-ca');
  expect(text(ca, 'peer-ca.crt')).toBe(newPeer);
  expect(text(ca, 'retired-peer-ca.crt')).toBe(oldPeer);
  expect(ca.data['next-peer-ca.crt']).toBeUndefined();
  expect(ca.metadata.annotations).toMatchObject({
    [CA_ROTATION_ANNOTATION]: 'drop',
    [CA_ROTATION_SINCE_ANNOTATION]: later(60_000).toISOString(),
  });
  for (const name of ['kv-peer-tls', 'kv-server-tls', 'kv-client-tls']) {
    const s = secret(client, name);
    expect(issuedBy(s, name === 'kv-peer-tls' ? newPeer : newClient)).toBe(true);
    expect(pems(text(s, 'ca.crt'))).toEqual([name === 'kv-peer-tls' ? newPeer : newClient]);
  }
  // The operator signs with the new client CA and checks members against both while they may
  // still serve certificates of the old one.
  const context: Pick<ExternalContext, 'getOwn'> = {
    getOwn: (type, name) => getOwn(client, type, name, keptBy),
  };
  const tls = await operatorCertificate(asked('leak-1'), context, later(60_000));
  expect(new X509Certificate(tls!.cert).checkIssued(new X509Certificate(newClient))).toBe(true);
  expect(pems(tls!.ca)).toEqual([newClient, oldClient]);

  // Rolled with the wrong phase's word: nothing moves.
  const count = client.writes.length;
  await ensureCertificates(prepareOn(client), asked('leak-1'), later(70_000), 'trust');
  expect(client.writes).toHaveLength(count);

  const done = await ensureCertificates(prepareOn(client), asked('leak-1'), later(120_000), 'drop');
  expect(done.rotation).toEqual({ changed: { to: 'done' } });
  const after = secret(client, 'kv-ca');
  expect(after.data['retired-peer-ca.crt']).toBeUndefined();
  expect(after.metadata.annotations[CA_ROTATION_ANNOTATION]).toBeUndefined();
  expect(after.metadata.annotations[CA_ROTATED_FOR_ANNOTATION]).toBe('leak-1');
  const tlsAfter = await operatorCertificate(asked('leak-1'), context, later(120_000));
  expect(pems(tlsAfter!.ca)).toEqual([newClient]);
  // And no more rotation for the same word.
  const quiet = await ensureCertificates(prepareOn(client), asked('leak-1'), later(180_000));
  expect(quiet.rotation).toBeUndefined();
});

test('a CA with a third of its life left is rotated by itself', async () => {
  const { client } = await madeCluster();
  const early = await ensureCertificates(prepareOn(client), etcdResource({}), later(CA_LIFETIME_MS / 2));
  expect(early.rotation).toBeUndefined();
  const due = await ensureCertificates(
    prepareOn(client),
    etcdResource({}),
    later((CA_LIFETIME_MS * 2) / 3 + 86_400_000),
  );
  expect(due.rotation?.changed).toEqual({ to: 'trust', why: expect.stringMatching(/^the CAs expire on /) });
});

test('a cluster made with the annotation already set is not rotated for it', async () => {
  const client = new FakeKubeClient();
  await ensureCertificates(prepareOn(client), asked('from-the-start'), NOW);
  const next = await ensureCertificates(prepareOn(client), asked('from-the-start'), later(1000));
  expect(next.rotation).toBeUndefined();
  expect(secret(client, 'kv-ca').metadata.annotations[CA_ROTATED_FOR_ANNOTATION]).toBe('from-the-start');
});

test("Events: a rotation's steps, and no 'without a restart' renewal message while it runs", () => {
  const cluster = etcdResource({});
  const reasons = (certificates: object) =>
    etcdEvents(
      cluster,
      {
        children: { of: () => undefined },
        before: { of: () => undefined },
        prepared: { certificates },
        read: () => [],
        health: {},
      } as any,
      cluster.status,
    ).map((e) => e.reason);
  const base = { issued: [], renewed: ['kv-peer-tls'], foreign: [] };
  expect(reasons({ ...base, rotation: { phase: 'trust', changed: { to: 'trust', why: 'asked' } } })).toEqual([
    'CARotationStarted',
  ]);
  expect(reasons({ ...base, rotation: { phase: 'drop', changed: { to: 'drop' } } })).toEqual(['CAsTrusted']);
  expect(reasons({ ...base, rotation: { changed: { to: 'done' } } })).toEqual(['CAsRotated']);
  expect(reasons(base)).toEqual(['CertificatesRenewed']);
});
