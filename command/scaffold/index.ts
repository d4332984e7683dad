/**
 * `cdk8s-operator-kit init` and `create kind`: a new operator project, and a kind added to one.
 * Offline: the files are written from templates, and package.json names the versions of the
 * packages the kit itself is built and tested with (npm installs them).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DNS_LABEL } from '../../constructs/core/formats';
import {
  controlPlaneSetupFiles,
  projectConfigFiles,
  appTs,
  controllerEntries,
  controllersTs,
  kindIntegrationTestTs,
  operatorE2eTestTs,
  releasedControllersTs,
  upgradeTestTs,
  conformanceTestTs,
  kindNames,
  type KindNames,
  kindTs,
  kindUnitTestTs,
  mainTs,
  MARKERS,
  packageJson,
  type PackageVersions,
  readme,
  reconcilerTs,
} from './templates';
import { isJsonObject, jsonAt, parseJson, stringAt } from '../../constructs/contract/json';

/** A name or path the user gave that cannot be used; the message says which and why. */
export class ScaffoldError extends Error {}

const KIND = /^[A-Z][A-Za-z0-9]*$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const PACKAGE_NAME = /^[a-z0-9][-a-z0-9._]*$/;

export interface KindOptions {
  /** e.g. `WebSite` */
  readonly kind: string;
  /** e.g. `sites.example.com` */
  readonly group: string;
  /** @default 'v1alpha1' */
  readonly version?: string;
}

export interface InitOptions extends Partial<KindOptions> {
  /** @default the directory's name */
  readonly name?: string;
  /** The kit in package.json. @default `^<this kit's version>` */
  readonly kitSpec?: string;
  /** @default `registry.example.com/<name>` */
  readonly image?: string;
  /** The namespaces the operator serves (`watchNamespaces`). @default every namespace */
  readonly watchNamespaces?: readonly string[];
}

/** The kit's own package.json (shipped in the package). */
function kitPackage(): { version: string; devDependencies: Record<string, string> } {
  for (const candidate of ['../../package.json', '../../../package.json']) {
    const file = path.join(__dirname, candidate);
    if (fs.existsSync(file)) {
      const pkg = parseJson(fs.readFileSync(file, 'utf8'));
      const version = stringAt(pkg, 'version');
      if (stringAt(pkg, 'name') !== 'cdk8s-operator-kit' || version === undefined) continue;
      const devDependencies = jsonAt(pkg, 'devDependencies');
      return {
        version,
        devDependencies: Object.fromEntries(
          Object.keys(isJsonObject(devDependencies) ? devDependencies : {}).flatMap((name) => {
            const range = stringAt(devDependencies, name);
            return range === undefined ? [] : [[name, range]];
          }),
        ),
      };
    }
  }
  throw new Error('cannot find the package.json of cdk8s-operator-kit');
}

/** The versions the kit is tested with, for the packages a project needs. */
function packageVersions(dev: Record<string, string>): PackageVersions {
  const pick = (names: string[]) =>
    Object.fromEntries(
      names.map((n) => {
        const v = dev[n];
        if (!v) throw new Error(`the kit's package.json names no version of ${n}`);
        return [n, v];
      }),
    );
  return {
    dependencies: pick(['cdk8s', 'cdk8s-plus-27', 'constructs', 'pino', 'prom-client']),
    devDependencies: pick(['@types/jest', '@types/node', 'esbuild', 'jest', 'ts-jest', 'tsx', 'typescript']),
  };
}

/** `website-operator` → `Website`; `Website` when nothing usable is left. */
function kindFromName(name: string): string {
  const words = name
    .replace(/-operator$/, '')
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean);
  const kind = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  return KIND.test(kind) ? kind : 'Website';
}

function checkKind(o: KindOptions): KindNames {
  const version = o.version ?? 'v1alpha1';
  if (!KIND.test(o.kind))
    throw new ScaffoldError(
      `kind ${JSON.stringify(o.kind)}: a kind is UpperCamelCase letters and digits, e.g. WebSite`,
    );
  if (!GROUP.test(o.group))
    throw new ScaffoldError(
      `--group ${JSON.stringify(o.group)}: an API group is a lowercase DNS name with a dot, e.g. sites.example.com`,
    );
  if (!VERSION.test(version))
    throw new ScaffoldError(`--version ${JSON.stringify(version)}: a version is like v1, v1beta1 or v1alpha1`);
  return kindNames(o.kind, o.group, version);
}

const NAMESPACE = new RegExp(`^${DNS_LABEL}$`);

/** The namespaces an operator is to serve: names of namespaces, each once. */
function checkNamespaces(namespaces: readonly string[] | undefined): readonly string[] | undefined {
  if (!namespaces) return undefined;
  const bad = namespaces.find((n) => !NAMESPACE.test(n));
  if (bad !== undefined)
    throw new ScaffoldError(`--namespaces: ${JSON.stringify(bad)} is not a namespace name (lowercase, e.g. team-a)`);
  if (namespaces.length === 0) throw new ScaffoldError('--namespaces: name at least one namespace, or leave it out');
  return [...new Set(namespaces)];
}

/** Writes the files, none of which may exist yet (checked before anything is written). */
function writeAll(dir: string, files: readonly (readonly [string, string])[]): string[] {
  const existing = files.map(([f]) => f).filter((f) => fs.existsSync(path.join(dir, f)));
  if (existing.length) throw new ScaffoldError(`${existing.join(', ')} already exist in ${dir}; nothing was written`);
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return files.map(([f]) => f);
}

/** Writes a new project into `dir` (which must hold no package.json); returns the files written. */
export function initProject(dir: string, o: InitOptions = {}): string[] {
  if (fs.existsSync(path.join(dir, 'package.json')))
    throw new ScaffoldError(
      `${dir} already has a package.json; init makes a new project (to add a kind to this one: create kind)`,
    );
  const name = o.name ?? path.basename(path.resolve(dir)).toLowerCase();
  if (!PACKAGE_NAME.test(name))
    throw new ScaffoldError(`--name ${JSON.stringify(name)}: a package name is lowercase, e.g. website-operator`);
  const kit = kitPackage();
  const kind = o.kind ?? kindFromName(name);
  const k = checkKind({ kind, group: o.group ?? `${kind.toLowerCase()}.example.com`, version: o.version });
  const project = {
    name,
    kitSpec: o.kitSpec ?? `^${kit.version}`,
    image: o.image ?? `registry.example.com/${name}`,
    watchNamespaces: checkNamespaces(o.watchNamespaces),
  };
  const projectFiles: [string, string][] = [
    ['package.json', packageJson(project, packageVersions(kit.devDependencies))],
    ...projectConfigFiles(),
    ['main.ts', mainTs()],
    ['app.ts', appTs(project)],
    ['reconciler.ts', reconcilerTs()],
    // With the first kind in it: a project made by init passes its tests as it is.
    ['controllers.ts', controllersTs(k)],
    ...controlPlaneSetupFiles(),
    [path.join('test', 'released', 'controllers.ts'), releasedControllersTs()],
    [path.join('test', 'upgrade.integration.test.ts'), upgradeTestTs(k)],
    [path.join('test', 'conformance.integration.test.ts'), conformanceTestTs()],
    [path.join('test', 'e2e', 'operator.test.ts'), operatorE2eTestTs(project)],
    ['README.md', readme(project, k)],
  ];
  return writeAll(dir, [...projectFiles, ...kindModuleFiles(k)]);
}

/** Adds a kind to the project in `dir`: its module, tests, and its place in controllers.ts. */
export function createKind(dir: string, o: KindOptions): string[] {
  const k = checkKind(o);
  const controllersFile = path.join(dir, 'controllers.ts');
  if (!fs.existsSync(controllersFile))
    throw new ScaffoldError(`${dir} has no controllers.ts: run create kind in a project made by init`);
  // Checked before anything is written.
  const controllers = wireKind(fs.readFileSync(controllersFile, 'utf8'), k);
  const written = writeAll(dir, kindModuleFiles(k));
  fs.writeFileSync(controllersFile, controllers);
  return [...written, 'controllers.ts'];
}

function kindModuleFiles(k: KindNames): [string, string][] {
  return [
    [path.join('kinds', `${k.file}.ts`), kindTs(k)],
    [path.join('test', `${k.file}.test.ts`), kindUnitTestTs(k)],
    [path.join('test', `${k.file}.integration.test.ts`), kindIntegrationTestTs(k)],
  ];
}

/** controllers.ts with the kind's import, controller and sample added before their markers. */
/** The markers of controllers.ts, in the order they come in it. */
const MARKER_ORDER: readonly (keyof typeof MARKERS)[] = ['imports', 'controllers', 'samples'];

function wireKind(controllers: string, k: KindNames): string {
  const entries = controllerEntries(k);
  if (controllers.includes(entries.imports)) throw new ScaffoldError(`controllers.ts already has the kind ${k.kind}`);
  for (const key of MARKER_ORDER) {
    const marker = MARKERS[key];
    const at = controllers.indexOf(marker);
    if (at < 0)
      throw new ScaffoldError(`controllers.ts has lost its line ${JSON.stringify(marker)}: put it back where it was`);
    const indent = controllers.slice(controllers.lastIndexOf('\n', at) + 1, at);
    controllers = `${controllers.slice(0, at)}${entries[key]}\n${indent}${controllers.slice(at)}`;
  }
  return controllers;
}
