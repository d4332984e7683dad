/**
 * The WebSite operator against a real API server: the kit's control plane (etcd, kube-apiserver,
 * controllers and simulated nodes, built and cached on first use; or the cluster in
 * OPKIT_KUBECONFIG), the CRD as synthesized, and the reconciler run as `npm run operator` runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Testing } from 'cdk8s';
import { BuiltinTypes, customResourceType, type KubeObject, type ResourceType } from 'cdk8s-operator-kit';
import { HttpKubeClient, isNotFound, loadKubeConfig } from 'cdk8s-operator-kit/reconciler';
import { type ControlPlane, freePort, startControlPlane } from 'cdk8s-operator-kit/testing';
import { operatorApp } from '../app';
import { type WebSite, webSiteKind } from '../kinds/web-site';

let controlPlane: ControlPlane;
let client: HttpKubeClient;
let reconciler: ChildProcess | undefined;
const namespace = `web-site-test-${Date.now().toString(36)}`;
/** The reconciler's last log lines: a failed wait shows them, since the cause is usually there. */
const reconcilerLog: string[] = [];

function lastLogLines(): string {
  return reconcilerLog.length ? `\nthe reconciler's last log lines:\n${reconcilerLog.join('\n')}` : '';
}

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (reconciler && reconciler.exitCode !== null)
      throw new Error(`the reconciler exited (${reconciler.exitCode}) while waiting for ${what}${lastLogLines()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastLogLines()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  controlPlane = await startControlPlane({ verbose: false });
  client = new HttpKubeClient(loadKubeConfig({ path: controlPlane.kubeconfig }), { fieldManager: 'test' });
  // Every kind's CRD: the reconciler runs all of the operator's controllers.
  const crds = Testing.synth(operatorApp(Testing.app()).cluster).filter((o) => o.kind === 'CustomResourceDefinition');
  for (const crd of crds) {
    await client.apply(BuiltinTypes.CustomResourceDefinition, crd);
    await eventually(`${crd.metadata.name} established`, async () => {
      const got = await client.get(BuiltinTypes.CustomResourceDefinition, crd.metadata.name);
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    });
  }
  await client.create(BuiltinTypes.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  // Every endpoint on a port free now (never a fixed one: `npm run operator` may be running
  // beside this test); webhooks on loopback when the API server is on this machine.
  const health = await freePort();
  const onThisMachine = ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(controlPlane.server).hostname);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'reconciler.ts',
      `--kubeconfig=${controlPlane.kubeconfig}`,
      `--health-probe-bind-address=127.0.0.1:${health}`,
      '--metrics-bind-address=0',
      ...(onThisMachine ? ['--webhook-loopback'] : []),
      `--namespace=${namespace}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  reconciler = child;
  // Its log stays out of the test report but is kept, the last 40 lines.
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (chunk: Buffer) => {
      reconcilerLog.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      reconcilerLog.splice(0, Math.max(0, reconcilerLog.length - 40));
    });
  await eventually('the reconciler ready', async () =>
    (await fetch(`http://127.0.0.1:${health}/readyz`)).ok ? true : undefined,
  );
}, 900_000);

afterAll(async () => {
  const child = reconciler;
  if (child?.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await client?.delete(BuiltinTypes.Namespace, namespace).catch(() => undefined);
  client?.close();
  await controlPlane?.stop();
});

test('a WebSite becomes its Deployment, owned by it, and follows spec.replicas', async () => {
  const type = customResourceType<WebSite>(webSiteKind);
  await client.create(
    type,
    {
      apiVersion: webSiteKind.apiVersion,
      kind: 'WebSite',
      metadata: { name: 'demo', namespace },
      spec: { replicas: 2 },
    },
    namespace,
  );
  const deployment = await eventually('the Deployment', () => client.get(BuiltinTypes.Deployment, 'demo', namespace));
  expect(deployment.spec?.replicas).toBe(2);
  expect(deployment.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'WebSite', name: 'demo' })]);
  await client.mergePatch(type, 'demo', namespace, { spec: { replicas: 3 } });
  await eventually('3 replicas', async () => {
    const d = await client.get(BuiltinTypes.Deployment, 'demo', namespace);
    return d.spec?.replicas === 3 ? d : undefined;
  });
  const status = await eventually('the status', async () => {
    const r = await client.get(type, 'demo', namespace);
    return r.status?.observedGeneration === r.metadata.generation ? r.status : undefined;
  });
  expect(status).toBeDefined();
});

/** EndpointSlices, read only by this test. */
type EndpointSlice = KubeObject & { endpoints?: { targetRef?: { name: string } }[] };
const endpointSlices: ResourceType<EndpointSlice> = {
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  resource: 'endpointslices',
  namespaced: true,
};

test("two WebSites in one namespace: each one's Service sends traffic only to its own pods", async () => {
  const type = customResourceType<WebSite>(webSiteKind);
  const names = ['one', 'two'];
  for (const name of names)
    await client.create(
      type,
      {
        apiVersion: webSiteKind.apiVersion,
        kind: 'WebSite',
        metadata: { name, namespace },
        spec: { replicas: 1 },
      },
      namespace,
    );
  for (const name of names) {
    const { own, listed } = await eventually(`${name}'s pod behind its Service`, async () => {
      const pods = await client.list(BuiltinTypes.Pod, namespace);
      const own = pods.items
        .filter((p) => p.metadata.ownerReferences?.some((o) => o.name.startsWith(`${name}-`)))
        .map((p) => p.metadata.name)
        .sort();
      const slices = await client.list<EndpointSlice>(endpointSlices, namespace, {
        labelSelector: `kubernetes.io/service-name=${name}`,
      });
      const listed = slices.items
        .flatMap((s) => s.endpoints ?? [])
        .map((e) => e.targetRef?.name)
        .sort();
      return own.length === 1 && listed.length === 1 ? { own, listed } : undefined;
    });
    expect(listed).toEqual(own);
  }
});

test('a spec the CRD refuses never reaches the reconciler: the API server names the field', async () => {
  const refused = await client
    .create(
      customResourceType(webSiteKind),
      {
        apiVersion: webSiteKind.apiVersion,
        kind: 'WebSite',
        metadata: { name: 'too-many', namespace },
        spec: { replicas: 99 },
      },
      namespace,
    )
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  // The API server's refusal, naming the field (undefined, had the create gone through).
  expect(String(refused)).toMatch(/spec\.replicas/);
  const missing = await client.get(BuiltinTypes.Deployment, 'too-many', namespace).catch((err: unknown) => err);
  expect(isNotFound(missing)).toBe(true);
});
