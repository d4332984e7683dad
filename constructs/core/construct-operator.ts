import { ApiObject } from 'cdk8s';
import { type Construct } from 'constructs';
import { ConditionList, conditionsOf } from '../contract/conditions';
import {
  BuiltinTypes,
  type EventSpec,
  type FinalizeContext,
  type FinalizeOutcome,
  type KubeObject,
  type Observed,
  type OwnerReferenceLike,
  type CustomResourceObject,
  type ResourceType,
  type StatusOf,
} from '../contract';
import type { ControllerDeclaration } from './controller-declaration';
import type { Condition } from '../contract/conditions';
import type { CustomResource, CustomResourceKind } from './kind';
import { Operator } from './operator';
import type { OperatorOptions } from './operator-props';
import { renderConstructs } from '../contract/render';
import { conditionsSchema, type Schema, t } from './schema';

export interface ConstructControllerProps<R extends CustomResourceObject> {
  /** The kind whose resources become constructs. */
  readonly kind: CustomResourceKind;
  /** Name used in `--controllers=...`. @default the kind's singular, e.g. `staticsite` */
  readonly name?: string;
  /**
   * What a resource becomes: render its children into `scope`, usually by creating one
   * construct. Give each child `owner` as a controller owner reference (so deleting the resource
   * deletes it), except data that should outlive the resource.
   */
  readonly render: (scope: Construct, resource: R, context: { readonly owner: OwnerReferenceLike }) => void;
  /**
   * Specs (as the API server returns them, defaults applied) rendered at synth time to learn
   * which kinds the construct makes — the RBAC is derived from them — and the first one is the
   * sample. Give one per optional branch of the construct (e.g. with and without an Ingress).
   */
  readonly examples: readonly R['spec'][];
  /**
   * The status. @default `constructStatus`: observedGeneration and the Available, Progressing
   * and Degraded conditions computed from the children
   */
  readonly status?: (resource: R, observed: Observed) => StatusOf<R>;
  /** Kinds it may render that no example shows, for which it needs rights too. @default none */
  readonly owns?: readonly ResourceType[];
  /**
   * Owned kinds never deleted when the construct stops rendering them.
   * @default [PersistentVolumeClaim] — user data is never pruned
   */
  readonly keep?: readonly ResourceType[];
  /**
   * Types it reads besides its children (granted get, list and watch), for `status` through
   * `observed.read`, for `finalize` through `existing`, and for `mapReads`. The pods of the
   * workloads it makes, and the Warning Events about its children, are read without this.
   * @default none
   */
  readonly reads?: readonly ResourceType[];
  /**
   * Extra watches: for a `reads` type, which resource (by name, in the object's namespace) an
   * object's change concerns, so that resource is reconciled again, e.g. a ConfigMap by a label.
   * @default a read object's change reconciles nothing
   */
  readonly mapReads?: Readonly<Record<string, (object: KubeObject) => string | undefined>>;
  /**
   * Events beyond the runtime's own. Pure. @default a Normal Event per child created, updated or
   * deleted, and a Warning when `Degraded` turns True
   */
  readonly events?: (resource: R, observed: Observed, status: StatusOf<R> | undefined) => EventSpec[];
  /** Work before a deleted resource goes (see `ControllerDeclaration.finalize`). @default none */
  readonly finalize?: (resource: R, context: FinalizeContext) => Promise<FinalizeOutcome>;
  /** Which resources need `finalize` (see `ControllerDeclaration.needsFinalizer`). @default every one */
  readonly needsFinalizer?: (resource: R) => boolean;
}

const KNOWN_TYPES: readonly ResourceType[] = Object.values(BuiltinTypes);

/**
 * A controller for any construct: each resource of `kind` is rendered with `render`, and the
 * children it makes are applied, kept true and pruned by the runtime — no controller code.
 * The kinds it owns (and so its RBAC) come from rendering the examples at synth time. Pass the
 * result both to a `ConstructOperator` (synth) and to `runOperator` (the reconciler).
 */
export function constructController<S extends Schema<unknown>, St extends Schema<unknown>>(
  props: ConstructControllerProps<CustomResource<S, St>> & { readonly kind: CustomResourceKind<S, St> },
): ControllerDeclaration<CustomResource<S, St>>;
/** The same, with the resource type given: `constructController<StaticSite>({...})`. */
export function constructController<R extends CustomResourceObject>(
  props: ConstructControllerProps<R>,
): ControllerDeclaration<R>;
export function constructController<R extends CustomResourceObject>(
  props: ConstructControllerProps<R>,
): ControllerDeclaration<R> {
  const where = `constructController for ${props.kind.kind}`;
  checkExamples(where, props);
  const owns = new Map<string, ResourceType>((props.owns ?? []).map((o) => [typeKey(o.group, o.kind), o]));
  for (const spec of props.examples) addRenderedTypes(where, props, spec, owns);
  const keep = new Set((props.keep ?? [BuiltinTypes.PersistentVolumeClaim]).map((k) => typeKey(k.group, k.kind)));
  const owned = [...owns.values()];
  return {
    name: props.name ?? props.kind.singular,
    for: props.kind,
    owns: owned,
    // What it renders no longer is deleted — except what it must keep (claims: user data).
    deletes: owned.filter((o) => !keep.has(typeKey(o.group, o.kind))),
    render: props.render,
    // Why a child cannot be made (a pod quota, an invalid image, no volume) reaches the status as
    // `childFailure`, found through the children's owner references: no naming rule to write.
    reads: [BuiltinTypes.CoreEvent, ...(props.reads ?? [])],
    failuresByOwnerReferences: true,
    mapReads: props.mapReads,
    events: props.events,
    finalize: props.finalize,
    needsFinalizer: props.needsFinalizer,
    // The default is for kinds whose status schema is `constructStatusSchema()`, as documented:
    // its status type is then ConstructStatus.
    status: props.status ?? ((resource, observed) => constructStatus(resource, observed)),
  };
}

/** Every example must be one the CRD accepts, and convert through every version unchanged. */
function checkExamples<R extends CustomResourceObject>(where: string, props: ConstructControllerProps<R>): void {
  if (props.examples.length === 0)
    throw new Error(`${where}: give at least one example spec; its render decides the RBAC`);
  props.examples.forEach((spec, i) => {
    const problems = props.kind.specViolations(spec);
    if (problems.length)
      throw new Error(`${where}: examples[${i}] would be refused by the CRD: ${problems.join('; ')}`);
    const conversion = props.kind.conversionProblems(spec);
    if (conversion.length)
      throw new Error(`${where}: examples[${i}] does not convert cleanly: ${conversion.join('; ')}`);
  });
}

/** Adds to `owns` the type of each child one example renders; a type the kit does not know must be declared. */
function addRenderedTypes<R extends CustomResourceObject>(
  where: string,
  props: ConstructControllerProps<R>,
  spec: unknown,
  owns: Map<string, ResourceType>,
): void {
  const resource = {
    apiVersion: props.kind.apiVersion,
    kind: props.kind.kind,
    metadata: { name: 'example', namespace: 'example', uid: 'example', generation: 1 },
    spec,
  } as unknown as R;
  const owner = {
    apiVersion: props.kind.apiVersion,
    kind: props.kind.kind,
    name: 'example',
    uid: 'example',
    controller: true,
    blockOwnerDeletion: true,
  };
  for (const child of renderConstructs((scope) => {
    props.render(scope, resource, { owner });
  })) {
    const apiVersion = child.apiVersion ?? '';
    const group = apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
    const key = typeKey(group, child.kind ?? '');
    if (owns.has(key)) continue;
    const known = KNOWN_TYPES.find(
      (k) => typeKey(k.group, k.kind) === key && child.apiVersion === (k.group ? `${k.group}/${k.version}` : k.version),
    );
    if (!known) {
      throw new Error(
        `${where}: the construct renders ${child.apiVersion} ${child.kind}, a type the kit does not know; declare it in owns with its resource name, e.g. { group: '${group}', version: '...', kind: '${child.kind}', resource: '...', namespaced: true }`,
      );
    }
    owns.set(key, known);
  }
}

function typeKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** The status schema `constructStatus` writes; use it as the kind's `status`. */
export function constructStatusSchema() {
  return t.object(
    {
      observedGeneration: t.integer({
        minimum: 0,
        description: 'The .metadata.generation the status was computed from.',
      }),
      conditions: conditionsSchema(
        'Available (every child it made is ready), Progressing (a child is on its way) and Degraded (why not as specified).',
      ),
    },
    { description: 'The observed state, written by the operator.' },
  );
}

/** The status `constructStatus` writes. */
export interface ConstructStatus {
  observedGeneration: number;
  conditions: Condition[];
}

/**
 * A status for any construct, from its children by the rules every kind shares (see
 * `assessChildren`): `Available` when every child is ready (each workload's pods updated and
 * available, each Job complete, each claim bound, …); `Progressing` while one is not, naming
 * it; `Degraded` when a child was refused, cannot be made, failed, or has a pod that cannot run
 * — naming the child and why. Pure.
 */
export function constructStatus(resource: CustomResourceObject, observed: Observed): ConstructStatus {
  const generation = resource.metadata.generation ?? 0;
  const list = new ConditionList(conditionsOf(resource.status), generation, observed.now);
  const { health } = observed;
  const notReady = health.notReady.map((c) => `${c.kind} ${c.name} (${c.message})`).join(', ');
  if (health.ready) {
    const count = health.children.length;
    list.set('Available', 'True', 'AllReady', count ? `${count} child(ren) ready` : 'no children to wait for');
    list.set('Progressing', 'False', 'Complete', 'every child is as its spec asks');
  } else {
    list.set('Available', 'False', 'ChildrenNotReady', `not ready yet: ${notReady}`);
    list.set('Progressing', 'True', health.notReady[0]?.reason ?? 'InProgress', notReady);
  }
  list.degraded(
    [
      observed.applyError !== undefined && { reason: 'InvalidChildren', message: observed.applyError },
      health.failure,
      // A crash-looping container runs for a moment between back-offs: the failure stands until
      // the children are ready (see `ConditionList.reported`).
      !health.ready && list.reported('PodFailing'),
    ],
    'the children match the spec',
  );
  return { observedGeneration: generation, conditions: list.conditions };
}

/**
 * A spec as a sample writes it: every field optional at compile time, since the API server fills
 * in defaults (what is required is checked against the schema when the sample is made), but each
 * field's name and type checked.
 */
export type SampleSpec<T> = T extends readonly (infer I)[]
  ? SampleSpec<I>[]
  : T extends object
    ? { [K in keyof T]?: SampleSpec<T[K]> }
    : T;

export interface ConstructOperatorProps<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default admits a controller of any kind's spec and status
  R extends CustomResourceObject = CustomResourceObject<any, any>,
> extends OperatorOptions {
  /** From `constructController`: the same declaration the reconciler image runs. */
  readonly controller: ControllerDeclaration<R>;
}

/**
 * An operator for any construct: the kind's CRD, least-privilege RBAC derived from the kinds its
 * construct renders, and the reconciler Deployment (which must run an image whose entry point
 * calls `runOperator` with the same controller). `addSample` writes a sample resource.
 *
 * @example
 * const staticSite = constructController({ kind: staticSiteKind, render: (scope, site, { owner }) => new StaticSiteResources(scope, 'site', { site, owner }), examples: [{ pages: {} }] });
 * new ConstructOperator(app, 'static-site', { controller: staticSite, image: 'registry.example.com/static-site-operator' });
 */
export class ConstructOperator<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default admits a controller of any kind's spec and status
  R extends CustomResourceObject = CustomResourceObject<any, any>,
> extends Operator {
  readonly controller: ControllerDeclaration<R>;

  constructor(scope: Construct, id: string, props: ConstructOperatorProps<R>) {
    super(scope, id, { ...props, controllers: [props.controller] });
    this.controller = props.controller;
  }

  /**
   * A resource of the kind in `scope` (a chart applied after the CRD is established), its spec
   * typed by the kind and checked against the CRD's schema here: a spec the API server would
   * refuse throws, naming the field.
   */
  addSample(scope: Construct, name: string, spec: SampleSpec<R['spec']>, namespace?: string): ApiObject {
    return writeSample(scope, this.controller.for, name, spec, namespace);
  }
}

/**
 * A sample resource of a kind in `scope` (a chart applied after the CRD is established), its
 * spec typed by the kind and checked against the CRD's schema of every version: a spec the API
 * server would refuse throws, naming the field. `ConstructOperator.addSample` for an operator
 * of several kinds.
 */
export function addSample<S extends Schema<unknown>, St extends Schema<unknown>>(
  scope: Construct,
  kind: CustomResourceKind<S, St>,
  name: string,
  spec: SampleSpec<CustomResource<S, St>['spec']>,
  namespace?: string,
): ApiObject {
  return writeSample(scope, kind, name, spec, namespace);
}

function writeSample(
  scope: Construct,
  kind: CustomResourceKind,
  name: string,
  spec: unknown,
  namespace: string | undefined,
): ApiObject {
  const problems = kind.specViolations(spec);
  if (problems.length)
    throw new Error(`sample ${name} of ${kind.kind} would be refused by the CRD: ${problems.join('; ')}`);
  const conversion = kind.conversionProblems(spec);
  if (conversion.length)
    throw new Error(`sample ${name} of ${kind.kind} does not convert cleanly: ${conversion.join('; ')}`);
  return new ApiObject(scope, `${name}-sample`, {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    metadata: { name, namespace },
    spec,
  });
}
