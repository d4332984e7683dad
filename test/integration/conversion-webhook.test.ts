/**
 * A user's kind that changes between versions, against a real API server: v1alpha1 says
 * `size`, v1 says `replicas` and adds `label`. The reconciler (the user's own entry point on
 * `runOperator`) serves `/convert` over HTTPS with a certificate it makes and keeps, makes the
 * CRD trust it through the conversion `caBundle`, and — because the objects were made while
 * v1alpha1 was the storage version (the kind's earlier release) — rewrites them once in v1 and
 * trims `status.storedVersions`. The CRD is the one the Operator construct synthesizes, its
 * webhook registered by loopback `url` (as envtest does: no Service can be routed to here).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { selfSignedCertificate } from '../../operator/runtime/webhooks/self-signed';
import { freePort } from '../../testing/control-plane';
import { controllersModule } from '../support/controllers-module';
import {
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  kubectl,
  kubectlOk,
  testKubeconfig,
} from '../support/kube';
import { ReconcilerProcess } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const GROUP = 'convert.opkit.test';
const CRD = `shelves.${GROUP}`;
const SECRET = 'shelf-webhook-cert';

jest.setTimeout(180_000);

/** The user's kind and reconciler entry point, in a module of its own (as in their project). */
const KIND_SOURCE = `import { ApiObject, Chart, Testing } from 'cdk8s';
import {
  constructController,
  ConstructOperator,
  CustomResourceDefinition,
  CustomResourceKind,
  spokeVersion,
  t,
} from ${JSON.stringify(path.join(ROOT, 'constructs'))};
import { runOperator } from ${JSON.stringify(path.join(ROOT, 'operator'))};

const v1alpha1Spec = t.object({ size: t.integer({ required: true, minimum: 0 }) });
const v1Spec = t.object({ replicas: t.integer({ required: true, minimum: 0 }), label: t.string() });
type ShelfSpec = { replicas: number; label?: string };

/** The kind as its first release had it: v1alpha1 only, stored as v1alpha1. */
export const firstRelease = new CustomResourceKind({
  group: '${GROUP}', kind: 'Shelf', plural: 'shelves', versions: ['v1alpha1'],
  description: 'A shelf.', spec: v1alpha1Spec, status: t.object({}),
});

export const shelfKind = new CustomResourceKind({
  group: '${GROUP}', kind: 'Shelf', plural: 'shelves', versions: ['v1alpha1', 'v1'],
  description: 'A shelf.', spec: v1Spec, status: t.object({}),
  conversions: {
    v1alpha1: spokeVersion<typeof v1alpha1Spec, ShelfSpec>({
      spec: v1alpha1Spec,
      toHub: ({ size }) => ({ replicas: size }),
      fromHub: ({ replicas }) => ({ size: replicas }),
      examples: [{ size: 2 }],
    }),
  },
});

export const shelfController = constructController({
  kind: shelfKind,
  render: (scope, shelf, { owner }) =>
    new ApiObject(scope, 'books', {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: shelf.metadata.name, namespace: shelf.metadata.namespace, ownerReferences: owner ? [owner as any] : undefined },
      data: { replicas: String(shelf.spec.replicas), label: shelf.spec.label ?? '' },
    }),
  examples: [{ replicas: 1 }, { replicas: 2, label: 'x' }],
});

/** What the new release synthesizes: CRD, RBAC, Deployment, webhook Service and Secret. */
export function synth(): any[] {
  const chart = new Chart(Testing.app(), 'shelf');
  new ConstructOperator(chart, 'shelf', { controller: shelfController, image: 'registry.example.com/shelf-operator', imageTag: '0.1.0' });
  return chart.toJson();
}

/** The same with other Operator options (e.g. certManager). */
export function synthWith(options: object): any[] {
  const chart = new Chart(Testing.app(), 'shelf');
  new ConstructOperator(chart, 'shelf', { controller: shelfController, image: 'registry.example.com/shelf-operator', imageTag: '0.1.0', ...options });
  return chart.toJson();
}

/** The first release's CRD. */
export function firstReleaseCrd(): any[] {
  const chart = Testing.chart();
  new CustomResourceDefinition(chart, 'crd', { kind: firstRelease });
  return Testing.synth(chart);
}

if (process.argv.includes('--serve')) {
  runOperator({ controllers: [shelfController], argv: process.argv.slice(2).filter((a) => a !== '--serve') })
    .then((code) => process.exit(code));
}
`;

let ns: string;
let userModule: string;
let port: number;
let reconciler: ReconcilerProcess | undefined;

/** Runs a function of the user's module in a child process (tsx), returning its JSON. */
function fromModule(expr: string): any {
  const script = `import(${JSON.stringify(userModule)}).then((i) => { const m = i.synth ? i : i.default; process.stdout.write(JSON.stringify(${expr})); })`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const shelf = (apiVersion: string, name: string, spec: object) =>
  JSON.stringify({ apiVersion: `${GROUP}/${apiVersion}`, kind: 'Shelf', metadata: { name }, spec });

beforeAll(async () => {
  userModule = controllersModule(KIND_SOURCE);
  ns = createTestNamespace('conversion');
  port = await freePort();
  // The first release: its CRD (v1alpha1 only), and three Shelves stored as v1alpha1.
  const first = fromModule('m.firstReleaseCrd()');
  kubectl(['delete', 'crd', CRD, '--ignore-not-found', '--wait']);
  kubectlOk(['apply', '--server-side', '-f', '-'], { input: first.map((o: object) => JSON.stringify(o)).join('\n') });
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', `crd/${CRD}`]);
  for (const n of [1, 2, 3])
    kubectlOk(['create', '-n', ns, '-f', '-'], { input: shelf('v1alpha1', `s${n}`, { size: n }) });
}, 120_000);

afterAll(async () => {
  await reconciler?.stop();
  kubectl(['delete', 'crd', CRD, '--ignore-not-found', '--wait=false']);
});

describe('a kind whose versions differ, converted by its reconciler', () => {
  let before: Record<string, string>;

  test('the new release installs: the CRD as synthesized, its conversion on loopback; the objects still read', async () => {
    expect(getJson(['get', 'crd', CRD]).status.storedVersions).toEqual(['v1alpha1']);
    before = Object.fromEntries(
      getJson(['get', `shelves.v1alpha1.${GROUP}`, '-n', ns]).items.map((o: any) => [
        o.metadata.name,
        o.metadata.resourceVersion,
      ]),
    );
    const objects = fromModule('m.synth()') as any[];
    const crd = objects.find((o) => o.kind === 'CustomResourceDefinition');
    expect(crd.spec.conversion.webhook.clientConfig.service).toMatchObject({ name: 'shelf-webhook', path: '/convert' });
    crd.spec.conversion.webhook.clientConfig = { url: `https://127.0.0.1:${port}/convert` };
    kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: JSON.stringify(crd) });
    kubectlOk(['create', 'secret', 'generic', SECRET, '-n', ns]);
    reconciler = await ReconcilerProcess.start({
      kubeconfig: testKubeconfig(),
      entry: userModule,
      args: [
        '--serve',
        `--webhook-bind-address=127.0.0.1:${port}`,
        `--webhook-cert-secret=${SECRET}`,
        '--webhook-cert-hosts=127.0.0.1',
      ],
      name: 'shelf-conversion',
      env: { POD_NAMESPACE: ns },
    });
    // The CRD now trusts the reconciler's certificate, kept in the Secret.
    const secret = getJson(['get', 'secret', SECRET, '-n', ns]);
    const bundle = getJson(['get', 'crd', CRD]).spec.conversion.webhook.clientConfig.caBundle;
    expect(Buffer.from(bundle, 'base64').toString()).toContain(
      Buffer.from(secret.data['tls.crt'], 'base64').toString().trim(),
    );
    expect(getJson(['get', `shelves.v1.${GROUP}`, 's2', '-n', ns]).spec).toEqual({ replicas: 2 });
  });

  test('storage migration: each object is rewritten once in v1, and storedVersions is trimmed to v1', async () => {
    await eventually(
      'storedVersions [v1]',
      () => {
        const stored = getJson(['get', 'crd', CRD]).status.storedVersions;
        return stored.length === 1 && stored[0] === 'v1' ? stored : undefined;
      },
      60_000,
    );
    const after = getJson(['get', `shelves.v1.${GROUP}`, '-n', ns]).items;
    for (const o of after) expect(o.metadata.resourceVersion).not.toBe(before[o.metadata.name]);
    await eventually(
      'the migration logged as done, 3 objects rewritten',
      () => reconciler!.logs.find((l) => l.includes('"storage migration done"') && l.includes('"rewritten":3')),
      10_000,
    );
    // In etcd itself, when the suite has etcdctl: stored as v1.
    const etcdctl = process.env.OPKIT_TEST_ETCDCTL;
    const endpoint = process.env.OPKIT_TEST_ETCD_URL;
    if (etcdctl && endpoint) {
      const raw = spawnSync(
        etcdctl,
        [`--endpoints=${endpoint}`, 'get', `/registry/${GROUP}/shelves/${ns}/s1`, '--print-value-only'],
        {
          encoding: 'utf8',
        },
      );
      expect(raw.stdout).toContain(`"apiVersion":"${GROUP}/v1"`);
    }
  });

  test('written as v1alpha1, read as v1, and back; a field v1alpha1 lacks survives a v1alpha1 edit', () => {
    kubectlOk(['create', '-n', ns, '-f', '-'], { input: shelf('v1alpha1', 'old', { size: 4 }) });
    expect(getJson(['get', `shelves.v1.${GROUP}`, 'old', '-n', ns]).spec).toEqual({ replicas: 4 });
    kubectlOk(['create', '-n', ns, '-f', '-'], { input: shelf('v1', 'new', { replicas: 5, label: 'fiction' }) });
    const asOld = getJson(['get', `shelves.v1alpha1.${GROUP}`, 'new', '-n', ns]);
    expect(asOld.spec).toEqual({ size: 5 });
    expect(JSON.parse(asOld.metadata.annotations[`${GROUP}/conversion-data`])).toEqual({
      replicas: 5,
      label: 'fiction',
    });
    // A v1alpha1 client changes the size; the label it cannot see is kept.
    kubectlOk(['patch', `shelves.v1alpha1.${GROUP}`, 'new', '-n', ns, '--type=merge', '-p', '{"spec":{"size":6}}']);
    const asNew = getJson(['get', `shelves.v1.${GROUP}`, 'new', '-n', ns]);
    expect(asNew.spec).toEqual({ replicas: 6, label: 'fiction' });
    expect(asNew.metadata.annotations?.[`${GROUP}/conversion-data`]).toBeUndefined();
  });

  test('the reconciler reconciles in the storage version, whatever version the user wrote', async () => {
    const cm = await eventually(
      'the ConfigMap of "new"',
      () => {
        const o = getJsonIfExists(['get', 'configmap', 'new', '-n', ns]);
        return o?.data?.replicas === '6' ? o : undefined;
      },
      60_000,
    );
    expect(cm.data).toEqual({ replicas: '6', label: 'fiction' });
  });
});

describe("a certificate from cert-manager (the Operator's certManager option)", () => {
  test('the reconciler serves /convert with the mounted certificate and leaves the caBundle to cainjector', async () => {
    await reconciler?.stop();
    reconciler = undefined;
    // What cert-manager writes into the Secret the Deployment mounts (a self-signed issuer's
    // certificate is its own CA), and what cainjector then writes into the CRD.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-cert-manager-'));
    const issued = selfSignedCertificate('127.0.0.1', ['127.0.0.1']);
    fs.writeFileSync(path.join(dir, 'tls.crt'), issued.cert);
    fs.writeFileSync(path.join(dir, 'tls.key'), issued.key);
    fs.writeFileSync(path.join(dir, 'ca.crt'), issued.cert);
    const injected = Buffer.from(issued.cert).toString('base64');
    const mountedPort = await freePort();
    const crd = getJson(['get', 'crd', CRD]);
    crd.spec.conversion.webhook.clientConfig = { url: `https://127.0.0.1:${mountedPort}/convert`, caBundle: injected };
    delete crd.metadata.managedFields;
    kubectlOk(['replace', '-f', '-'], { input: JSON.stringify(crd) });
    const synthesized = fromModule('m.synthWith({ certManager: {} })') as any[];
    const args: string[] = synthesized.find((o) => o.kind === 'Deployment').spec.template.spec.containers[0].args;
    const mountPath = args.find((a) => a.startsWith('--webhook-cert-path='))!.split('=')[1]!;
    reconciler = await ReconcilerProcess.start({
      kubeconfig: testKubeconfig(),
      entry: userModule,
      // The synthesized flag, with the directory the Secret would be mounted at here.
      args: ['--serve', `--webhook-bind-address=127.0.0.1:${mountedPort}`, `--webhook-cert-path=${dir}`],
      name: 'shelf-cert-manager',
      env: { POD_NAMESPACE: ns },
    });
    expect(mountPath).toBe('/tmp/k8s-webhook-server/serving-certs');
    kubectlOk(['create', '-n', ns, '-f', '-'], { input: shelf('v1alpha1', 'mounted', { size: 7 }) });
    expect(getJson(['get', `shelves.v1.${GROUP}`, 'mounted', '-n', ns]).spec).toEqual({ replicas: 7 });
    expect(getJson(['get', `shelves.v1alpha1.${GROUP}`, 's3', '-n', ns]).spec).toEqual({ size: 3 });
    // The reconciler wrote no certificate of its own into the CRD.
    expect(getJson(['get', 'crd', CRD]).spec.conversion.webhook.clientConfig.caBundle).toBe(injected);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
