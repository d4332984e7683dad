/**
 * `conformanceTest` (cdk8s-operator-kit/testing) on a control plane of its own (an audit log of
 * its own): the kit's Memcached and a conforming user kind pass every check; a kind that writes
 * after each restart, one whose status feeds its render in a loop, one whose external step writes
 * an object by name (adopting someone else's) and one whose schema keeps unknown fields fail the
 * check that catches them, saying what they did and where to look.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import type { KubeObject } from '../../constructs/contract';
import { type ConformanceReport, type ControlPlane, conformanceTest, startControlPlane } from '../../testing';
import { giveIngressesAddresses } from '../support/ingress-addresses';
import { nodesRun, testWithNodes } from '../support/kube';

jest.setTimeout(600_000);

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'conformance');
const GREETINGS = path.join(FIXTURES, 'greetings.ts');
let cp: Promise<ControlPlane>;

const greeting = (kind: string) => ({
  apiVersion: 'conformance.example.com/v1alpha1',
  kind,
  metadata: { name: 'hello' },
  spec: { text: 'hello' },
});

/** One kind's run, started at once: the runs mostly wait (for rest, for the garbage collector), so they go together. */
function run(
  controllers: string,
  kind: string,
  example: KubeObject,
  more: Partial<Parameters<typeof conformanceTest>[0]> = {},
): Promise<ConformanceReport> {
  return cp.then((controlPlane) => conformanceTest({ controlPlane, controllers, kind, examples: [example], ...more }));
}

/** The WebApp run's namespace, whose Ingresses are given an address: its Ready waits on one. */
const WEBAPP_NAMESPACE = `conformance-webapp-${Math.random().toString(36).slice(2, 8)}`;
let ingressAddresses: { stop(): void } | undefined;

let greetingRun: Promise<ConformanceReport>;
let memcachedRun: Promise<ConformanceReport> | undefined;
let stampedRun: Promise<ConformanceReport>;
let echoingRun: Promise<ConformanceReport>;
let scaledRun: Promise<ConformanceReport>;
let laxRun: Promise<ConformanceReport>;
let adoptingRun: Promise<ConformanceReport>;
/** The kit's own kinds but EtcdCluster (conformance-etcd.test.ts, in the long tier), by kind. */
const kitRuns = new Map<string, Promise<ConformanceReport>>();
const KIT_KINDS = path.join(FIXTURES, 'kit-kinds.ts');

beforeAll(() => {
  cp = startControlPlane({ audit: true, own: true, verbose: false });
  // With a list, whose first item and count the invalid-specs check varies, and a map, whose first value it varies.
  greetingRun = run(GREETINGS, 'Greeting', {
    ...greeting('Greeting'),
    spec: { text: 'hello', recipients: [{ name: 'world' }], labels: { team: 'greeters' } },
  });
  stampedRun = run(GREETINGS, 'StampedGreeting', greeting('StampedGreeting'));
  echoingRun = run(GREETINGS, 'EchoingGreeting', greeting('EchoingGreeting'));
  scaledRun = run(GREETINGS, 'ScaledGreeting', {
    ...greeting('ScaledGreeting'),
    spec: { text: 'hello', memoryPerPod: '64Mi' },
  });
  adoptingRun = run(GREETINGS, 'AdoptingGreeting', greeting('AdoptingGreeting'));
  laxRun = run(GREETINGS, 'LaxGreeting', { ...greeting('LaxGreeting'), spec: { text: 'hello', volume: 5 } });
  kitRuns.set(
    'CronTab',
    run(KIT_KINDS, 'CronTab', {
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'ct' },
      // Never due while the test runs: a run is a write of its own.
      spec: { cronSpec: '0 0 1 1 *', image: 'busybox:1.36' },
    }),
  );
  if (!nodesRun) return;
  // Their pods must run for them to be Ready.
  kitRuns.set(
    'Database',
    run(KIT_KINDS, 'Database', {
      apiVersion: 'database.example.com/v1alpha1',
      kind: 'Database',
      metadata: { name: 'db' },
      spec: {
        type: 'postgresql',
        version: '16',
        storage: { size: '1Gi' },
        resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
      },
    }),
  );
  kitRuns.set(
    'Application',
    run(KIT_KINDS, 'Application', {
      apiVersion: 'app.aiops.org/v1',
      kind: 'Application',
      metadata: { name: 'app' },
      spec: { image: 'nginx:1.27' },
    }),
  );
  // The seed's sample verbatim; each copy a host of its own, as two WebApps cannot route one host.
  void cp.then((plane) => (ingressAddresses = giveIngressesAddresses(plane.kubeconfig, WEBAPP_NAMESPACE)));
  kitRuns.set(
    'WebApp',
    run(
      KIT_KINDS,
      'WebApp',
      {
        apiVersion: 'apps.example.com/v1alpha1',
        kind: 'WebApp',
        metadata: { name: 'my-webapp' },
        spec: { replicas: 3, image: 'nginx:alpine', port: 80, domain: 'example.com' },
      },
      {
        namespace: WEBAPP_NAMESPACE,
        copy: (example, name) => ({
          ...example,
          metadata: { ...example.metadata, name },
          spec: { ...(example.spec as object), domain: `${name}.example.com` },
        }),
      },
    ),
  );
  memcachedRun = run(path.join(FIXTURES, 'memcached.ts'), 'Memcached', {
    apiVersion: 'conformance.example.com/v1',
    kind: 'Memcached',
    metadata: { name: 'cache' },
    spec: { size: 2, memory: '64Mi' },
  });
});

afterAll(async () => {
  // Every run ends before the plane stops, whatever a test saw.
  await Promise.allSettled([greetingRun, stampedRun, echoingRun, scaledRun, laxRun, memcachedRun, ...kitRuns.values()]);
  ingressAddresses?.stop();
  await (await cp).stop();
});

const NO_QUANTITY = expect.stringMatching(/^quantities: the first example sets no quantity field/);

test('a conforming kind of a user passes every check (its spec has no quantity to spell otherwise)', async () => {
  const report = await greetingRun;
  // apiserver-restart among them: this plane is the test kit's own, with spare API servers to restart.
  expect(report).toMatchObject({ problems: [], notChecked: [NO_QUANTITY] });
  // Every request its reconciler made is granted (rbac); of the grants, those it never used are listed.
  expect(report.checks.rbac).toEqual([]);
  expect(report.unusedGrants).toEqual(expect.arrayContaining(['create authentication.k8s.io/tokenreviews']));
  expect(report.unusedGrants).not.toContain('patch configmaps');
});

testWithNodes(
  "the kit's Memcached passes every check it can be put to, its memory spelled otherwise among them (its one child, a Deployment, has no stand-in)",
  async () => {
    expect(await memcachedRun!).toMatchObject({
      problems: [],
      notChecked: [expect.stringMatching(/^never-adopts: no child of the first example /)],
    });
  },
);

test("the kit's CronTab passes every check it can be put to (its one child, a CronJob, has no stand-in; it has no quantity)", async () => {
  const report = await kitRuns.get('CronTab')!;
  expect(report.problems).toEqual([]);
  expect(report.notChecked).toEqual([
    expect.stringMatching(/^never-adopts: no child of the first example /),
    NO_QUANTITY,
  ]);
});

testWithNodes(
  "the kit's Database and Application pass every check (the Database's storage and its server's resources spelled otherwise too)",
  async () => {
    expect(await kitRuns.get('Database')!).toMatchObject({ problems: [], notChecked: [] });
    expect(await kitRuns.get('Application')!).toMatchObject({ problems: [], notChecked: [NO_QUANTITY] });
  },
);

testWithNodes(
  "the kit's WebApp, the seed's sample, passes every check (an ingress controller played: its Ready waits on its Ingress's address; each copy a host of its own)",
  async () => {
    expect(await kitRuns.get('WebApp')!).toMatchObject({ problems: [], notChecked: [NO_QUANTITY] });
  },
);

test('a kind whose render holds a value of its process writes after every restart: the restart check says what', async () => {
  const report = await stampedRun;
  expect(report.checks).toMatchObject({ ready: [], settled: [], 'never-adopts': [], delete: [] });
  expect(report.checks.restart).toEqual([
    expect.stringMatching(/^patch configmaps hello-greeting by a reconciler started again over settled resources: /),
  ]);
});

test('a kind whose status feeds its render writes in a loop: the settled check says which object', async () => {
  const report = await echoingRun;
  expect(report.checks.ready).toEqual([]);
  // The loop writes its ConfigMap and its status in turn: whichever is written the fourth time
  // first is named (the status, in one warm npm test), and nothing outside the loop is.
  expect(report.checks.settled.length).toBeGreaterThan(0);
  for (const problem of report.checks.settled)
    expect(problem).toMatch(
      /^patch (configmaps hello-greeting|echoinggreetings\/status hello): written \d+ times once the examples were Ready and not at rest — a write loop/,
    );
});

test("a kind with a quantity in a field of a built-in type the API server spells its own way (an autoscaler's target): no write when it is spelled otherwise", async () => {
  const report = await scaledRun;
  expect(report).toMatchObject({ problems: [], notChecked: [expect.stringMatching(/^never-adopts: /)] });
});

test('a kind whose schema keeps unknown fields takes a misspelt one: the invalid-specs check says which, and every refusal of a value its schema bounds names the field', async () => {
  const report = await laxRun;
  expect(report.checks).toMatchObject({ ready: [], settled: [], restart: [], delete: [] });
  // Of its variants (each field's wrong type, volume out of range, the unknown field), only the unknown field is taken.
  expect(report.checks['invalid-specs']).toEqual([
    expect.stringMatching(
      /^spec\.conformanceUnknownField: a field its schema does not have \(a misspelt one\) was taken \(a dry run of a new LaxGreeting\) — .*x-kubernetes-preserve-unknown-fields/,
    ),
  ]);
});

test('a kind whose external step writes its ConfigMap by name, outside the runtime: the never-adopts check says whose object it changed', async () => {
  const report = await adoptingRun;
  expect(report.checks).toMatchObject({ ready: [], settled: [], restart: [], delete: [] });
  expect(report.checks['never-adopts']).toEqual([
    "ConfigMap hello-x-greeting, someone else's, was changed by the reconciler: it must never be written",
  ]);
});

test("the apiserver-restart check's ground: a spare API server restarted refuses a watch resumed from before its restart (410 Expired), so a reconciler must list again", async () => {
  const plane = await cp;
  const spare = await plane.startSpareApiserver!();
  const kubectl = (kubeconfig: string, ...args: string[]) =>
    execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
  try {
    const namespace = `spare-${Math.random().toString(36).slice(2, 8)}`;
    kubectl(plane.kubeconfig, 'create', 'namespace', namespace);
    kubectl(plane.kubeconfig, 'create', 'configmap', 'before', '-n', namespace);
    // Read through the spare: it serves what the plane's own API server wrote, from the same etcd.
    const list = JSON.parse(
      kubectl(spare.kubeconfig, 'get', '--raw', `/api/v1/namespaces/${namespace}/configmaps`),
    ) as {
      metadata: { resourceVersion: string };
      items: { metadata: { name: string } }[];
    };
    expect(list.items.map((c) => c.metadata.name)).toContain('before');
    // A write since the list: the restarted server's watch cache begins after it.
    kubectl(plane.kubeconfig, 'create', 'configmap', 'since', '-n', namespace);
    await spare.restart();
    const watch = kubectl(
      spare.kubeconfig,
      'get',
      '--raw',
      `/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=2`,
    );
    expect(watch).toMatch(/"type":"ERROR".*"reason":"Expired"/);
    kubectl(plane.kubeconfig, 'delete', 'namespace', namespace, '--wait=false');
  } finally {
    await spare.stop();
  }
});
