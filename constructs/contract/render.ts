import { ApiObject, App, Chart } from 'cdk8s';
import { type Construct, type IConstruct } from 'constructs';
import { isKubeObject, type KubeObject } from './objects';
import { childKey } from './resource-types';

/**
 * Renders constructs to plain objects in a throwaway chart: how a reconciler turns the same
 * cdk8s constructs used at synth time into the live children it applies, and how a
 * ConstructOperator learns at synth time which kinds its construct makes.
 */
export function renderConstructs(build: (scope: Construct) => void): KubeObject[] {
  return renderWithWaits(build).objects;
}

/** Rendered children, and which of them wait for which (see `waitsFor`). */
export interface RenderedChildren {
  readonly objects: KubeObject[];
  /** By the waiting child's `Kind/name`: the `Kind/name`s it waits for. */
  readonly waits: ReadonlyMap<string, readonly string[]>;
  /** The `Kind/name`s of children updated on their own (see `applyIndependently`). @default none */
  readonly independent?: ReadonlySet<string>;
}

/** The waits of a render with none, one for all: a reconciler keeps a render per resource. */
const NO_WAITS: ReadonlyMap<string, readonly string[]> = new Map();

/**
 * `renderConstructs`, with the waits the constructs declared between the children. `address` is
 * the throwaway chart's id, so the first part of every construct path under it: what cdk8s and
 * cdk8s-plus derive names and selectors from (`cdk8s.io/metadata.addr`). A resource's children
 * are rendered at an address of that resource's own (see `resourceAddress`).
 */
export function renderWithWaits(build: (scope: Construct) => void, address = 'render'): RenderedChildren {
  const app = new App({ outdir: '/dev/null' });
  const chart = new Chart(app, address);
  build(chart);
  const waits = waitsOf(chart);
  const independent = independentIn(chart);
  return {
    objects: chartObjects(chart),
    waits: waits.size ? waits : NO_WAITS,
    ...(independent.size ? { independent } : {}),
  };
}

/** The constructs marked by `applyIndependently`; a weak set, so a render's constructs go with it. */
const INDEPENDENT = new WeakSet<IConstruct>();
/** Whether anything was ever marked: until then a render does not walk its tree for marks. */
let anyIndependent = false;

/**
 * Marks children that the reconciler updates on their own. By default a change is written whole
 * or not at all: when two or more children are to be updated and the API server would refuse one
 * (asked by a server-side dry run first), none of them is written, so running pods never meet a
 * new ConfigMap beside an old StatefulSet. A child marked here is updated even then — for one
 * that stands apart from the others (a PodDisruptionBudget, a monitoring object). Each argument
 * is an object or a construct holding some.
 */
export function applyIndependently(...constructs: IConstruct[]): void {
  for (const c of constructs) INDEPENDENT.add(c);
  anyIndependent ||= constructs.length > 0;
}

/** The `Kind/name`s of the objects marked, or under a construct marked, by `applyIndependently`. */
function independentIn(chart: Chart): Set<string> {
  const out = new Set<string>();
  if (!anyIndependent) return out;
  for (const object of objectsIn(chart)) {
    for (let scope: IConstruct | undefined = object; scope && scope !== chart; scope = scope.node.scope) {
      if (INDEPENDENT.has(scope)) out.add(keyOf(object));
    }
  }
  return out;
}

/**
 * A chart's objects as plain JSON (`toJson()`), each checked to be a Kubernetes object: an
 * object with its metadata, its apiVersion and kind strings.
 */
export function chartObjects(chart: Chart): KubeObject[] {
  const objects: unknown[] = chart.toJson();
  return objects.map((o, i) => {
    if (!isKubeObject(o)) throw new Error(`${chart.node.path}: object ${i} of toJson() is not a Kubernetes object`);
    return o;
  });
}

/**
 * The construct address a resource's children are rendered at: unique to the resource (its
 * namespace and name: a namespace has no dot, so `namespace.name` cannot be another pair's) and
 * the same at every reconcile, so the selectors cdk8s-plus derives from a construct's path select
 * that resource's pods only, and stay put.
 */
export function resourceAddress(metadata: { readonly name?: string; readonly namespace?: string }): string {
  const name = metadata.name ?? '';
  return metadata.namespace ? `${metadata.namespace}.${name}` : name;
}

/**
 * Declares that `dependent` waits for `dependencies`: at run time the reconciler applies the
 * objects of `dependent` only once every object of `dependencies` is ready (a Job complete, a
 * workload's pods available, a claim bound: see `childHealth`), and the resource's status says
 * what it waits for; a static chart lists them after what they wait for. Each argument is an
 * object or a construct holding some (cdk8s-plus constructs too). It is cdk8s's own
 * `node.addDependency`, read with that meaning.
 *
 * @example
 * const migrate = new KubeJob(scope, 'migrate', { ... });
 * const web = new KubeDeployment(scope, 'web', { ... });
 * waitsFor(web, migrate); // the Deployment is made once the migration Job has completed
 */
export function waitsFor(dependent: IConstruct, ...dependencies: IConstruct[]): void {
  dependent.node.addDependency(...dependencies);
}

/** Each object's waits: the dependencies of it and of each construct above it, as objects. */
function waitsOf(chart: Chart): Map<string, string[]> {
  const waits = new Map<string, string[]>();
  for (const object of objectsIn(chart)) {
    const on = new Set<string>();
    for (let scope: IConstruct | undefined = object; scope && scope !== chart; scope = scope.node.scope) {
      const others = scope.node.dependencies.flatMap(objectsIn).filter((o) => o !== object);
      others.forEach((o) => on.add(keyOf(o)));
    }
    if (on.size) waits.set(keyOf(object), [...on].sort());
  }
  return waits;
}

/** The objects in a construct's tree, itself included. */
function objectsIn(construct: IConstruct): ApiObject[] {
  return construct.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c));
}

function keyOf(o: ApiObject): string {
  return childKey(o.kind, o.name);
}
