/**
 * `cdk8s-operator-kit render`: the children resources become, offline, through exactly the code
 * the reconciler runs (the declaration's render, with the owner reference the runtime gives),
 * from the resource as the API server would store it (the CRD's defaults applied, its schema
 * checked). Nothing is read from or written to a cluster.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { Children, CustomResourceObject, KubeObject, Pod, ResourceType } from '../constructs/contract';
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import type { ControllerDeclaration as RuntimeDeclaration } from '../constructs/contract';
import {
  assessChildren,
  ChildMap,
  childKey,
  declarationsIn,
  isKubeObject,
  type PersistentVolumeClaim,
  podWorkloads,
} from '../constructs/contract';
import { isNotFound } from '../operator/runtime/client';
import { conditionsOf } from '../constructs/contract/conditions';
import { isJsonObject } from '../constructs/contract/json';
import { withSummaryConditions } from '../constructs/contract/kstatus';
import { convertObject } from '../constructs/core/conversion';
import { withSchemaDefaults } from '../constructs/core/defaults';
import { KIT_CONTROLLERS } from '../constructs/kit-controllers';
import { bundleReconciler } from './image/bundle';
import { NotInstalledError, RenderError } from './errors';
import { type ClusterCrds, getAsNewCode } from './served-version';
import { externalFactsUnknown, renderChildrenWithWaits } from '../operator/runtime/children';

export { RenderError };

/** The uid an offline resource's children name as their owner's, when it has none. */
export const OFFLINE_UID = '00000000-0000-0000-0000-000000000000';

/**
 * With `status`: also the status the kind's status function computes, after the children, from
 * the `observed` objects (e.g. children and pods as a cluster has them, from `kubectl get -o
 * yaml`) — or, without them, from the rendered children as if just applied.
 */
export interface RenderOptions {
  readonly status?: boolean;
  readonly observed?: readonly KubeObject[];
}

/** The children of each resource in the files, as YAML documents. */
export function renderResources(
  files: readonly string[],
  controllers: readonly ControllerDeclaration[],
  options: RenderOptions = {},
): string {
  const resources = files.flatMap((file) =>
    readResources(file).map((resource) => {
      const where = `${file}: ${resource.kind ?? '(no kind)'} ${resource.metadata.name ?? '(no name)'}`;
      return { where, ...checked(resource, controllers, where) };
    }),
  );
  return renderDocuments(resources, options);
}

/** A resource to render, as stored, with its declaration and where it came from. */
export interface ResourceToRender {
  readonly where: string;
  readonly decl: ControllerDeclaration;
  readonly stored: CustomResourceObject;
  /** Its children as a cluster has them, for the facts of an external step (see `observeExternal`). @default none */
  readonly children?: Children;
}

/** The children (and, with `status`, the status) of each resource, as YAML documents. */
export function renderDocuments(resources: readonly ResourceToRender[], options: RenderOptions = {}): string {
  const out: string[] = [];
  for (const { where, decl, stored, children: live } of resources) {
    const children = renderChildrenWithWaits(decl, stored, live).objects;
    const unknown = externalFactsUnknown(decl);
    out.push(
      `# ${where}: ${children.length} children\n`,
      ...(unknown ? [`# ${unknown}\n`] : []),
      ...children.map((c) => stringify(c)),
    );
    if (options.status) {
      const status = statusOf(decl, stored, children, options.observed ?? []);
      out.push(`# ${where}: its status\n`, stringify({ status: status ?? null }));
    }
  }
  return out.map((d, i) => (i > 0 && !d.startsWith('#') ? `---\n${d}` : d)).join('');
}

/** The status function's answer for what was observed (an observed child stands for a rendered one). */
function statusOf(
  decl: ControllerDeclaration,
  resource: CustomResourceObject,
  rendered: readonly KubeObject[],
  observed: readonly KubeObject[],
): unknown {
  if (!decl.status) return undefined;
  const children = observedChildren(decl, rendered, observed);
  const namespace = resource.metadata.namespace;
  const pods = observed.filter((o): o is Pod => o.kind === 'Pod' && (o.apiVersion ?? 'v1') === 'v1');
  const claims = observed.filter(
    (o): o is PersistentVolumeClaim => o.kind === 'PersistentVolumeClaim' && (o.apiVersion ?? 'v1') === 'v1',
  );
  // Computed, never copied: the resource's own conditions (a live one's) are left out, and the
  // summary the reconciler adds (Ready, Reconciling, Stalled) is derived as it derives it.
  const status: unknown = decl.status(withoutConditions(resource), {
    children,
    health: assessChildren({
      children: children.values(),
      // Observed files hold one namespace's objects: a pod is traced by its owners alone.
      podsOf: (child) =>
        pods.filter((p) => podWorkloads(p).some((w) => w.kind === child.kind && w.name === child.metadata.name)),
      // A StatefulSet is not as asked while a claim of its pods is smaller than its templates ask.
      claimsOf: () => claims,
    }),
    before: new ChildMap(),
    changes: [],
    read: <T extends KubeObject>(
      type: ResourceType<T>,
      labels?: Record<string, string>,
      options?: { readonly allNamespaces?: boolean },
    ): T[] =>
      observed.filter(
        (o): o is T =>
          o.kind === type.kind &&
          (options?.allNamespaces === true || (o.metadata.namespace ?? namespace) === namespace) &&
          Object.entries(labels ?? {}).every(([k, v]) => o.metadata.labels?.[k] === v),
      ),
    now: new Date(),
  });
  return isJsonObject(status) ? withSummary(status, resource.metadata.generation ?? 0) : status;
}

/** The status with Ready, Reconciling and Stalled derived from its conditions, as the reconciler adds them. */
function withSummary(status: object | undefined, generation: number): object | undefined {
  const conditions = conditionsOf(status);
  return conditions ? { ...status, conditions: withSummaryConditions(conditions, generation, new Date()) } : status;
}

/** The rendered children, each replaced by the observed object of its kind and name where there is one. */
function observedChildren(
  decl: ControllerDeclaration,
  rendered: readonly KubeObject[],
  observed: readonly KubeObject[],
): ChildMap {
  const children = new ChildMap();
  const ownedKinds = new Set((decl.owns ?? []).map((t) => t.kind));
  for (const c of rendered) children.set(childKey(c.kind ?? '', c.metadata.name ?? ''), c);
  for (const o of observed) {
    const key = childKey(o.kind ?? '', o.metadata.name ?? '');
    if (ownedKinds.has(o.kind ?? '') && children.has(key)) children.set(key, o);
  }
  return children;
}

/** The resource without the conditions of its status (the rest of its status stays: a kind may read it). */
function withoutConditions(resource: CustomResourceObject): CustomResourceObject {
  if (!isJsonObject(resource.status)) return resource;
  const { conditions: _left, ...rest } = resource.status;
  return { ...resource, status: rest };
}

/** The objects of a YAML file (empty documents skipped); a document that is not a Kubernetes object is refused. */
export function readResources(file: string): KubeObject[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8')).flatMap((doc, i) => {
    const o: unknown = doc.toJSON();
    if (o === null) return [];
    // `kubectl get -o yaml` of several objects: a List (or a <Kind>List), read item by item.
    const items = isJsonObject(o) && typeof o.kind === 'string' && o.kind.endsWith('List') ? o.items : undefined;
    const objects: unknown[] = Array.isArray(items) ? items : [o];
    return objects.map((x, j) => {
      if (!isKubeObject(x)) {
        const which = Array.isArray(items) ? `document ${i + 1}, item ${j + 1}` : `document ${i + 1}`;
        throw new RenderError(`${file}: ${which} is not a Kubernetes object (apiVersion, kind, metadata)`);
      }
      return x;
    });
  });
}

/**
 * A resource from a file as the reconciler would read it once applied: the live object's
 * metadata (its uid names the children's owner) when it exists, with the file's spec and the
 * CRD's defaults; checked against the schema first.
 */
export async function storedResource(
  cluster: ClusterCrds,
  controllers: readonly ControllerDeclaration[],
  resource: KubeObject,
  namespace: string,
): Promise<CustomResourceObject> {
  const where = `${resource.kind ?? '(no kind)'} ${resource.metadata.name ?? '(no name)'}`;
  const { decl, stored } = checked(resource, controllers, where);
  const ns = resource.metadata.namespace ?? (decl.for.namespaced ? namespace : undefined);
  let live: CustomResourceObject | undefined;
  try {
    live = await getAsNewCode(cluster, decl, stored.metadata.name, ns);
  } catch (err) {
    // Not there yet (nor, perhaps, its CRD): the file's resource as it would be created.
    if (!isNotFound(err) && !(err instanceof NotInstalledError)) throw err;
  }
  return live ? { ...live, spec: stored.spec } : { ...stored, metadata: { ...stored.metadata, namespace: ns } };
}

/** The declaration of a resource's kind, and the resource as stored: checked, defaults applied. */
function checked(
  resource: KubeObject,
  controllers: readonly ControllerDeclaration[],
  where: string,
): { decl: ControllerDeclaration; stored: CustomResourceObject } {
  const decl = controllerOf(controllers, resource, where);
  const version = (resource.apiVersion ?? '').split('/')[1];
  if (!version || !decl.for.versions.includes(version))
    throw new RenderError(`${where}: ${resource.apiVersion} is not a served version (${decl.for.versions.join(', ')})`);
  const problems = decl.for.specViolations(resource.spec, version);
  if (problems.length) throw new RenderError(`${where}: the CRD would refuse it: ${problems.join('; ')}`);
  // Defaulted as written, then stored (and reconciled) as the storage version, as the API
  // server would convert and default it.
  const written = { ...resource, spec: withSchemaDefaults(decl.for.specSchema(version), resource.spec) };
  const atStorageVersion = convertObject(decl.for, written, decl.for.apiVersion);
  const stored = {
    ...atStorageVersion,
    metadata: {
      namespace: decl.for.namespaced ? 'default' : undefined,
      uid: OFFLINE_UID,
      generation: 1,
      ...resource.metadata,
    },
    spec: withSchemaDefaults(decl.for.specSchema(), atStorageVersion.spec),
  } as CustomResourceObject;
  return { decl, stored };
}

/** The controller that reconciles a resource (by its group and kind), or an error naming the known ones. */
export function controllerOf(
  controllers: readonly ControllerDeclaration[],
  resource: KubeObject,
  where: string,
): ControllerDeclaration {
  const group = (resource.apiVersion ?? '').split('/')[0];
  const decl = controllers.find((c) => c.for.group === group && c.for.kind === resource.kind);
  if (decl) return decl;
  const known = controllers.map((c) => `${c.for.group} ${c.for.kind}`).join(', ');
  throw new RenderError(`${where}: no controller reconciles ${resource.apiVersion} ${resource.kind}; known: ${known}`);
}

/** The controller of a kind named as kubectl takes it: `Memcached`, `memcached` or `memcacheds`. */
export function controllerNamed(
  controllers: readonly ControllerDeclaration[],
  kind: string,
): ControllerDeclaration | undefined {
  const wanted = kind.toLowerCase();
  return controllers.find((c) => [c.for.kind.toLowerCase(), c.for.plural, c.for.singular].includes(wanted));
}

/** The owned type of a child a controller renders; an error when it renders a kind it does not own. */
export function ownedType(decl: ControllerDeclaration, kind: string | undefined): ResourceType {
  const type = (decl.owns ?? []).find((t) => t.kind === kind);
  if (!type) throw new RenderError(`controller ${decl.name} renders a ${kind} but does not own ${kind}s`);
  return type;
}

/** The controllers a module exports, or without one the kit's own. */
export async function controllersFrom(module: string | undefined): Promise<readonly ControllerDeclaration[]> {
  return module ? loadControllers(module) : KIT_CONTROLLERS;
}

/**
 * The declarations a module exports (each export that is one, or a list of them). The module is
 * bundled first, so that a TypeScript module of the user's project loads as it is, but without
 * its packages: those are required from the project's node_modules, so the module's constructs
 * and the kit share one copy of cdk8s, constructs and cdk8s-plus (a second copy cannot resolve
 * the first's `Lazy` values, which cdk8s-plus uses throughout). The bundle is written under the
 * project's `node_modules/.cache/`, from where those packages resolve, and removed after loading.
 */
export async function loadControllers(module: string): Promise<ControllerDeclaration[]> {
  const project = projectOf(path.resolve(module));
  const cache = path.join(project, 'node_modules', '.cache', 'cdk8s-operator-kit');
  fs.mkdirSync(cache, { recursive: true });
  const dir = fs.mkdtempSync(path.join(cache, 'controllers-'));
  const outfile = path.join(dir, 'controllers.js');
  try {
    await bundleReconciler({
      entry: path.resolve(module),
      outfile,
      minify: false,
      cwd: project,
      externalPackages: true,
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module bundled at run time
    const exports = require(outfile) as Record<string, unknown>;
    const found = declarationsIn(exports).filter(hasSchemas);
    if (found.length === 0)
      throw new RenderError(
        `${module} exports no controller declaration (export them, e.g. export const controllers = [...])`,
      );
    return found;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The project a module belongs to: the nearest directory above it with a node_modules, else the working directory. */
function projectOf(module: string): string {
  for (let dir = path.dirname(module); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'node_modules'))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

/**
 * Whether a declaration's kind has schemas (a CustomResourceKind: `constructController` and the
 * kit make one), which render, diff and plan check resources against.
 */
function hasSchemas(d: RuntimeDeclaration): d is ControllerDeclaration {
  return 'specViolations' in d.for && typeof d.for.specViolations === 'function';
}

/** The kit's own controllers, when no module is given. */
export const kitControllers: readonly ControllerDeclaration[] = KIT_CONTROLLERS;
