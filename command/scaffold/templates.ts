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
  return sampleFile('main.ts');
}

/** The operator's scope in app.ts: the namespaces given to init, or how to name some. */
function watchNamespacesLines(namespaces: readonly string[] | undefined): string | undefined {
  if (!namespaces?.length) return undefined;
  return `    // Its rights are a Role in each of these namespaces, and it watches them alone.
    watchNamespaces: [${namespaces.map((n) => `'${n}'`).join(', ')}],`;
}

/** The sample app.ts with the project's name and image; scoped to its namespaces if it has some. */
export function appTs(p: ProjectNames): string {
  const sample = sampleFile('app.ts')
    .replace(quoted(SAMPLE_PROJECT.image), quoted(p.image))
    .replace(quoted(SAMPLE_PROJECT.name), quoted(p.name));
  const scoped = watchNamespacesLines(p.watchNamespaces);
  return scoped ? sample.replace(/^ {4}\/\/ Every namespace\..*\n {4}\/\/ watchNamespaces: .*$/m, scoped) : sample;
}

export function reconcilerTs(): string {
  return sampleFile('reconciler.ts');
}

/** Where \`create kind\` adds a kind to controllers.ts. */
export const MARKERS = {
  imports: '// cdk8s-operator-kit: imports',
  controllers: '// cdk8s-operator-kit: controllers',
  samples: '// cdk8s-operator-kit: samples',
} as const;

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

/** The project the files in files/ are written for: app.ts names its operator and image so. */
const SAMPLE_PROJECT = { name: 'website-operator', image: 'registry.example.com/website-operator' };

/** A file of files/ as it is (the package holds its TypeScript as `<file>.template`). */
function sampleFile(file: string): string {
  const source = path.join(__dirname, 'files', file);
  return fs.readFileSync(fs.existsSync(source) ? source : `${source}.template`, 'utf8');
}

/** A sample file with `k`'s names for the sample kind's. */
function fromSample(file: string, k: KindNames): string {
  const names: readonly (keyof KindNames)[] = ['kind', 'camel', 'file', 'group', 'version'];
  return names.reduce((text, name) => text.replaceAll(SAMPLE_KIND[name], k[name]), sampleFile(file));
}

/** `text` as a single-quoted TypeScript string, as prettier writes them. */
function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** controllers.ts with the kind in the sample's place: what init writes, the first kind wired in. */
export function controllersTs(k: KindNames): string {
  return fromSample('controllers.ts', k);
}

export function kindTs(k: KindNames): string {
  return fromSample(path.join('kinds', 'web-site.ts'), k);
}

export function kindUnitTestTs(k: KindNames): string {
  return fromSample(path.join('test', 'web-site.test.ts'), k);
}

export function kindIntegrationTestTs(k: KindNames): string {
  return fromSample(path.join('test', 'web-site.integration.test.ts'), k);
}

/** test/released/controllers.ts: the released version's controllers, the code at hand until a release. */
export function releasedControllersTs(): string {
  return sampleFile(path.join('test', 'released', 'controllers.ts'));
}

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
