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

/** tsconfig.json, jest.config.js, jest.e2e.config.js, cdk8s.yaml and .gitignore: files/ holds each as it is written. */
export function projectConfigFiles(): [string, string][] {
  return [
    ['tsconfig.json', sampleFile('tsconfig.project.json')],
    ['jest.config.js', sampleFile('jest.config.js')],
    ['jest.e2e.config.js', sampleFile('jest.e2e.config.js')],
    ['cdk8s.yaml', sampleFile('cdk8s.yaml')],
    // Kept without its dot, so that it is not this repository's own.
    ['.gitignore', sampleFile('gitignore')],
  ];
}

/** The integration tier's one control plane: test/control-plane.setup.ts and its teardown, as files/ holds them. */
export function controlPlaneSetupFiles(): [string, string][] {
  return ['control-plane.setup.ts', 'control-plane.teardown.ts'].map((f) => [
    path.join('test', f),
    sampleFile(path.join('test', f)),
  ]);
}

/**
 * The operator as a cluster runs it, as kubebuilder's test/e2e runs it on kind: its image built
 * by `npm run image`'s command, loaded into a real node, its manifests applied with kubectl. A
 * real file (files/operator.e2e.test.ts.template), its one blank the image's name.
 */
export function operatorE2eTestTs(p: ProjectNames): string {
  const template = fs.readFileSync(path.join(__dirname, 'files', 'operator.e2e.test.ts.template'), 'utf8');
  return template.replace('{{image}}', JSON.stringify(`${p.image}:0.1.0`));
}

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

/**
 * test/upgrade.integration.test.ts: the released operator upgraded to this one, on a control plane
 * of its own (files/test/upgrade.integration.test.ts, for the sample kind).
 */
export function upgradeTestTs(k: KindNames): string {
  return fromSample(path.join('test', 'upgrade.integration.test.ts'), k);
}

/**
 * test/conformance.integration.test.ts: every kind of controllers.ts through the kit's
 * conformance checks, its samples the examples, on a control plane of its own — a kind that
 * `create kind` adds included (files/test/conformance.integration.test.ts, names none).
 */
export function conformanceTestTs(): string {
  return sampleFile(path.join('test', 'conformance.integration.test.ts'));
}

/** README.md: files/README.md.template with the project's and the kind's names in its blanks. */
export function readme(p: ProjectNames, k: KindNames): string {
  const blanks: Record<string, string> = { name: p.name, ...k };
  return fs
    .readFileSync(path.join(__dirname, 'files', 'README.md.template'), 'utf8')
    .replace(/\{\{(\w+)\}\}/g, (blank, name: string) => blanks[name] ?? blank);
}
