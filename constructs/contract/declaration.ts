import type { Construct } from 'constructs';
import { type ChildrenHealth, POD_WORKLOAD_KINDS } from './health';
import type { KindDescriptor } from './kind';
import type { CustomResourceObject, InvolvedObject, KubeObject } from './objects';
import { BuiltinTypes, type Children, type ResourceType } from './resource-types';
import { stringAt } from './json';

/** A controller owner reference, in the shape cdk8s constructs take. */
export interface OwnerReferenceLike {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** A reason a resource is not as its spec asks, for a `Degraded` condition or a Warning. */
export interface Problem {
  readonly reason: string;
  readonly message: string;
  /** The child that fails, when one does: what a kind reads of it, rather than its name out of `message`. */
  readonly object?: { readonly kind: string; readonly name: string };
}

/** Reads of the operator's caches, for a controller's `reads` types. */
export interface CacheReads {
  /**
   * Cached objects of a `reads` type in the resource's namespace, optionally matching labels;
   * with `allNamespaces`, in every namespace the operator watches.
   */
  read<T extends KubeObject>(
    type: ResourceType<T>,
    labels?: Record<string, string>,
    options?: { readonly allNamespaces?: boolean },
  ): T[];
}

/**
 * What a reconcile saw, for the status and events functions (pure: no I/O). `Facts` are what the
 * `external` step returned, `Prepared` what `prepare` returned.
 */
export interface Observed<Facts extends object = object, Prepared extends object = object> extends CacheReads {
  /** The children as they are after this reconcile's applies: `children.of(BuiltinTypes.Deployment, name)`. */
  readonly children: Children;
  /** The children as they were before it (for "scaled from 3 to 5"). */
  readonly before: Children;
  /** What this reconcile changed, e.g. `{ verb: 'Created', kind: 'Deployment', name: 'web' }`. */
  readonly changes: readonly {
    readonly verb: 'Created' | 'Updated' | 'Deleted';
    readonly kind: string;
    readonly name: string;
  }[];
  /** Why the API server refused a desired child (400/422): not retried until the spec changes. */
  readonly applyError?: string;
  /** A Warning Event (FailedCreate, ProvisioningFailed) about a child Kubernetes cannot make. */
  readonly childFailure?: Problem;
  /**
   * What the children are, by the same rules for every kind (see `assessChildren`): each one's
   * readiness, whether all are ready, and the first failure naming the child — pods traced to
   * the workload that made them, `childFailure`, a failed child. Children held back because they
   * wait for others are in it too, as `Waiting`.
   */
  readonly health: ChildrenHealth;
  /** What `prepare` returned. */
  readonly prepared?: Prepared;
  /** The facts `external` returned. */
  readonly external?: Facts;
  readonly now: Date;
}

/** What an `external` step did to a system outside Kubernetes, and what it found there. */
export interface ExternalStep<Facts extends object = object> {
  /** Passed to `render` (`context.external`) and `status` (`observed.external`). */
  readonly facts: Facts;
  /** Events about the resource, e.g. "added member x-3". */
  readonly events?: readonly EventSpec[];
  /** Reconcile again after this long: the outside system's changes produce no watch events. */
  readonly requeueAfterMs?: number;
  /**
   * Pods of the resource's own StatefulSets to restart, so that their containers start again
   * from what the children now say (e.g. a ConfigMap's environment, read only at a start). Each
   * is a `RestartPod` action of the reconcile's plan: deleted by its uid after the children are
   * written (its StatefulSet makes it again), through the same gate as every other write, and only
   * when nothing of the plan was refused. A pod of another uid by now, or one no StatefulSet of
   * the resource controls, is left alone. Ask only once the children already say what the new
   * container must read: the kubelet reads them as cached, and the step's own writes come after it.
   */
  readonly restartPods?: readonly PodRestart[];
  /**
   * Labels to set on pods of the resource's own StatefulSets, e.g. the role each database instance
   * has now, which a Service selects on (the StatefulSet's one pod template cannot tell its pods
   * apart). Each pod whose labels differ is a `LabelPod` action of the plan: one JSON patch that
   * holds only while the pod has the uid asked, through the same gate as every other write, after
   * the children are written and only when nothing of the plan was refused. Never a label the
   * StatefulSet selects its pods by, nor one of Kubernetes' own (`*.kubernetes.io/`, `*.k8s.io/`);
   * the declaration must say `labelsPods` (the grant to patch pods).
   */
  readonly labelPods?: readonly PodLabels[];
  /**
   * Set when the outside system did not answer (why): the step decided from what it last knew and
   * took no step there. `plan` and `diff` then say its writes could not be previewed from where
   * they ran (e.g. members reachable only inside the cluster).
   */
  readonly outOfReach?: string;
}

/** A pod an `external` step asks to be restarted (see `ExternalStep.restartPods`). */
export interface PodRestart {
  readonly name: string;
  /** The pod that must go: one made again since under the name is not restarted again. */
  readonly uid: string;
  /** Why, as the reconcile's writes and the Event record it. */
  readonly reason: string;
  /**
   * The pod's claims to delete with it, so that its StatefulSet makes them again, empty: only for
   * a claim whose data exists in full elsewhere — e.g. the new claim of an etcd member that was
   * just removed from its cluster, which holds nothing but that removed member's copy of the
   * others' data, and on which etcd would only ever start as the removed member. Each is deleted
   * by its uid just before the pod, and only when the pod mounts it and its StatefulSet made it
   * from a claim template; the declaration must say `discardsClaims` (the grant to delete claims).
   */
  readonly discardClaims?: readonly ClaimToDiscard[];
}

/** Labels an `external` step asks for on one pod (see `ExternalStep.labelPods`). */
export interface PodLabels {
  readonly name: string;
  /** The pod they are for: one made again since under the name is labelled when asked again. */
  readonly uid: string;
  /** Each label's value; null takes the label off. */
  readonly labels: Readonly<Record<string, string | null>>;
  /** Why, as the reconcile's writes record it. */
  readonly reason: string;
}

/** A claim a `PodRestart` discards (see `PodRestart.discardClaims`). */
export interface ClaimToDiscard {
  readonly name: string;
  /** The claim that must go: one made again since under the name is not deleted. */
  readonly uid: string;
}

/** A write a kind's `external` step makes to the system outside Kubernetes, e.g. etcd's `member add`. */
export interface ExternalWrite {
  /** The outside system, e.g. `etcd`. */
  readonly system: string;
  /** What is done, e.g. `AddMember`. */
  readonly action: string;
  /** What it is done to, e.g. a member's name. */
  readonly target: string;
  /** Why, as the reconcile's writes record it. */
  readonly reason: string;
}

/**
 * What an `external` step is given to work with: the caches of its `reads` types too (e.g. the
 * claims its members run on), read-only.
 */
export interface ExternalContext extends CacheReads {
  /** Aborts on shutdown and when leadership is lost. */
  readonly signal: AbortSignal;
  /**
   * The gate every write of the step goes through, as the children's writes do: it throws the
   * stop signal's reason once it aborted (nothing is written after shutdown or a lost lease), else
   * runs `run` and records `what` in the reconcile's writes and `opkit_reconcile_writes_total`.
   */
  write<T>(what: ExternalWrite, run: () => Promise<T>): Promise<T>;
  /** Reads an object of a `keeps` type by name, in the resource's namespace (see `PrepareApi.getOwn`). */
  getOwn<T extends KubeObject>(type: ResourceType<T>, name: string): Promise<OwnLookup<T>>;
  /** Reads what another controller made for one of the resource's own objects (see `PrepareApi.getMadeFor`). */
  getMadeFor<T extends KubeObject>(type: ResourceType<T>, name: string, madeFor: MadeFor): Promise<OwnLookup<T>>;
}

/**
 * One of the resource's own objects (of a `keeps` type) for which another controller makes an
 * object of its own, and how that controller names it on what it made: cert-manager writes a
 * Certificate's Secret and annotates it `cert-manager.io/certificate-name: <certificate>`.
 */
export interface MadeFor {
  readonly type: ResourceType;
  readonly name: string;
  /** The annotation that names the object on what was made for it. */
  readonly annotation: string;
}

/**
 * An object of a `keeps` type looked up by name: absent, the resource's own (its controller owner
 * reference names the resource), or one of that name the resource does not control — whose
 * content is never handed to the kind, so a kind cannot read or change what it did not make.
 */
export type OwnLookup<T extends KubeObject = KubeObject> =
  { readonly state: 'absent' } | { readonly state: 'own'; readonly object: T } | { readonly state: 'foreign' };

/** An Event a kind asks for, about the resource it reconciles. */
export interface EventSpec {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** The few writes a `prepare` step may make beyond applying children. */
export interface PrepareApi {
  /** Creates an object unless it exists; true when it created it. Never reads or changes one. */
  createIfAbsent(type: ResourceType, object: KubeObject): Promise<boolean>;
  /**
   * Reads an object of a `keeps` type by name, in the resource's namespace: its content only when
   * the resource is its controller owner.
   */
  getOwn<T extends KubeObject>(type: ResourceType<T>, name: string): Promise<OwnLookup<T>>;
  /**
   * Reads, by name in the resource's namespace, an object of a `keeps` type that another
   * controller made for one of the resource's own objects — the Secret cert-manager writes for a
   * Certificate the resource controls. Its content is handed over only while `madeFor` is the
   * resource's own and the object names it by `madeFor.annotation` (and, when it has a
   * controller owner, is controlled by that very object); else it is 'foreign'. Read only: such
   * an object is its maker's, so `replaceOwn` refuses it.
   */
  getMadeFor<T extends KubeObject>(type: ResourceType<T>, name: string, madeFor: MadeFor): Promise<OwnLookup<T>>;
  /**
   * Replaces an object of a `keeps` type that `getOwn` gave as own, at the resourceVersion it
   * carries (a Conflict when it changed since: the next reconcile reads it again). Refused for an
   * object the resource does not control.
   */
  replaceOwn<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T>;
}

/**
 * What one controller reconciles and touches, in controller-runtime's vocabulary. The operator
 * construct derives its RBAC from this declaration, and the reconciler sets up its informers,
 * owner mapping and prune set from the same one, so permissions and behaviour cannot drift
 * apart.
 *
 * A kind's behaviour is three pure pieces: `render` (the children, as a construct), `status`
 * (from the resource and what was observed) and, optionally, `events`. The runtime's controller
 * builder does the rest: watches, the deletion guard, applying children that changed, pruning
 * owned children no longer rendered, the status write, and the terminal-error policy.
 */
// Its functions are methods so that a declaration for one kind is also a declaration (their
// parameters are compared bivariantly), as every list of controllers needs.
export interface ControllerDeclaration<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default admits a declaration of any kind's spec and status
  R extends CustomResourceObject = CustomResourceObject<any, any>,
  Facts extends object = object,
  Prepared extends object = object,
  Kind extends KindDescriptor = KindDescriptor,
> {
  /** Name used in `--controllers=...`, lower-case, e.g. `memcached`. */
  readonly name: string;
  /**
   * The custom kind the controller reconciles (`For` in controller-runtime). The runtime reads it
   * as a `KindDescriptor`; an Operator construct needs a `CustomResourceKind`, whose schemas
   * its CRD is made of.
   */
  readonly for: Kind;
  /** Children it creates and keeps in shape with server-side apply (`Owns`). */
  readonly owns?: readonly ResourceType[];
  /** Children it may also delete when the spec stops asking for them. Must be listed in `owns` too. */
  readonly deletes?: readonly ResourceType[];
  /** Types it only reads (`Watches`), e.g. Pods to report their names in status. */
  readonly reads?: readonly ResourceType[];
  /**
   * Objects it creates once and never reads or changes (create only), e.g. a generated
   * credentials Secret: an AlreadyExists answer means "exists, keep it". No get, list, watch,
   * update or delete, so it cannot read any object of the type.
   */
  readonly creates?: readonly ResourceType[];
  /**
   * Objects it makes, reads back by name and replaces, but never lists, watches or deletes: e.g.
   * certificates it issues and renews (get, create, update). `getOwn` hands a kind an object only
   * when the resource is its controller owner, and `replaceOwn` changes only such an object, so
   * though the grant covers the type, the kind reads and changes its own objects alone. Give them
   * the resource as controller owner: they go with it.
   */
  readonly keeps?: readonly ResourceType[];
  /**
   * Whether its `external` step may ask for a restarted pod's claims to be deleted with it
   * (`PodRestart.discardClaims`): grants delete on PersistentVolumeClaims, which nothing else of
   * the runtime uses. @default false: claims are never deleted
   */
  readonly discardsClaims?: boolean;
  /**
   * Whether its `external` step may ask for labels on its StatefulSets' pods
   * (`ExternalStep.labelPods`): grants patch on pods. @default false: pods are never changed
   */
  readonly labelsPods?: boolean;

  /**
   * Renders the desired children of a resource into `scope` (a throwaway chart at run time):
   * usually one construct, the same one a static chart can use. Children should carry
   * `owner` as their controller owner reference; leave it off only on purpose (e.g. data that
   * outlives the resource).
   */
  render?(
    scope: Construct,
    resource: R,
    context: { readonly owner: OwnerReferenceLike; readonly external?: Facts },
  ): void;
  /**
   * The status fields `render` reads, if it reads any: the render then sees a status of these
   * fields alone (each undefined where the status has none, the status itself never undefined),
   * and a status write that changes none of those it read neither renders again nor reconciles —
   * our own status writes change the status after nearly every reconcile.
   * @default the whole status, should the render read it (then any change of it counts)
   */
  readonly renderReadsStatus?: readonly string[];
  /** The status the resource should show. Pure. @default no status is written */
  status?(resource: R, observed: Observed<Facts, Prepared>): StatusOf<R>;
  /**
   * Events beyond the runtime's own (a Normal one per child created, updated or deleted, unless
   * this is given; a Warning when `Degraded` turns True). Pure.
   */
  events?(resource: R, observed: Observed<Facts, Prepared>, status: StatusOf<R> | undefined): EventSpec[];
  /**
   * For each `reads` type whose objects are not owned by the resource: which resource (by name,
   * in the object's namespace) an object concerns, e.g. a Pod by its instance label.
   */
  readonly mapReads?: Readonly<Record<string, (object: KubeObject) => string | undefined>>;
  /**
   * Which resource a child named in a Warning Event belongs to (e.g. a claim
   * `data-<name>-0`). Given this, the runtime watches FailedCreate and ProvisioningFailed
   * Events (add `BuiltinTypes.CoreEvent` to `reads`) and passes them as `childFailure`.
   */
  readonly failureOwner?: (involved: InvolvedObject) => string | undefined;
  /**
   * Without a `failureOwner`: find the resource a failure Event concerns through the owner
   * references of its children (the child itself, the ReplicaSet of an owned Deployment, a claim
   * of an owned StatefulSet), so no naming rule is needed. `constructController` sets it. Add
   * `BuiltinTypes.CoreEvent` to `reads`.
   */
  readonly failuresByOwnerReferences?: boolean;
  /**
   * Work on a system outside Kubernetes before the children are rendered, e.g. etcd's member
   * API: one safe step (add or remove a member), whose facts then size the StatefulSet.
   * `children` are the resource's owned children as cached. It must be idempotent and read its
   * state from the outside system and `children`, never from memory, so a crash at any point
   * resumes. Every write to the outside system goes through `context.write`. Throwing retries with
   * backoff.
   */
  external?(resource: R, children: Children, context: ExternalContext): Promise<ExternalStep<Facts>>;
  /**
   * The facts `external` would hand `render`, read only from the children as they are (no call to
   * the outside system, no step taken): what `plan`, `diff` and `render` render with, so what they
   * print is what the reconciler writes while the outside system is as the children say. Without
   * it, a declaration with `external` renders there with no facts, and they say so.
   */
  observeExternal?(resource: R, children: Children): Facts;
  /**
   * Writes made after the children are applied, e.g. a generated Secret (see `creates`), with
   * what this reconcile's `external` step found (undefined without one, or when it stopped).
   */
  prepare?(api: PrepareApi, resource: R, children: Children, facts: Facts | undefined): Promise<Prepared>;
  /**
   * Work that must be done before a deleted resource goes, e.g. a final backup or releasing
   * something outside Kubernetes. With this step the runtime puts the finalizer
   * `<group>/finalizer` on each resource that `needsFinalizer` (before any child is made), and
   * when such a resource is deleted it calls `finalize` instead of reconciling — again on every
   * change of it or its children, and after `requeueAfterMs` — until it answers `done`; then it
   * removes the finalizer and the resource goes. It must be idempotent (it runs again after a
   * crash or a retry) and stop when `signal` aborts. Throwing retries with backoff and sets
   * `Degraded` (the reason of a `TerminalError`, else `FinalizeFailed`) with a Warning Event.
   * Children are not deleted until the resource is gone: they are there while it runs.
   */
  finalize?(resource: R, context: FinalizeContext): Promise<FinalizeOutcome>;
  /**
   * Whether a resource needs the `finalize` step, from its spec (e.g. only when it asks for a
   * final snapshot). A resource that stops needing it loses the finalizer at its next reconcile,
   * so deleting it is no longer held up by the operator. @default every resource
   */
  needsFinalizer?(resource: R): boolean;
  /**
   * Admission: what the API server must refuse in a resource being created or updated — a rule
   * that needs code or other objects, which neither the schema nor a CEL rule can say (e.g. a
   * host another resource already claims). Served by the reconciler's webhook server as a
   * ValidatingWebhookConfiguration the Operator construct synthesizes: fail-closed for create
   * and update, never called for deletes, status updates or resources being deleted. Return the
   * fields at fault (none: allowed). Reads come from the operator's caches; keep it fast (the
   * API server waits at most 5 s).
   */
  validate?(resource: R, context: AdmissionContext<R>): readonly FieldProblem[];
  /**
   * Admission: the spec with defaults that depend on other fields (or on code) filled in, for a
   * resource being created or updated; served as a MutatingWebhookConfiguration. Return the spec
   * unchanged when there is nothing to fill in. Defaults that are constants belong in the schema.
   */
  default?(resource: R): R['spec'];
}

/** A field an admission hook refuses, and why. */
export interface FieldProblem {
  /** The field's path, e.g. `spec.ingress.host`. */
  readonly field: string;
  /** What is wrong and how to fix it. */
  readonly message: string;
}

/** What a `validate` hook may read: `read` of the resource's namespace, as `Observed.read`. */
export interface AdmissionContext<R extends KubeObject = KubeObject> extends CacheReads {
  readonly operation: 'CREATE' | 'UPDATE';
  /** The resource before this update, of the same kind. */
  readonly old?: R;
  /** The resource's owned children as cached (none on create). */
  readonly children: Children;
}

/** What a `finalize` step gets. */
export interface FinalizeContext {
  /** The resource's owned children as cached, e.g. a Job a previous call created. */
  readonly children: Children;
  /** Controller owner reference to the resource, for what the step creates. */
  readonly owner: OwnerReferenceLike;
  /** Creates objects of an owned or `creates` type once. */
  readonly api: PrepareApi;
  /**
   * An object of an owned or `reads` type as cached, whoever controls it — in the resource's
   * namespace, or in `namespace` (the caches, and so the RBAC, cover every namespace the
   * operator watches): to tell an object in the way from one of the resource's own (which is
   * also in `children`), or to find what the resource left elsewhere.
   */
  existing(type: ResourceType, name: string, namespace?: string): KubeObject | undefined;
  /** Aborted when the operator stops or loses leadership. */
  readonly signal: AbortSignal;
}

/**
 * What a `finalize` step found: `done` (the finalizer is removed and the resource goes), or still
 * waiting (e.g. for a Job), said in the resource's `Finalizing` condition.
 */
export type FinalizeOutcome =
  | { readonly done: true; readonly events?: readonly EventSpec[] }
  | {
      readonly done: false;
      /** CamelCase, e.g. `FinalSnapshotRunning`. */
      readonly reason: string;
      readonly message: string;
      readonly events?: readonly EventSpec[];
      /** Call again after this long even if nothing changes. @default only on a change */
      readonly requeueAfterMs?: number;
    };

/** The finalizer the runtime manages for a kind with a `finalize` step. */
export function finalizerName(kind: { readonly group: string }): string {
  return `${kind.group}/finalizer`;
}

/** The status type of a custom resource type. */
export type StatusOf<R extends CustomResourceObject> = NonNullable<R['status']>;

/** Throws when a declaration is inconsistent, with what to change. */
export function validateControllerDeclaration(c: ControllerDeclaration): void {
  if (!/^[a-z][a-z0-9-]*$/.test(c.name)) {
    throw new Error(
      `controller name ${JSON.stringify(c.name)} must be lower-case letters, digits and dashes, e.g. "memcached"`,
    );
  }
  if (c.needsFinalizer && !c.finalize) {
    throw new Error(`controller ${c.name}: needsFinalizer is given without a finalize step; add finalize or remove it`);
  }
  const owned = new Set((c.owns ?? []).map(keyOf));
  for (const d of c.deletes ?? []) {
    if (!owned.has(keyOf(d))) {
      throw new Error(`controller ${c.name}: it deletes ${d.resource} but does not own them; add ${d.kind} to owns`);
    }
  }
}

/**
 * What the runtime reads besides a declaration's own `reads` to judge its children: the Pods of
 * the workloads it owns (traced to them through their owner references), so a kind that makes a
 * Deployment, StatefulSet, DaemonSet, ReplicaSet or Job learns why its pods cannot run; and, for
 * a StatefulSet, the claims it made, so its storage is not called ready while a claim is smaller
 * than asked (see `claimSizeVerdict`). The Operator construct grants these reads, and the runtime
 * watches them.
 */
export function healthReads(c: Pick<ControllerDeclaration, 'owns'>): ResourceType[] {
  const makesPods = (c.owns ?? []).some((t) => t.group !== '' && POD_WORKLOAD_KINDS.includes(t.kind));
  const reads = makesPods ? [BuiltinTypes.Pod] : [];
  return ownsStatefulSets(c) ? [...reads, BuiltinTypes.PersistentVolumeClaim] : reads;
}

/** Whether a declaration owns StatefulSets: their claims grow in place (storage-growth.ts), their stuck rollouts recover. */
export function ownsStatefulSets(c: Pick<ControllerDeclaration, 'owns'>): boolean {
  return (c.owns ?? []).some((o) => o.kind === 'StatefulSet' && o.group === 'apps');
}

function keyOf(t: ResourceType): string {
  return `${t.group}/${t.resource}`;
}

/**
 * The controller declarations a module exports: each export that is one, or a list of them
 * (`export const controllers = [...]`), each once.
 */
export function declarationsIn(exports: Readonly<Record<string, unknown>>): ControllerDeclaration[] {
  const found = Object.values(exports)
    .flatMap((v): unknown[] => (Array.isArray(v) ? v : [v]))
    .filter(isDeclaration);
  return [...new Set(found)];
}

function isDeclaration(v: unknown): v is ControllerDeclaration {
  return (
    stringAt(v, 'name') !== undefined &&
    stringAt(v, 'for', 'group') !== undefined &&
    stringAt(v, 'for', 'kind') !== undefined
  );
}
