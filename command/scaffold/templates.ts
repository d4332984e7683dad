/**
 * The files `cdk8s-operator-kit init` and `create kind` write: a project whose operator runs
 * and whose tests pass without an edit, as kubebuilder's `init` and `create api` give one.
 * Each template is a function of the names it needs; the longer ones are real files (files/).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The names one kind is written with, e.g. `WebSite` in `sites.example.com/v1alpha1`. */
export interface KindNames {
  /** `WebSite` */
  readonly kind: string;
  /** `sites.example.com` */
  readonly group: string;
  /** `v1alpha1` */
  readonly version: string;
  /** `webSite`: the prefix of its exports. */
  readonly camel: string;
  /** `web-site`: its file names. */
  readonly file: string;
  /** `website`: its controller's name and the kind's singular. */
  readonly lower: string;
}

export function kindNames(kind: string, group: string, version: string): KindNames {
  return {
    kind,
    group,
    version,
    camel: kind.charAt(0).toLowerCase() + kind.slice(1),
    file: kind.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase(),
    lower: kind.toLowerCase(),
  };
}

/** The project's own files, written once by `init`. */
export interface ProjectNames {
  /** The package name, e.g. `website-operator`. */
  readonly name: string;
  /** The kit's version specifier in package.json, e.g. `^0.1.0`. */
  readonly kitSpec: string;
  /** The image the operator's Deployment runs, e.g. `registry.example.com/website-operator`. */
  readonly image: string;
  /** The namespaces the operator serves; none: every namespace. */
  readonly watchNamespaces?: readonly string[];
}

/** Versions of the packages a project needs, the ones the kit itself is built and tested with. */
export interface PackageVersions {
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
}

export function packageJson(p: ProjectNames, versions: PackageVersions): string {
  return `${JSON.stringify(
    {
      name: p.name,
      version: '0.1.0',
      private: true,
      description: `A Kubernetes operator made with cdk8s-operator-kit.`,
      scripts: {
        synth: 'tsx main.ts',
        test: 'jest',
        'test:e2e': 'jest -c jest.e2e.config.js',
        cluster: 'cdk8s-operator-kit cluster',
        operator: 'cdk8s-operator-kit run --entry reconciler.ts',
        image: `cdk8s-operator-kit image --entry reconciler.ts --tag ${p.image}:0.1.0`,
      },
      dependencies: { ...versions.dependencies, 'cdk8s-operator-kit': p.kitSpec },
      devDependencies: versions.devDependencies,
    },
    null,
    2,
  )}\n`;
}

export const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'node16',
      moduleResolution: 'node16',
      strict: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      isolatedModules: true,
      types: ['node', 'jest'],
    },
    include: ['**/*.ts'],
    exclude: ['node_modules', 'dist', 'build'],
  },
  null,
  2,
)}\n`;

export const JEST_CONFIG = `/** Unit tests run in a moment; integration tests (*.integration.test.ts) share one control plane. */
module.exports = {
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/control-plane.setup.ts',
  globalTeardown: '<rootDir>/test/control-plane.teardown.ts',
  transform: { '^.+\\\\.ts$': 'ts-jest' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // The e2e tests run the operator on a real node: npm run test:e2e.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
  testTimeout: 120000,
};
`;

export const E2E_JEST_CONFIG = `/** npm run test:e2e: the operator's image on a real node (test/e2e), one file at a time. */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': 'ts-jest' },
  testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  maxWorkers: 1,
  testTimeout: 300000,
};
`;

/**
 * The operator as a cluster runs it, as kubebuilder's test/e2e runs it on kind: its image built
 * by `npm run image`'s command, loaded into a real node, its manifests applied with kubectl. A
 * real file (files/operator.e2e.test.ts.template), its one blank the image's name.
 */
export function operatorE2eTestTs(p: ProjectNames): string {
  const template = fs.readFileSync(path.join(__dirname, 'files', 'operator.e2e.test.ts.template'), 'utf8');
  return template.replace('{{image}}', JSON.stringify(`${p.image}:0.1.0`));
}

export const CONTROL_PLANE_SETUP = `/**
 * One control plane for every integration test file (each one's startControlPlane() then uses
 * it through OPKIT_KUBECONFIG), started once per run. An OPKIT_KUBECONFIG already set (a cluster
 * of your own, e.g. from npm run cluster) is used as it is.
 */
import { startControlPlane } from 'cdk8s-operator-kit/testing';

export default async function setup(): Promise<void> {
  if (process.env.OPKIT_KUBECONFIG) return;
  const controlPlane = await startControlPlane();
  process.env.OPKIT_KUBECONFIG = controlPlane.kubeconfig;
  (globalThis as { controlPlane?: { stop(): Promise<void> } }).controlPlane = controlPlane;
}
`;

export const CONTROL_PLANE_TEARDOWN = `export default async function teardown(): Promise<void> {
  await (globalThis as { controlPlane?: { stop(): Promise<void> } }).controlPlane?.stop();
}
`;

export const CDK8S_YAML = `language: typescript
app: npx tsx main.ts
`;

export const GITIGNORE = `node_modules/
build/
dist/
`;

export function mainTs(): string {
  return `import { App } from 'cdk8s';
import { operatorApp } from './app';

// kubectl apply -f dist/ installs the operator: the CRDs and cluster-wide rights first
// (0000-cluster), then the reconciler, then the samples.
const app = new App({ outdir: 'dist' });
operatorApp(app);
app.synth();
`;
}

/** The operator's scope in app.ts: the namespaces given to init, or how to name some. */
function watchNamespacesLine(namespaces: readonly string[] | undefined): string {
  if (namespaces?.length) {
    return `    // Its rights are a Role in each of these namespaces, and it watches them alone.
    watchNamespaces: [${namespaces.map((n) => `'${n}'`).join(', ')}],`;
  }
  return `    // Every namespace. To serve only some (a Role in each, no rights elsewhere):
    // watchNamespaces: ['team-a', 'team-b'],`;
}

export function appTs(p: ProjectNames): string {
  return `import { App, Chart } from 'cdk8s';
import { Operator } from 'cdk8s-operator-kit';
import { controllers, samples } from './controllers';

/** The operator: its cluster-scoped objects (CRDs, ClusterRoles) in a chart applied first, then the rest. */
export function operatorApp(app: App) {
  const cluster = new Chart(app, 'cluster');
  const chart = new Chart(app, 'operator');
  const operator = new Operator(chart, ${JSON.stringify(p.name)}, {
    clusterScope: cluster,
    controllers,
    // Built by \`npm run image\`; push it where your cluster pulls from.
    image: ${JSON.stringify(p.image)},
    imageTag: '0.1.0',
${watchNamespacesLine(p.watchNamespaces)}
  });
  const sampleChart = new Chart(app, 'samples');
  for (const addSample of samples) addSample(sampleChart);
  return { cluster, chart, operator, samples: sampleChart };
}
`;
}

export function reconcilerTs(): string {
  return `/** The reconciler: the operator's image runs this (\`npm run image\`), \`npm run operator\` runs it here. */
import { runOperator } from 'cdk8s-operator-kit/reconciler';
import { controllers } from './controllers';

runOperator({ controllers }).then((code) => process.exit(code));
`;
}

/** Where \`create kind\` adds a kind to controllers.ts. */
export const MARKERS = {
  imports: '// cdk8s-operator-kit: imports',
  controllers: '// cdk8s-operator-kit: controllers',
  samples: '// cdk8s-operator-kit: samples',
} as const;

export function controllersTs(): string {
  return `/** The operator's controllers, one per kind; \`cdk8s-operator-kit create kind\` adds to these lists. */
import type { Construct } from 'constructs';
${MARKERS.imports}

export const controllers = [
  ${MARKERS.controllers}
];

/** One sample resource per kind, written to dist/ beside the operator. */
export const samples: ((scope: Construct) => void)[] = [
  ${MARKERS.samples}
];
`;
}

/** The lines \`create kind\` inserts before each marker. */
export function controllerEntries(k: KindNames): Record<keyof typeof MARKERS, string> {
  return {
    imports: `import { add${k.kind}Sample, ${k.camel}Controller } from './kinds/${k.file}';`,
    controllers: `${k.camel}Controller,`,
    samples: `add${k.kind}Sample,`,
  };
}

/**
 * The names the sample kind in files/ is written with: `init` and `create kind` copy its files
 * (kinds/web-site.ts, test/web-site.test.ts) with the new kind's names in their place. They are
 * real files, so formatted, linted and type-checked (`tsc -p command/scaffold/files`).
 */
const SAMPLE_KIND = kindNames('WebSite', 'sites.example.com', 'v1alpha1');

/** A sample file with `k`'s names for the sample's (the package holds it as `<file>.template`). */
function fromSample(file: string, k: KindNames): string {
  const source = path.join(__dirname, 'files', file);
  const sample = fs.readFileSync(fs.existsSync(source) ? source : `${source}.template`, 'utf8');
  const names: readonly (keyof KindNames)[] = ['kind', 'camel', 'file', 'group', 'version'];
  return names.reduce((text, name) => text.replaceAll(SAMPLE_KIND[name], k[name]), sample);
}

export function kindTs(k: KindNames): string {
  return fromSample(path.join('kinds', 'web-site.ts'), k);
}

export function kindUnitTestTs(k: KindNames): string {
  return fromSample(path.join('test', 'web-site.test.ts'), k);
}

// eslint-disable-next-line max-lines-per-function -- one template literal: the file it writes, read top to bottom
export function kindIntegrationTestTs(k: KindNames): string {
  return `/**
 * The ${k.kind} operator against a real API server: the kit's control plane (etcd, kube-apiserver,
 * controllers and simulated nodes, built and cached on first use; or the cluster in
 * OPKIT_KUBECONFIG), the CRD as synthesized, and the reconciler run as \`npm run operator\` runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Testing } from 'cdk8s';
import { BuiltinTypes, customResourceType, type KubeObject, type ResourceType } from 'cdk8s-operator-kit';
import { HttpKubeClient, isNotFound, loadKubeConfig } from 'cdk8s-operator-kit/reconciler';
import { type ControlPlane, freePort, startControlPlane } from 'cdk8s-operator-kit/testing';
import { operatorApp } from '../app';
import { type ${k.kind}, ${k.camel}Kind } from '../kinds/${k.file}';

let controlPlane: ControlPlane;
let client: HttpKubeClient;
let reconciler: ChildProcess | undefined;
const namespace = \`${k.file}-test-\${Date.now().toString(36)}\`;
/** The reconciler's last log lines: a failed wait shows them, since the cause is usually there. */
const reconcilerLog: string[] = [];

function lastLogLines(): string {
  return reconcilerLog.length ? \`\\nthe reconciler's last log lines:\\n\${reconcilerLog.join('\\n')}\` : '';
}

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (reconciler && reconciler.exitCode !== null)
      throw new Error(\`the reconciler exited (\${reconciler.exitCode}) while waiting for \${what}\${lastLogLines()}\`);
    if (Date.now() > deadline) throw new Error(\`timed out waiting for \${what}\${lastLogLines()}\`);
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
    await eventually(\`\${crd.metadata.name} established\`, async () => {
      const got = await client.get(BuiltinTypes.CustomResourceDefinition, crd.metadata.name);
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    });
  }
  await client.create(BuiltinTypes.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  // Every endpoint on a port free now (never a fixed one: \`npm run operator\` may be running
  // beside this test); webhooks on loopback when the API server is on this machine.
  const health = await freePort();
  const onThisMachine = ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(controlPlane.server).hostname);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'reconciler.ts',
      \`--kubeconfig=\${controlPlane.kubeconfig}\`,
      \`--health-probe-bind-address=127.0.0.1:\${health}\`,
      '--metrics-bind-address=0',
      ...(onThisMachine ? ['--webhook-loopback'] : []),
      \`--namespace=\${namespace}\`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  reconciler = child;
  // Its log stays out of the test report but is kept, the last 40 lines.
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (chunk: Buffer) => {
      reconcilerLog.push(...chunk.toString('utf8').split('\\n').filter(Boolean));
      reconcilerLog.splice(0, Math.max(0, reconcilerLog.length - 40));
    });
  await eventually('the reconciler ready', async () =>
    (await fetch(\`http://127.0.0.1:\${health}/readyz\`)).ok ? true : undefined,
  );
}, 900_000);

afterAll(async () => {
  const child = reconciler;
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await client?.delete(BuiltinTypes.Namespace, namespace).catch(() => undefined);
  client?.close();
  await controlPlane?.stop();
});

test('a ${k.kind} becomes its Deployment, owned by it, and follows spec.replicas', async () => {
  const type = customResourceType<${k.kind}>(${k.camel}Kind);
  await client.create(type, {
    apiVersion: ${k.camel}Kind.apiVersion,
    kind: '${k.kind}',
    metadata: { name: 'demo', namespace },
    spec: { replicas: 2 },
  }, namespace);
  const deployment = await eventually('the Deployment', () =>
    client.get(BuiltinTypes.Deployment, 'demo', namespace),
  );
  expect(deployment.spec?.replicas).toBe(2);
  expect(deployment.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: '${k.kind}', name: 'demo' })]);
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

test("two ${k.kind}s in one namespace: each one's Service sends traffic only to its own pods", async () => {
  const type = customResourceType<${k.kind}>(${k.camel}Kind);
  const names = ['one', 'two'];
  for (const name of names)
    await client.create(type, {
      apiVersion: ${k.camel}Kind.apiVersion,
      kind: '${k.kind}',
      metadata: { name, namespace },
      spec: { replicas: 1 },
    }, namespace);
  for (const name of names) {
    const { own, listed } = await eventually(\`\${name}'s pod behind its Service\`, async () => {
      const pods = await client.list(BuiltinTypes.Pod, namespace);
      const own = pods.items
        .filter((p) => p.metadata.ownerReferences?.some((o) => o.name.startsWith(\`\${name}-\`)))
        .map((p) => p.metadata.name)
        .sort();
      const slices = await client.list<EndpointSlice>(endpointSlices, namespace, {
        labelSelector: \`kubernetes.io/service-name=\${name}\`,
      });
      const listed = slices.items.flatMap((s) => s.endpoints ?? []).map((e) => e.targetRef?.name).sort();
      return own.length === 1 && listed.length === 1 ? { own, listed } : undefined;
    });
    expect(listed).toEqual(own);
  }
});

test('a spec the CRD refuses never reaches the reconciler: the API server names the field', async () => {
  const refused = await client
    .create(customResourceType(${k.camel}Kind), {
      apiVersion: ${k.camel}Kind.apiVersion,
      kind: '${k.kind}',
      metadata: { name: 'too-many', namespace },
      spec: { replicas: 99 },
    }, namespace)
    .then(
      () => undefined,
      (err: Error) => err,
    );
  expect(refused?.message).toMatch(/spec\\.replicas/);
  const missing = await client.get(BuiltinTypes.Deployment, 'too-many', namespace).catch((err: unknown) => err);
  expect(isNotFound(missing)).toBe(true);
});
`;
}

/** The released version's controllers, frozen for the upgrade test (the code at hand until a first release). */
export const RELEASED_CONTROLLERS = `/**
 * The controllers of the version running in your clusters, frozen. When you release, copy
 * controllers.ts and the kinds it imports here as they are (e.g. git show v1.0.0:kinds/x.ts), and
 * import them below: test/upgrade.integration.test.ts then proves that the next version upgrades
 * the released one as \`cdk8s-operator-kit plan\` says, losing nothing through conversion. Until
 * the first release this is the code at hand, and the upgrade must change nothing.
 */
export { controllers } from '../../controllers';
`;

export function upgradeTestTs(k: KindNames): string {
  return `/**
 * The released operator (test/released/) upgraded to this version, on a control plane of its own
 * (it installs the released CRDs): the old reconciler runs over resources, \`plan\` previews this
 * version before its CRD is applied, this version replaces it, and it must write exactly what the
 * plan said, lose nothing through conversion, and leave every resource in the storage version.
 */
import * as path from 'node:path';
import { type ControlPlane, startControlPlane, upgradeTest } from 'cdk8s-operator-kit/testing';
import { ${k.camel}Kind } from '../kinds/${k.file}';

let controlPlane: ControlPlane;

beforeAll(async () => {
  controlPlane = await startControlPlane({ audit: true, own: true, verbose: false });
}, 600_000);

afterAll(async () => {
  await controlPlane?.stop();
});

test('the released ${k.kind} operator upgrades to this version as planned, losing nothing', async () => {
  const report = await upgradeTest({
    controlPlane,
    kind: '${k.kind}',
    from: path.join(__dirname, 'released', 'controllers.ts'),
    to: path.join(__dirname, '..', 'controllers.ts'),
    // Resources in each version the released CRD serves.
    resources: [{ apiVersion: '${k.group}/${k.version}', kind: '${k.kind}', metadata: { name: 'upgraded' }, spec: { replicas: 1 } }],
  });
  expect(report.problems).toEqual([]);
  expect(report.storedVersions).toEqual([${k.camel}Kind.storageVersion]);
}, 600_000);
`;
}

export function readme(p: ProjectNames, k: KindNames): string {
  return `# ${p.name}

A Kubernetes operator made with [cdk8s-operator-kit](https://www.npmjs.com/package/cdk8s-operator-kit):
the \`${k.kind}\` kind (\`${k.group}/${k.version}\`), its CRD, least-privilege RBAC and the reconciler
Deployment, synthesized from TypeScript, and the reconciler that Deployment runs.

\`\`\`sh
npm install
npm test                 # unit tests, and an integration test against a real API server
npm run synth            # dist/: the CRDs and rights, the operator, a sample of each kind

# Try it on a local cluster (etcd, kube-apiserver and simulated nodes; fetched on first use):
npm run cluster          # prints: export KUBECONFIG=...  (leave it running)
# in another terminal, with that KUBECONFIG:
kubectl apply --server-side -f dist/0000-cluster.k8s.yaml
npm run operator         # the reconciler, here, out of cluster
kubectl apply -f dist/0002-samples.k8s.yaml
kubectl get ${k.lower} -A

npm run image            # the reconciler image, as an OCI archive (needs buildah and mmdebstrap)
npm run test:e2e         # that image as a Pod on a real node, the samples reconciled (Linux, root)
\`\`\`

- \`kinds/${k.file}.ts\`: the kind's schema, the construct a ${k.kind} becomes, its controller and sample.
  Change the spec and the construct: the CRD, RBAC and reconciler follow.
- \`controllers.ts\`: the operator's controllers; \`npx cdk8s-operator-kit create kind <Kind> --group
  <group> --version <version>\` adds another kind here, with its tests.
- \`app.ts\`, \`main.ts\`: the operator's charts. \`reconciler.ts\`: what its image runs.

How the kit works, and what a kind can declare (versions, admission hooks, finalizers, status):
the \`docs/\` folder of the package (\`node_modules/cdk8s-operator-kit/docs/writing-an-operator.md\`).
`;
}
