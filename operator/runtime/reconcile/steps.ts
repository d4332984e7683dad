/**
 * The steps of a declared controller's reconcile. Each is a function of the controller's parts,
 * the resource it is about (`Target`) and the outputs of the steps before it, returning its own;
 * the order, and the one policy for terminal errors, are written once, in pipeline.ts.
 */
import type {
  ChildHealth,
  ControllerDeclaration,
  EventSpec,
  ExternalStep,
  KubeObject,
  Observed,
  Pod,
  ResourceType,
} from '../../../constructs/contract';
import { assessChildren, ChildMap, childKey, madeBy, waitingOn } from '../../../constructs/contract';
import type { KindDescriptor } from '../../../constructs/contract/kind';
import { withSummaryConditions } from '../../../constructs/contract/kstatus';
import { scaleStatusOf } from '../../../constructs/contract/scale';
import { POD_WORKLOAD_KINDS } from '../../../constructs/contract/health';
import { Blockers } from './blockers';
import { applyIfChanged, applyStatus, controllerReference, notOwnedReason } from '../children';
import { isConflict, isInvalid, isNotFound, sameJson, needsApply, objectKey, withoutBookkeeping } from '../client';
import { type Condition, conditionsOf, findCondition, setCondition } from '../../../constructs/contract/conditions';
import { type Request, type Result, TerminalError } from '../controller';
import {
  cachedChildren,
  type ControllerParts,
  forget,
  type OwnedType,
  prepareApi,
  type RefusedChildren,
  type Resource,
  type Target,
} from './controller-parts';
import { isJsonObject } from '../../../constructs/contract/json';
import { type RenderedChildren, renderWithWaits, resourceAddress } from '../../../constructs/contract/render';
import type { PacedReconcile } from './status-pacer';

/** A desired child, with what the cache holds under its name. */
export interface PlannedChild {
  readonly desired: KubeObject;
  readonly owned: OwnedType;
  readonly current: KubeObject | undefined;
  /** The `Kind/name`s of the children it waits for (see `waitsFor`). */
  readonly waitsFor: readonly string[];
}

/** A child whose name is taken by an object this resource does not control. */
export interface NotOwned {
  /** The taking object, as `Blockers` keys it. */
  readonly blocker: string;
  readonly reason: string;
}

/** What claiming found: the children to apply, or (never adopting) the names taken by others. */
export type Claim =
  | { readonly planned: readonly PlannedChild[]; readonly notOwned?: undefined }
  | { readonly planned?: undefined; readonly notOwned: readonly NotOwned[] };

type Change = Observed['changes'][number];

/** A child the API server refused; `fresh` when this reconcile asked, not when an earlier refusal stood. */
export interface Refusal {
  readonly refused: TerminalError;
  readonly fresh: boolean;
}

/**
 * What the apply step did, child by child. It stops at the first error it cannot take (a child the
 * API server refuses as invalid is not one: it is recorded and the others go on); what it did
 * before stays recorded, with the error, so the status and Events still tell what was done.
 */
export interface AppliedChildren {
  /** The children before their writes (for "scaled from 3 to 5"), by `Kind/name`. */
  readonly before: ChildMap;
  /** The children as written, by `Kind/name`. */
  readonly written: ChildMap;
  readonly changes: readonly Change[];
  /** Children not applied because what they wait for is not ready, by `Kind/name`. */
  readonly held: ReadonlyMap<string, ChildHealth>;
  /** Children the API server refused (an immutable field changed, a value it does not take), by `Kind/name`. */
  readonly refused: ReadonlyMap<string, Refusal>;
  /** What stopped the step before its last child. */
  readonly error?: unknown;
}

/** What the prune step deleted; like apply, it stops at an error it cannot take, with what it did before. */
export interface PrunedChildren {
  /** The deleted children as they were, by `Kind/name`. */
  readonly before: ChildMap;
  readonly changes: readonly Change[];
  readonly error?: unknown;
}

const NOTHING_APPLIED: AppliedChildren = {
  before: new ChildMap(),
  written: new ChildMap(),
  changes: [],
  held: new Map(),
  refused: new Map(),
};

/** The children this reconcile wrote: what apply and prune returned, together. */
export class ChildWrites {
  readonly before: ChildMap;
  readonly written: ChildMap;
  readonly changes: readonly Change[];
  readonly held: ReadonlyMap<string, ChildHealth>;
  readonly refused: ReadonlyMap<string, Refusal>;

  constructor(applied: AppliedChildren = NOTHING_APPLIED, pruned?: PrunedChildren) {
    this.before = new ChildMap(applied.before);
    for (const [key, o] of pruned?.before ?? []) this.before.set(key, o);
    this.written = applied.written;
    this.changes = [...applied.changes, ...(pruned?.changes ?? [])];
    this.held = applied.held;
    this.refused = applied.refused;
  }

  wasDeleted(key: string): boolean {
    return this.changes.some((c) => c.verb === 'Deleted' && childKey(c.kind, c.name) === key);
  }
}

/** Everything the status step reads: what the steps before it produced. */
export interface Outcome {
  readonly writes: ChildWrites;
  /** The children as they are now: the written ones, and the cache's for the rest. */
  readonly children: ChildMap;
  readonly external?: ExternalStep;
  readonly terminal?: TerminalError;
  readonly notOwned: readonly NotOwned[];
  readonly prepared?: object;
}

/**
 * Observe: the resource to reconcile, or undefined when it is gone or being deleted — owner
 * references let the garbage collector remove its children, and what is remembered of it goes.
 * (A deleted resource holding the kind's finalizer is finalized instead: see finalizer.ts.)
 */
export function observe(parts: ControllerParts, req: Request): Resource | undefined {
  const key = objectKey(req);
  const resource = parts.resources.get(key);
  if (resource && !resource.metadata.deletionTimestamp) return resource;
  forget(parts, key);
  return undefined;
}

/** External: the declaration's work on a system outside Kubernetes, before rendering. */
export async function runExternal(parts: ControllerParts, t: Target): Promise<ExternalStep | undefined> {
  if (!parts.decl.external) return undefined;
  return parts.decl.external(t.resource, cachedChildren(parts, t.uid), { signal: t.ctx.signal });
}

/** The terminal error already reported for this very generation, if any. */
export function knownTerminal(parts: ControllerParts, t: Target): TerminalError | undefined {
  const known = parts.refused.get(t.key);
  if (known?.uid === t.uid && known.generation === t.generation) return known.error;
  parts.refused.delete(t.key);
  return undefined;
}

/** Records a terminal error of this reconcile; `remember` keeps it until the generation changes. */
export function recordTerminal(parts: ControllerParts, t: Target, error: TerminalError, remember: boolean): void {
  if (remember) parts.refused.set(t.key, { uid: t.uid, generation: t.generation, error });
  parts.metrics.terminalReconcileErrors.inc({ controller: parts.decl.name });
  t.ctx.logger.warn(
    { err: error, reason: error.reason },
    isInvalid(error.cause)
      ? 'the API server refused a desired child; not retrying until the spec changes'
      : 'the spec cannot be satisfied; not retrying until it changes',
  );
}

const NOTHING_RENDERED: RenderedChildren = { objects: [], waits: new Map() };

/**
 * Render: the desired children, from the construct, with the waits between them (the last
 * render is reused while its input is the same).
 */
export function renderDesired(parts: ControllerParts, t: Target, facts: object | undefined): RenderedChildren {
  const { decl, type } = parts;
  if (!decl.render) return NOTHING_RENDERED;
  return parts.renders.get(t.key, renderInput(t.resource, facts), () =>
    renderWithWaits((scope) => {
      decl.render?.(scope, t.resource, { owner: controllerReference(t.resource, type), external: facts });
    }, resourceAddress(t.resource.metadata)),
  );
}

/**
 * What a render may read: the whole resource (a render function may read its status too) and
 * the external facts, without the bookkeeping that changes on every write.
 */
function renderInput(resource: KubeObject, facts: unknown): string {
  return JSON.stringify([withoutBookkeeping(resource), facts ?? null]);
}

/**
 * Claim: each desired child with what the cache has under its name. Never adopt: if any name is
 * taken by an object this resource does not control, nothing is planned (a partial set of
 * children would be as wrong) and `notOwned` says which.
 */
export function claimChildren(parts: ControllerParts, t: Target, rendered: RenderedChildren): Claim {
  const planned = rendered.objects.map((d) => {
    const owned = d.kind === undefined ? undefined : parts.owned.get(d.kind);
    if (!owned)
      throw new Error(`controller ${parts.decl.name} renders a ${d.kind} but does not own ${d.kind}s: add it to owns`);
    const namespace = d.metadata.namespace ?? t.namespace;
    const key = childKey(owned.type.kind, d.metadata.name ?? '');
    const cached = owned.informer.get(objectKey({ namespace, name: d.metadata.name }));
    const current = parts.written.current(t.key, key, cached, owned.informer.seenResourceVersion(namespace));
    const waitsFor = rendered.waits.get(key) ?? [];
    return { desired: d, owned, current, waitsFor };
  });
  const notOwned = planned.flatMap(({ current }) => {
    const reason = current && notOwnedReason(current, t.uid, t.ctx.client.fieldManager);
    return reason ? [{ blocker: Blockers.key(current.kind, current), reason }] : [];
  });
  if (notOwned.length === 0) return { planned };
  t.ctx.logger.warn(
    { notOwned: notOwned.map((n) => n.reason) },
    "a child's name is taken by an object this resource does not control; leaving it alone",
  );
  return { notOwned };
}

/**
 * Apply: each child whose owned fields would change, with server-side apply — in the order
 * rendered (a child after what it waits for), and a child that waits for one not ready yet not
 * at all: it is held, as it is (see `waitsFor`). A child the API server refuses is recorded in
 * `refused` and the others are still applied; at the same generation it is not sent again while
 * it stays as it was (deleted, or changed by someone, it is).
 */
export async function applyChildren(
  parts: ControllerParts,
  t: Target,
  planned: readonly PlannedChild[],
): Promise<AppliedChildren> {
  const done = {
    before: new ChildMap(),
    written: new ChildMap(),
    changes: [] as Change[],
    held: new Map(),
    refused: new Map(),
  };
  const cached = new Map(planned.map((p) => [childKey(p.owned.type.kind, p.desired.metadata.name ?? ''), p.current]));
  const refusedBefore = refusedChildrenOf(parts, t);
  try {
    for (const child of planned) await applyChild(parts, t, child, { done, cached, refusedBefore });
  } catch (error) {
    return { ...done, error };
  }
  return done;
}

/** One planned child applied, held or refused, recorded in `done`. */
async function applyChild(
  parts: ControllerParts,
  t: Target,
  { desired, owned, current, waitsFor }: PlannedChild,
  {
    done,
    cached,
    refusedBefore,
  }: {
    done: {
      before: ChildMap;
      written: ChildMap;
      changes: Change[];
      held: Map<string, ChildHealth>;
      refused: Map<string, Refusal>;
    };
    cached: ReadonlyMap<string, KubeObject | undefined>;
    refusedBefore: RefusedChildren['children'];
  },
): Promise<void> {
  // Stopping (shutdown, or leadership lost): write nothing more; the next leader goes on.
  t.ctx.signal.throwIfAborted();
  const name = desired.metadata.name ?? '';
  const key = childKey(owned.type.kind, name);
  if (current) done.before.set(key, current);
  // Held only when there is something to write: a child as its spec asks stays as it is.
  const changes = !current || needsApply(desired, current, t.ctx.client.fieldManager);
  const waiting = changes ? waitingOn(waitsFor, (k) => done.written.get(k) ?? cached.get(k)) : [];
  if (waiting.length) {
    const message = `waits for ${waiting.join(', ')}`;
    done.held.set(key, { kind: owned.type.kind, name, readiness: 'InProgress', reason: 'Waiting', message });
    return;
  }
  const outcome = await applyUnlessRefused(t, { owned, desired, current, changes }, refusedBefore.get(key));
  if ('refused' in outcome) {
    done.refused.set(key, outcome);
    if (outcome.fresh)
      refusedBefore.set(key, { resourceVersion: current?.metadata.resourceVersion, error: outcome.refused });
    return;
  }
  refusedBefore.delete(key);
  done.written.set(key, outcome.object);
  if (!outcome.applied) return;
  parts.written.note(t.key, key, outcome.object);
  done.changes.push({ verb: current ? 'Updated' : 'Created', kind: owned.type.kind, name });
  t.ctx.logger.info({ kind: desired.kind, child: name }, current ? 'updated child' : 'created child');
}

/** The refusals remembered for this resource at its generation (a new generation starts afresh). */
function refusedChildrenOf(parts: ControllerParts, t: Target): RefusedChildren['children'] {
  const known = parts.refusedChildren.get(t.key);
  if (known?.uid === t.uid && known.generation === t.generation) return known.children;
  const fresh: RefusedChildren = { uid: t.uid, generation: t.generation, children: new Map() };
  parts.refusedChildren.set(t.key, fresh);
  return fresh.children;
}

/**
 * A child applied (when it changes), or the API server's refusal of it as a terminal error:
 * asked now (`fresh`), or the one that stands for a child that has not changed since.
 */
async function applyUnlessRefused(
  t: Target,
  child: { owned: OwnedType; desired: KubeObject; current: KubeObject | undefined; changes: boolean },
  standing: { readonly resourceVersion?: string; readonly error: TerminalError } | undefined,
): Promise<{ object: KubeObject; applied: boolean } | { refused: TerminalError; fresh: boolean }> {
  const { owned, desired, current } = child;
  if (child.changes && standing && standing.resourceVersion === current?.metadata.resourceVersion)
    return { refused: standing.error, fresh: false };
  try {
    return await applyIfChanged(t.ctx.client, owned.type, desired, current);
  } catch (err) {
    if (!isInvalid(err)) throw err;
    return { refused: refusalOf(err, owned.type.kind, desired, current), fresh: true };
  }
}

/**
 * The terminal error of a refused child, saying what to do when the refusal is of an immutable
 * field: the API server never changes one in place, so the child must be made again.
 */
function refusalOf(err: unknown, kind: string, desired: KubeObject, current: KubeObject | undefined): TerminalError {
  const name = desired.metadata.name ?? '';
  const namespace = desired.metadata.namespace ?? current?.metadata.namespace;
  const said = err instanceof Error ? err.message : String(err);
  const how =
    current && said.includes('field is immutable')
      ? `. The API server does not change an immutable field in place: delete the ${kind} (kubectl delete ${kind.toLowerCase()} ${name}${namespace ? ` -n ${namespace}` : ''}) and the operator makes it again from the new spec`
      : '';
  return new TerminalError(`${said}${how}`.slice(0, 1024), 'Invalid', { cause: err });
}

/**
 * The refusals of this reconcile as one terminal error (reported in status as the API server's
 * refusal), or undefined when every child was taken. Logged and counted when newly refused only.
 */
export function refusedTerminal(parts: ControllerParts, t: Target, writes: ChildWrites): TerminalError | undefined {
  const refusals = [...writes.refused.values()];
  const first = refusals[0];
  if (!first) return undefined;
  const message = refusals.map((r) => r.refused.message).join('; ');
  const error = new TerminalError(message.slice(0, 32768), 'Invalid', { cause: first.refused.cause });
  if (refusals.some((r) => r.fresh)) recordTerminal(parts, t, error, false);
  return error;
}

/** Prune, as kubectl's ApplySets do: owned children of a deletable kind that apply neither wrote, held nor saw refused. */
export async function pruneChildren(
  parts: ControllerParts,
  t: Target,
  applied: AppliedChildren,
): Promise<PrunedChildren> {
  const done = { before: new ChildMap(), changes: [] as Change[] };
  try {
    for (const { type, informer } of parts.deletable) {
      for (const o of informer.listControlledBy(t.uid)) {
        const name = o.metadata.name ?? '';
        const key = childKey(type.kind, name);
        if (applied.written.has(key) || applied.held.has(key) || applied.refused.has(key)) continue;
        done.before.set(key, o);
        await deleteChild(t, type, o);
        done.changes.push({ verb: 'Deleted', kind: type.kind, name });
        t.ctx.logger.info({ kind: type.kind, child: o.metadata.name }, 'deleted child no longer rendered');
      }
    }
  } catch (error) {
    return { ...done, error };
  }
  return done;
}

/** Deletes only this object: one made again under its name since is not ours to delete. Gone already is done. */
async function deleteChild(t: Target, type: ResourceType, o: KubeObject): Promise<void> {
  try {
    await t.ctx.client.delete(type, o.metadata.name ?? '', o.metadata.namespace, { uid: o.metadata.uid });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}

/** Blockers: the objects in the way of this resource's children now, so a change to one of them reconciles it again. */
export function recordBlockers(parts: ControllerParts, t: Target, notOwned: readonly NotOwned[]): void {
  parts.blockers.set(
    t.key,
    notOwned.map((n) => n.blocker),
  );
}

/** The children as they are now: those written, and — not (re)applied after a refusal, or when blocked — the cache's. */
export function currentChildren(parts: ControllerParts, t: Target, writes: ChildWrites): ChildMap {
  const children = new ChildMap(writes.written);
  for (const [key, o] of cachedChildren(parts, t.uid)) {
    if (!children.has(key) && !writes.wasDeleted(key)) children.set(key, o);
  }
  return children;
}

/** Prepare: the declaration's writes after the children (e.g. a generated Secret), when they were applied. */
export async function runPrepare(
  parts: ControllerParts,
  t: Target,
  children: ChildMap,
  applied: boolean,
): Promise<object | undefined> {
  if (!parts.decl.prepare || !applied) return undefined;
  return parts.decl.prepare(prepareApi(t.ctx.client), t.resource, children);
}

/**
 * Status: what the kind's status function makes of what was observed, with `Degraded=True`
 * where the runtime knows better — a child name taken by someone else's object (ChildNotOwned),
 * or a terminal error the kind does not report itself (one that is not the API server's refusal).
 */
export function computeStatus(
  parts: ControllerParts,
  t: Target,
  outcome: Outcome,
): { observed: Observed; status: object | undefined } {
  const { decl } = parts;
  const { terminal, notOwned } = outcome;
  const refusal = terminal && isInvalid(terminal.cause) ? terminal.message : undefined;
  const childFailure = parts.failures?.find(t.namespace, t.resource.metadata.name);
  const observed: Observed = {
    children: outcome.children,
    before: outcome.writes.before,
    changes: outcome.writes.changes,
    read: <T extends KubeObject>(
      type: ResourceType<T>,
      labels?: Record<string, string>,
      options?: { readonly allNamespaces?: boolean },
    ): T[] => {
      const inf = parts.reads.get(`${type.group}/${type.kind}`);
      if (!inf) throw new Error(`controller ${decl.name} reads ${type.kind} but does not declare it in reads`);
      // The informer of a type holds only that type's objects.
      return inf.list(options?.allNamespaces ? undefined : t.namespace, labels) as T[];
    },
    applyError: refusal,
    childFailure,
    health: assessChildren({
      children: outcome.children.values(),
      podsOf: (child) => podsOf(parts, child),
      held: [...outcome.writes.held.values()],
      failureEvent: childFailure,
    }),
    prepared: outcome.prepared,
    external: outcome.external?.facts,
    now: new Date(),
  };
  let status = decl.status?.(t.resource, observed);
  if (notOwned.length) {
    const message = `${notOwned.map((n) => n.reason).join('; ')}. The operator never takes over an object it did not create: rename or delete that object, or give this resource another name`;
    status = withDegraded(status, { reason: 'ChildNotOwned', message }, t.generation, observed.now);
  } else if (terminal && !refusal) {
    status = withDegraded(status, terminal, t.generation, observed.now);
  }
  if (refusal) status = withRefusal(status, refusal, t.generation, observed.now);
  status = withScaleStatus(status, decl.for.scaleStatus, outcome.children.values());
  return { observed, status: withSummary(status, t.generation, observed.now) };
}

/**
 * The status with the scale subresource's fields the kind leaves to the runtime (see
 * `KindDescriptor.scaleStatus`): its workloads' pods and their selector. A field the kind's
 * status function sets itself is kept as it is.
 */
function withScaleStatus(
  status: object | undefined,
  writes: KindDescriptor['scaleStatus'],
  children: Iterable<KubeObject>,
): object | undefined {
  if (!status || !writes || (!writes.replicas && !writes.selector)) return status;
  const scale = scaleStatusOf(children);
  return {
    ...(writes.replicas ? { replicas: scale.replicas } : {}),
    ...(writes.selector && scale.selector ? { selector: scale.selector } : {}),
    ...status,
  };
}

/**
 * The status with the conditions a refused child makes true whatever the kind computed from the
 * children the cache still holds: not `Available` (what runs is not what the spec asks) and not
 * `Progressing` (nothing moves until the refusal is dealt with), each naming the child and why.
 */
function withRefusal(status: object | undefined, refusal: string, generation: number, now: Date): object | undefined {
  const message = `a child was refused: ${refusal}`;
  const refused = (type: string) =>
    ({ type, status: 'False', reason: 'ChildRefused', message, observedGeneration: generation }) as const;
  return withConditions(status, (conditions) => {
    const list = setCondition(conditions, refused('Available'), now);
    return findCondition(list, 'Progressing') ? setCondition(list, refused('Progressing'), now) : list;
  });
}

/** The status with `Ready`, `Reconciling` and `Stalled` derived from its conditions (see `withSummaryConditions`). */
function withSummary(status: object | undefined, generation: number, now: Date): object | undefined {
  return withConditions(status, (conditions) => withSummaryConditions(conditions, generation, now));
}

/** The status with its conditions changed by `change`; a status without conditions is left as it is. */
function withConditions(
  status: object | undefined,
  change: (conditions: Condition[]) => Condition[],
): object | undefined {
  const conditions = conditionsOf(status);
  if (!status || !conditions) return status;
  return { ...status, conditions: change(conditions) };
}

/**
 * The cached pods a workload child made: a StatefulSet's, DaemonSet's, Job's or ReplicaSet's by
 * the controller index; a Deployment's among those its selector's labels match, by the name of
 * their ReplicaSet (see `podWorkloads`).
 */
function podsOf(parts: ControllerParts, child: KubeObject): readonly Pod[] {
  const pods = parts.pods;
  if (!pods || !POD_WORKLOAD_KINDS.includes(child.kind ?? '')) return [];
  if (child.kind !== 'Deployment') return pods.listControlledBy(child.metadata.uid ?? '');
  const selector = isJsonObject(child.spec) && isJsonObject(child.spec.selector) ? child.spec.selector : {};
  const labels = isJsonObject(selector.matchLabels) ? stringsOf(selector.matchLabels) : {};
  return pods.list(child.metadata.namespace, labels).filter((p) => madeBy(p, child));
}

function stringsOf(record: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The status with `Degraded=True` for this reason; a status without conditions is left as it is. */
function withDegraded(
  status: object | undefined,
  problem: { readonly reason: string; readonly message: string },
  generation: number,
  now: Date,
): object | undefined {
  const degraded = {
    type: 'Degraded',
    status: 'True' as const,
    reason: problem.reason,
    message: problem.message.slice(0, 32768),
    observedGeneration: generation,
  };
  return withConditions(status, (conditions) => setCondition(conditions, degraded, now));
}

/**
 * Events: the external step's, the kind's (or one per changed child), and a Warning when
 * `Degraded` turns True — each once while a status write waits.
 */
export async function recordEvents(
  parts: ControllerParts,
  t: Target,
  reported: { observed: Observed; status: object | undefined; external?: ExternalStep; paced: PacedReconcile },
): Promise<void> {
  const { observed, status, external, paced } = reported;
  const events = [...(external?.events ?? []), ...eventsOf(parts.decl, t.resource, observed, status)];
  const degraded = degradedWarning(t.resource, status, paced);
  for (const e of degraded ? [...events, degraded] : events) {
    if (paced.isNewEvent(e)) await t.ctx.recorder.record(t.resource, e.type, e.reason, e.message);
  }
}

/**
 * The Warning of `Degraded` turning True (or True for another reason): judged against what this
 * process last warned of as well as the cached status, which may not show a status just written.
 */
function degradedWarning(resource: Resource, status: object | undefined, paced: PacedReconcile): EventSpec | undefined {
  const now = findCondition(conditionsOf(status), 'Degraded');
  if (now?.status !== 'True') {
    paced.setDegradedWarned(undefined);
    return undefined;
  }
  const was = findCondition(resource.status?.conditions, 'Degraded');
  const known = (was?.status === 'True' && was.reason === now.reason) || paced.degradedWarned() === now.reason;
  paced.setDegradedWarned(now.reason);
  return known ? undefined : { type: 'Warning', reason: now.reason, message: now.message };
}

function eventsOf(
  decl: ControllerDeclaration<Resource>,
  resource: Resource,
  observed: Observed,
  status: object | undefined,
): EventSpec[] {
  const events = decl.events
    ? decl.events(resource, observed, status)
    : observed.changes.map((c) => ({
        type: 'Normal' as const,
        reason: c.verb,
        message: `${c.verb} ${c.kind} ${c.name}`,
      }));
  return events;
}

/**
 * Write: the status through the status subresource when it changed — or, while children just
 * changed (their own status follows in a moment), a requeue for when that burst has passed.
 */
export async function writeStatus(
  parts: ControllerParts,
  t: Target,
  written: { status: object | undefined; childrenChanged: boolean; requeueAfterMs?: number; paced: PacedReconcile },
): Promise<Result | undefined> {
  const { status, paced } = written;
  let requeueAfterMs = written.requeueAfterMs;
  if (status && !sameJson(status, t.resource.status ?? {})) {
    const wait = paced.waitBeforeWrite(written.childrenChanged);
    if (wait > 0) {
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, wait);
    } else {
      try {
        await applyStatus(t.ctx.client, parts.type, t.resource, status);
      } catch (err) {
        // Deleted while it was reconciled: no status to write, and its deletion's event forgets it.
        if (!isNotFound(err)) throw err;
        t.ctx.logger.debug({ err }, 'resource deleted during its reconcile; its status was not written');
        return undefined;
      }
      paced.written();
    }
  }
  return requeueAfterMs ? { requeueAfterMs } : undefined;
}
