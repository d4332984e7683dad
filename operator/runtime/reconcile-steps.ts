/**
 * The steps of a declared controller's reconcile, in the order the builder runs them:
 * observe → (finalize | keep the finalizer) → external → render → claim → apply → prune →
 * prepare → status → events → write.
 * Each is a short function of the controller's parts and the reconcile's state, so each can be
 * read, tested and extended (a finalize step, a conversion hook) on its own.
 */
import type {
  ControllerDeclaration,
  CustomResourceObject,
  EventSpec,
  ExternalStep,
  KubeObject,
  Observed,
  PrepareApi,
  ResourceType,
} from '../../constructs/contract';
import { ChildMap, childKey } from '../../constructs/contract';
import type { ChildFailures } from './child-failures';
import { applyIfChanged, applyStatus, controllerReference, notOwnedReason } from './children';
import { isConflict, isInvalid, isNotFound, type KubeClient } from './client';
import { type Condition, findCondition, setCondition } from './conditions';
import type { ReconcileContext, Request, Result } from './controller';
import { jsonEqual } from './diff';
import { type TerminalError } from './errors';
import type { Informer } from './informer';
import type { Metrics } from './metrics';
import { renderConstructs } from './render';
import type { RenderCache } from './render-cache';
import { objectKey, withoutBookkeeping } from './resource';
import { Blockers } from './blockers';
import type { PacedReconcile, StatusPacer } from './status-pacer';

/** A type the controller owns, with its informer. */
export interface OwnedType {
  readonly type: ResourceType;
  readonly informer: Informer;
}

/** What every reconcile of one controller shares: its declaration, caches and memory. */
export interface ControllerParts {
  readonly decl: ControllerDeclaration<Resource>;
  readonly type: ResourceType;
  readonly resources: Informer;
  /** By kind. */
  readonly owned: ReadonlyMap<string, OwnedType>;
  /** By `group/kind`. */
  readonly reads: ReadonlyMap<string, Informer>;
  readonly deletable: readonly OwnedType[];
  readonly failures?: ChildFailures;
  readonly renders: RenderCache<KubeObject[]>;
  /** Terminal errors of the apply phase, by resource key: not retried until the generation changes. */
  readonly refused: Map<string, { readonly uid: string; readonly generation: number; readonly error: TerminalError }>;
  readonly pacer: StatusPacer;
  readonly blockers: Blockers;
  readonly metrics: Metrics;
}

/** A custom resource as the steps read it. */
export type Resource = CustomResourceObject<unknown, { conditions?: Condition[] }>;

/** A desired child, with what the cache holds under its name. */
interface PlannedChild {
  readonly desired: KubeObject;
  readonly owned: OwnedType;
  readonly current: KubeObject | undefined;
}

/** One reconcile's working state, filled in step by step. */
export class ReconcileState {
  /** The children before this reconcile's writes (for "scaled from 3 to 5"), by `Kind/name`. */
  readonly before = new ChildMap();
  /** The children as they are now, by `Kind/name`. */
  readonly children = new ChildMap();
  readonly changes: Observed['changes'][number][] = [];
  /** Children whose names are taken by objects this resource does not control. */
  readonly notOwned: { readonly blocker: string; readonly reason: string }[] = [];
  external?: ExternalStep;
  /** Why the spec cannot be satisfied as it is: nothing more is tried until it changes. */
  terminal?: TerminalError;
  prepared?: object;

  constructor(
    readonly key: string,
    readonly resource: Resource,
    readonly ctx: ReconcileContext,
  ) {}

  get uid(): string {
    // The API server gives every stored object a uid.
    return this.resource.metadata.uid ?? '';
  }

  get generation(): number {
    return this.resource.metadata.generation ?? 0;
  }

  get namespace(): string | undefined {
    return this.resource.metadata.namespace;
  }
}

/**
 * Observe: the resource to reconcile, or undefined when it is gone or being deleted — owner
 * references let the garbage collector remove its children, and what is remembered of it goes.
 * (A deleted resource holding the kind's finalizer is finalized instead: see finalizer.ts.)
 */
export function observe(parts: ControllerParts, req: Request): Resource | undefined {
  const key = objectKey(req);
  const resource = parts.resources.get(key) as Resource | undefined;
  if (resource && !resource.metadata.deletionTimestamp) return resource;
  forget(parts, key);
  return undefined;
}

/** Forgets what was remembered of a resource that is gone or going. */
export function forget(parts: ControllerParts, key: string): void {
  parts.refused.delete(key);
  parts.pacer.forget(key);
  parts.blockers.set(key, []);
}

/** External: the declaration's work on a system outside Kubernetes, before rendering. */
export async function runExternal(parts: ControllerParts, s: ReconcileState): Promise<void> {
  if (parts.decl.external)
    s.external = await parts.decl.external(s.resource, cachedChildren(parts, s.uid), { signal: s.ctx.signal });
}

/** The terminal error already reported for this very generation, if any. */
export function knownTerminal(parts: ControllerParts, s: ReconcileState): TerminalError | undefined {
  const known = parts.refused.get(s.key);
  if (known?.uid === s.uid && known.generation === s.generation) return known.error;
  parts.refused.delete(s.key);
  return undefined;
}

/** Records a terminal error of this reconcile; `remember` keeps it until the generation changes. */
export function recordTerminal(
  parts: ControllerParts,
  s: ReconcileState,
  error: TerminalError,
  remember: boolean,
): void {
  s.terminal = error;
  if (remember) parts.refused.set(s.key, { uid: s.uid, generation: s.generation, error });
  parts.metrics.terminalReconcileErrors.inc({ controller: parts.decl.name });
  s.ctx.logger.warn(
    { err: error, reason: error.reason },
    isInvalid(error.cause)
      ? 'the API server refused a desired child; not retrying until the spec changes'
      : 'the spec cannot be satisfied; not retrying until it changes',
  );
}

/** Render: the desired children, from the construct (the last render is reused while its input is the same). */
export function renderDesired(parts: ControllerParts, s: ReconcileState): KubeObject[] {
  const { decl, type } = parts;
  if (!decl.render) return [];
  const facts = s.external?.facts;
  return parts.renders.get(s.key, renderInput(s.resource, facts), () =>
    renderConstructs((scope) => {
      decl.render?.(scope, s.resource, { owner: controllerReference(s.resource, type), external: facts });
    }),
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
 * taken by an object this resource does not control, nothing is returned (a partial set of
 * children would be as wrong) and `notOwned` says which.
 */
export function claimChildren(
  parts: ControllerParts,
  s: ReconcileState,
  desired: readonly KubeObject[],
): PlannedChild[] | undefined {
  const planned = desired.map((d) => {
    const owned = d.kind === undefined ? undefined : parts.owned.get(d.kind);
    if (!owned)
      throw new Error(`controller ${parts.decl.name} renders a ${d.kind} but does not own ${d.kind}s: add it to owns`);
    const current = owned.informer.get(
      objectKey({ namespace: d.metadata.namespace ?? s.namespace, name: d.metadata.name }),
    );
    return { desired: d, owned, current };
  });
  for (const { current } of planned) {
    const reason = current && notOwnedReason(current, s.uid, s.ctx.client.fieldManager);
    if (reason) s.notOwned.push({ blocker: Blockers.key(current.kind, current), reason });
  }
  if (s.notOwned.length === 0) return planned;
  s.ctx.logger.warn(
    { notOwned: s.notOwned.map((n) => n.reason) },
    "a child's name is taken by an object this resource does not control; leaving it alone",
  );
  return undefined;
}

/** Apply: each child whose owned fields would change, with server-side apply. */
export async function applyChildren(s: ReconcileState, planned: readonly PlannedChild[]): Promise<void> {
  for (const { desired, owned, current } of planned) {
    // Stopping (shutdown, or leadership lost): write nothing more; the next leader goes on.
    s.ctx.signal.throwIfAborted();
    const key = childKey(owned.type.kind, desired.metadata.name ?? '');
    if (current) s.before.set(key, current);
    const { object, applied } = await applyIfChanged(s.ctx.client, owned.type, desired, current);
    s.children.set(key, object);
    if (applied) {
      s.changes.push({
        verb: current ? 'Updated' : 'Created',
        kind: owned.type.kind,
        name: desired.metadata.name ?? '',
      });
      s.ctx.logger.info(
        { kind: desired.kind, child: desired.metadata.name },
        current ? 'updated child' : 'created child',
      );
    }
  }
}

/** Prune, as kubectl's ApplySets do: owned children of a deletable kind no longer rendered. */
export async function pruneChildren(parts: ControllerParts, s: ReconcileState): Promise<void> {
  for (const { type: t, informer } of parts.deletable) {
    for (const o of informer.listControlledBy(s.uid)) {
      const key = childKey(t.kind, o.metadata.name ?? '');
      if (s.children.has(key)) continue;
      s.before.set(key, o);
      try {
        // Only this object: one made again under its name since is not ours to delete.
        await s.ctx.client.delete(t, o.metadata.name ?? '', o.metadata.namespace, { uid: o.metadata.uid });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      s.changes.push({ verb: 'Deleted', kind: t.kind, name: o.metadata.name ?? '' });
      s.ctx.logger.info({ kind: t.kind, child: o.metadata.name }, 'deleted child no longer rendered');
    }
  }
}

/** Children not (re)applied this time — after a refusal, or when blocked — are as the cache has them. */
export function fillFromCache(parts: ControllerParts, s: ReconcileState): void {
  for (const [key, o] of cachedChildren(parts, s.uid)) {
    if (!s.children.has(key) && !s.changes.some((c) => c.verb === 'Deleted' && childKey(c.kind, c.name) === key))
      s.children.set(key, o);
  }
}

/** Prepare: the declaration's writes after the children (e.g. a generated Secret), when they were applied. */
export async function runPrepare(parts: ControllerParts, s: ReconcileState): Promise<void> {
  const { decl } = parts;
  if (!decl.prepare || s.terminal || s.notOwned.length) return;
  const api = prepareApi(s.ctx.client);
  s.prepared = await decl.prepare(api, s.resource, s.children);
}

/**
 * Status: what the kind's status function makes of what was observed, with `Degraded=True`
 * where the runtime knows better — a child name taken by someone else's object (ChildNotOwned),
 * or a terminal error the kind does not report itself (one that is not the API server's refusal).
 */
export function computeStatus(
  parts: ControllerParts,
  s: ReconcileState,
): { observed: Observed; status: object | undefined } {
  const { decl } = parts;
  const refusal = s.terminal && isInvalid(s.terminal.cause) ? s.terminal.message : undefined;
  const observed: Observed = {
    children: s.children,
    before: s.before,
    changes: s.changes,
    read: <T extends KubeObject>(
      t: ResourceType<T>,
      labels?: Record<string, string>,
      options?: { readonly allNamespaces?: boolean },
    ): T[] => {
      const inf = parts.reads.get(`${t.group}/${t.kind}`);
      if (!inf) throw new Error(`controller ${decl.name} reads ${t.kind} but does not declare it in reads`);
      // The informer of a type holds only that type's objects.
      return inf.list(options?.allNamespaces ? undefined : s.namespace, labels) as T[];
    },
    applyError: refusal,
    childFailure: parts.failures?.find(s.namespace, s.resource.metadata.name),
    prepared: s.prepared,
    external: s.external?.facts,
    now: new Date(),
  };
  let status = decl.status?.(s.resource, observed);
  if (s.notOwned.length) {
    const message = `${s.notOwned.map((n) => n.reason).join('; ')}. The operator never takes over an object it did not create: rename or delete that object, or give this resource another name`;
    status = withDegraded(status, 'ChildNotOwned', message, s.generation, observed.now);
  } else if (s.terminal && !refusal) {
    status = withDegraded(status, s.terminal.reason, s.terminal.message, s.generation, observed.now);
  }
  return { observed, status };
}

/** The status with `Degraded=True` for this reason; a status without conditions is left as it is. */
function withDegraded(
  status: object | undefined,
  reason: string,
  message: string,
  generation: number,
  now: Date,
): object | undefined {
  const conditions = (status as { conditions?: Condition[] } | undefined)?.conditions;
  if (!status || !Array.isArray(conditions)) return status;
  return {
    ...status,
    conditions: setCondition(
      conditions,
      { type: 'Degraded', status: 'True', reason, message: message.slice(0, 32768), observedGeneration: generation },
      now,
    ),
  };
}

/**
 * Events: the external step's, the kind's (or one per changed child), and a Warning when
 * `Degraded` turns True — each once while a status write waits.
 */
export async function recordEvents(
  parts: ControllerParts,
  s: ReconcileState,
  observed: Observed,
  status: object | undefined,
  paced: PacedReconcile,
): Promise<void> {
  for (const e of [...(s.external?.events ?? []), ...eventsOf(parts.decl, s.resource, observed, status)]) {
    if (paced.isNewEvent(e)) await s.ctx.recorder.record(s.resource, e.type, e.reason, e.message);
  }
}

function eventsOf(
  decl: ControllerDeclaration,
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
  const now = findCondition((status as { conditions?: Condition[] } | undefined)?.conditions, 'Degraded');
  const was = findCondition(resource.status?.conditions, 'Degraded');
  if (now?.status === 'True' && !(was?.status === 'True' && was.reason === now.reason)) {
    events.push({ type: 'Warning', reason: now.reason, message: now.message });
  }
  return events;
}

/**
 * Write: the status through the status subresource when it changed — or, while children just
 * changed (their own status follows in a moment), a requeue for when that burst has passed.
 */
export async function writeStatus(
  parts: ControllerParts,
  s: ReconcileState,
  status: object | undefined,
  paced: PacedReconcile,
): Promise<Result | undefined> {
  let requeueAfterMs = s.external?.requeueAfterMs;
  if (status && !jsonEqual(status, s.resource.status ?? {})) {
    const wait = paced.waitBeforeWrite(s.changes.length > 0);
    if (wait > 0) {
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, wait);
    } else {
      await applyStatus(s.ctx.client, parts.type, s.resource, status);
      paced.written();
    }
  }
  return requeueAfterMs ? { requeueAfterMs } : undefined;
}

/** The owned children of a resource as cached, by `Kind/name`. */
export function cachedChildren(parts: ControllerParts, uid: string): ChildMap {
  const map = new ChildMap();
  for (const { type, informer } of parts.owned.values()) {
    for (const o of informer.listControlledBy(uid)) map.set(childKey(type.kind, o.metadata.name ?? ''), o);
  }
  return map;
}

/** The create-once writes a `prepare` or `finalize` step may make. */
export function prepareApi(client: KubeClient): PrepareApi {
  return { createIfAbsent: (t, o) => createIfAbsent(client, t, o) };
}

/** Creates an object unless one of its name exists (see PrepareApi). */
async function createIfAbsent(client: KubeClient, type: ResourceType, object: KubeObject): Promise<boolean> {
  try {
    await client.create(type, object, object.metadata.namespace);
    return true;
  } catch (err) {
    if (isConflict(err)) return false;
    throw err;
  }
}
