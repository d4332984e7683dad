import pino from 'pino';
import { BuiltinTypes, customResourceType, type Memcached } from '../../../constructs';
import { memcachedController } from '../../../constructs/memcached/controller';
import { buildController } from '../../../operator/runtime/reconcile/builder';
import { EventRecorder } from '../../../operator/runtime/observability/events';
import { Manager } from '../../../operator/runtime/controller/manager';
import { Metrics } from '../../../operator/runtime/observability/metrics';
import { FakeKubeClient } from '../../../testing/fake-kube-client';

// The Memcached kind's type: its objects are Memcacheds.
const memcachedType = customResourceType<Memcached>(memcachedController.for);

async function until<T>(what: string, check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What a user's unit test of their controller looks like: the kit's runtime against the fake. */
describe('a controller against FakeKubeClient', () => {
  const client = new FakeKubeClient();
  const stop = new AbortController();
  let running: Promise<number>;

  beforeAll(() => {
    const logger = pino({ level: 'silent' });
    const metrics = new Metrics();
    const manager = new Manager({ client, logger, metrics });
    const recorder = new EventRecorder(client, 'cdk8s-operator-kit/memcached', 'test_1', logger);
    manager.add(buildController(manager, memcachedController, { client, recorder, logger, metrics }));
    client.seed(memcachedType, {
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: 'cache', namespace: 'team' },
      spec: { size: 3, image: 'memcached:1.6', containerPort: 11211 },
    });
    running = manager.run(stop.signal);
  });

  afterAll(async () => {
    stop.abort();
    expect(await running).toBe(0);
  });

  test('renders the Deployment, owned by the Memcached, and writes the status', async () => {
    const deployment = await until('the Deployment', () => client.peek(BuiltinTypes.Deployment, 'cache', 'team'));
    const mc = client.peek(memcachedType, 'cache', 'team');
    expect(deployment.spec?.replicas).toBe(3);
    expect(deployment.metadata.ownerReferences).toEqual([
      expect.objectContaining({ uid: mc?.metadata.uid, controller: true }),
    ]);
    const status = await until('the status', () => client.peek(memcachedType, 'cache', 'team')?.status);
    expect(status.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Available=False',
      'Progressing=True',
      'Degraded=False',
      // Derived by the runtime for kstatus (Helm 4, Flux, kpt) and kubectl wait.
      'Stalled=False',
      'Reconciling=True',
      'Ready=False',
    ]);
    // The scale subresource's selector (labelSelectorPath), written by the runtime from the
    // Deployment: what a HorizontalPodAutoscaler finds the pods by.
    expect((status as { selector?: string }).selector).toBe(
      Object.entries(deployment.spec?.selector?.matchLabels ?? {})
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    );
    expect((status as { selector?: string }).selector).toMatch(/app\.kubernetes\.io\/instance=cache/);
  });

  test('a reconcile of a settled Memcached writes nothing; a new size rewrites the Deployment', async () => {
    await until('a settled status', () => client.peek(memcachedType, 'cache', 'team')?.status);
    await new Promise((r) => setTimeout(r, 1500)); // the status pacer's window
    const settled = client.writes.length;
    // A label changes: the Memcached is reconciled again, and nothing of its children differs.
    await client.mergePatch(memcachedType, 'cache', 'team', { metadata: { labels: { team: 'a' } } });
    await new Promise((r) => setTimeout(r, 300));
    expect(client.writes.slice(settled).map((w) => `${w.verb} ${w.kind}`)).toEqual(['patch Memcached']);

    await client.mergePatch(memcachedType, 'cache', 'team', { spec: { size: 5 } });
    await until('5 replicas', () =>
      client.peek(BuiltinTypes.Deployment, 'cache', 'team')?.spec?.replicas === 5 ? true : undefined,
    );
    expect(client.writes.slice(settled).map((w) => `${w.verb} ${w.kind}`)).toContain('apply Deployment');
  });
});

describe('FakeKubeClient answers as the API server would', () => {
  const cm = (labels: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'n', labels },
    data: { k: 'v' },
  });

  test('apply drops what our manager applied before and no longer sends; others keep theirs', async () => {
    const client = new FakeKubeClient();
    await client.apply(BuiltinTypes.ConfigMap, cm({ a: '1', b: '2' }));
    await client.mergePatch(BuiltinTypes.ConfigMap, 'c', 'n', { metadata: { labels: { theirs: 'x' } } });
    const after = await client.apply(BuiltinTypes.ConfigMap, cm({ a: '1' }));
    expect(after.metadata.labels).toEqual({ a: '1', theirs: 'x' });
    expect(after.metadata.generation).toBe(1);
  });

  test('a uid is a precondition: deleting or applying to a replaced object is refused', async () => {
    const client = new FakeKubeClient();
    const first = await client.create(BuiltinTypes.ConfigMap, cm({}));
    await expect(client.create(BuiltinTypes.ConfigMap, cm({}))).rejects.toMatchObject({ status: 409 });
    await expect(client.delete(BuiltinTypes.ConfigMap, 'c', 'n', { uid: 'other' })).rejects.toMatchObject({
      status: 409,
    });
    const stale = { ...cm({}), metadata: { ...cm({}).metadata, uid: 'other' } };
    await expect(client.apply(BuiltinTypes.ConfigMap, stale)).rejects.toMatchObject({ status: 422 });
    await client.delete(BuiltinTypes.ConfigMap, 'c', 'n', { uid: first.metadata.uid });
    await expect(client.get(BuiltinTypes.ConfigMap, 'c', 'n')).rejects.toMatchObject({ status: 404 });
    expect(client.writes.map((w) => w.verb)).toEqual(['create', 'delete']);
  });
});

describe('update and JSON patch, as the API server answers them', () => {
  const lease = (holder: string, resourceVersion?: string) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l', namespace: 'ns', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { holderIdentity: holder },
  });

  test('an update at the version read replaces the object; one at an older version is a 409 Conflict', async () => {
    const client = new FakeKubeClient();
    const created = await client.create(BuiltinTypes.Lease, lease('a'));
    const updated = await client.update(BuiltinTypes.Lease, { ...created, spec: { holderIdentity: 'b' } });
    expect(updated.spec.holderIdentity).toBe('b');
    expect(updated.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    await expect(
      client.update(BuiltinTypes.Lease, { ...created, spec: { holderIdentity: 'c' } }),
    ).rejects.toMatchObject({ status: 409 });
    expect((await client.get(BuiltinTypes.Lease, 'l', 'ns')).spec.holderIdentity).toBe('b');
    expect(client.writes.map((w) => w.verb)).toEqual(['create', 'update']);
  });

  test('a JSON patch applies its operations once its test holds, and changes nothing when it fails', async () => {
    const client = new FakeKubeClient();
    const created = await client.create(BuiltinTypes.Lease, lease('a'));
    const version = created.metadata.resourceVersion;
    const patched = await client.jsonPatch(BuiltinTypes.Lease, 'l', 'ns', [
      { op: 'test', path: '/metadata/resourceVersion', value: version },
      { op: 'replace', path: '/spec/holderIdentity', value: 'b' },
      { op: 'add', path: '/metadata/labels', value: { 'a/b': 'c' } },
    ]);
    expect(patched.spec.holderIdentity).toBe('b');
    expect(patched.metadata.labels).toEqual({ 'a/b': 'c' });
    await expect(
      client.jsonPatch(BuiltinTypes.Lease, 'l', 'ns', [
        { op: 'test', path: '/metadata/resourceVersion', value: version },
        { op: 'replace', path: '/spec/holderIdentity', value: 'c' },
      ]),
    ).rejects.toMatchObject({ status: 409 });
    await expect(
      client.jsonPatch(BuiltinTypes.Lease, 'l', 'ns', [{ op: 'remove', path: '/spec/renewTime' }]),
    ).rejects.toMatchObject({ status: 422 });
    expect((await client.get(BuiltinTypes.Lease, 'l', 'ns')).spec.holderIdentity).toBe('b');
  });

  test("a JSON patch reaches into lists by index, as a caBundle goes into a configuration's webhooks", async () => {
    const client = new FakeKubeClient();
    await client.create(BuiltinTypes.ValidatingWebhookConfiguration, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'c' },
      webhooks: [
        { name: 'a', clientConfig: {} },
        { name: 'b', clientConfig: {} },
      ],
    });
    const patched = await client.jsonPatch(BuiltinTypes.ValidatingWebhookConfiguration, 'c', undefined, [
      { op: 'test', path: '/webhooks/1/name', value: 'b' },
      { op: 'add', path: '/webhooks/1/clientConfig/caBundle', value: 'Q0E=' },
      { op: 'add', path: '/webhooks/-', value: { name: 'c', clientConfig: {} } },
    ]);
    expect(patched.webhooks).toEqual([
      { name: 'a', clientConfig: {} },
      { name: 'b', clientConfig: { caBundle: 'Q0E=' } },
      { name: 'c', clientConfig: {} },
    ]);
    await expect(
      client.jsonPatch(BuiltinTypes.ValidatingWebhookConfiguration, 'c', undefined, [
        { op: 'replace', path: '/webhooks/7/name', value: 'x' },
      ]),
    ).rejects.toMatchObject({ status: 422 });
  });
});
