import { BuiltinTypes, ControllerDeclaration, customResourceType, EventSpec, ObjectLike, Observed, ResourceType } from '../../constructs/core/controller';
import { ChildFailures } from './child-failures';
import { applyIfChanged, applyStatus, controllerReference, notOwnedReason } from './children';
import { jsonEqual } from './diff';
import { isConflict, isInvalid, isNotFound, KubeClient } from './client';
import { findCondition, setCondition } from './conditions';
import { Controller, ControllerSetupOptions, ReconcileContext, Request, Result } from './controller';

export type { ControllerSetupOptions };
import type { Manager } from './manager';
import { renderConstructs } from './render';
import { RenderCache } from './render-cache';
import { apiVersionOf, KubeObject, objectKey, splitKey, withoutBookkeeping } from './resource';
import type { Condition } from './conditions';

const keyOf = (kind: string | undefined, name: string | undefined) => `${kind}/${name}`;

/** See ControllerSetupOptions.statusCoalesceMs. */
export const DEFAULT_STATUS_COALESCE_MS = 1000;

/** Renders kept per controller (see RenderCache): enough for the resources of a burst in flight. */
const RENDER_CACHE_SIZE = 256;

/**
 * What a render may read: the whole resource (a render function may read its status too) and
 * the external facts, without the bookkeeping that changes on every write.
 */
function renderInput(resource: KubeObject, facts: unknown): string {
  return JSON.stringify([withoutBookkeeping(resource), facts ?? null]);
}

/**
 * Builds the controller a declaration describes — controller-runtime's builder, driven by the
 * kind's one declaration instead of restated watches:
 * - informers for the kind (`for`), its children (`owns`, each change reconciling the
 *   controlling owner) and what it reads (`reads`, mapped to resources by `mapReads`), plus the
 *   failure Events of its children when it names a `failureOwner`;
 * - a reconcile that skips deleted resources, renders the desired children, applies those that
 *   changed (against what our field manager owns), prunes owned children of the `deletes` kinds
 *   that are no longer rendered, runs `prepare`, computes the status, records Events and writes
 *   the status only when it changed;
 * - never adopting: a child is applied only when it does not exist or this resource is its
 *   controller (its controller owner reference's uid). Otherwise nothing is applied, the
 *   status says `Degraded` (ChildNotOwned, naming the object and its owner), one Warning Event
 *   is recorded, and the resource is reconciled again when that object changes or goes. Updates
 *   and prunes carry the child's uid as a precondition;
 * - the terminal-error policy: a child the API server refuses as invalid (400/422) is not
 *   retried until the resource's spec changes (its generation); the status says why
 *   (`applyError`), and a Warning Event is recorded once, when `Degraded` turns True.
 * Any other error is thrown, and the work queue retries it with backoff.
 */
export function buildController(mgr: Manager, decl: ControllerDeclaration, options: ControllerSetupOptions): Controller {
  const type = customResourceType(decl.for);
  const resources = mgr.informer(type);
  const owned = new Map((decl.owns ?? []).map(t => [t.kind, { type: t, informer: mgr.informer(t) }] as const));
  const readTypes = (decl.reads ?? []).filter(t => !(decl.failureOwner && t === BuiltinTypes.CoreEvent));
  const reads = new Map(readTypes.map(t => [`${t.group}/${t.kind}`, mgr.informer(t)] as const));
  const deletable = (decl.deletes ?? []).map(t => owned.get(t.kind)!);
  // Refusals already reported, by resource key: not retried until the generation changes.
  // Keyed by name (not uid) so a deleted resource's entry can be dropped when it is gone.
  const refused = new Map<string, { uid: string; generation: number; message: string }>();
  // Status writes of a resource are at least `coalesceMs` apart, and come that long after its
  // children changed: a burst of child events becomes one write. By resource key: when its last
  // status write (or child change) was, and the Events recorded since.
  const coalesceMs = options.statusCoalesceMs ?? DEFAULT_STATUS_COALESCE_MS;
  const statusClock = new Map<string, { at: number; recorded: Set<string> }>();
  const renders = new RenderCache<KubeObject[]>(RENDER_CACHE_SIZE);
  // Objects in the way of a resource's children (not ours), by `Kind|namespace/name`: a change to
  // one (deleted, or handed to us) reconciles the resources it blocks. And the reverse, to clear.
  const blockers = new Map<string, Set<string>>();
  const blockedOn = new Map<string, string[]>();

  const controller = new Controller({ ...options, name: decl.name, reconciler: (req, ctx) => reconcile(req, ctx) });
  controller.for(resources);
  for (const { type: t, informer } of owned.values()) {
    controller.owns(informer, { apiVersion: apiVersionOf(type), kind: type.kind });
    controller.watches(informer, o => [...blockers.get(blockerKey(t.kind, o)) ?? []].map(splitKeyToRequest));
  }
  for (const t of readTypes) {
    const map = decl.mapReads?.[t.kind];
    if (map) {
      controller.watches(reads.get(`${t.group}/${t.kind}`)!, o => {
        const name = map(o);
        return name ? [{ namespace: o.metadata.namespace, name }] : [];
      });
    }
  }
  const failures = decl.failureOwner
    ? ChildFailures.watch(mgr, controller, involved => {
      const name = decl.failureOwner!(involved);
      return name ? { namespace: involved.namespace, name } : undefined;
    })
    : undefined;

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
    const key = objectKey(req);
    const resource = resources.get(key) as (KubeObject & { spec: unknown; status?: { conditions?: [] } }) | undefined;
    // Deleted: owner references let the garbage collector remove the children.
    if (!resource || resource.metadata.deletionTimestamp) {
      refused.delete(key);
      statusClock.delete(key);
      setBlockers(key, []);
      return;
    }
    const namespace = resource.metadata.namespace;
    const uid = resource.metadata.uid!;
    const generation = resource.metadata.generation ?? 0;

    const before = new Map<string, ObjectLike>();
    const children = new Map<string, ObjectLike>();
    const changes: Array<Observed['changes'][number]> = [];
    // Children whose names are taken by objects this resource does not control.
    const notOwned: Array<{ blocker: string; reason: string }> = [];
    const external = decl.external ? await decl.external(resource, cachedChildren(uid), { signal: ctx.signal }) : undefined;
    const known = refused.get(key);
    let applyError = known?.uid === uid && known.generation === generation ? known.message : undefined;
    if (!applyError) {
      refused.delete(key);
      try {
        await applyChildren();
      } catch (err) {
        if (!isInvalid(err)) throw err;
        applyError = (err instanceof Error ? err.message : String(err)).slice(0, 1024);
        refused.set(key, { uid, generation, message: applyError });
        ctx.logger.warn({ err: applyError }, 'the API server refused a desired child; not retrying until the spec changes');
      }
    }
    // Children not (re)applied this time — after a refusal — are as the cache has them.
    for (const [key, o] of cachedChildren(uid)) {
      if (!children.has(key) && !changes.some(c => c.verb === 'Deleted' && keyOf(c.kind, c.name) === key)) children.set(key, o);
    }

    setBlockers(key, notOwned.map(n => n.blocker));
    const prepared = decl.prepare && !applyError && notOwned.length === 0 ? await decl.prepare({ createIfAbsent: (t, o) => createIfAbsent(ctx.client, t, o) }, resource, children) : undefined;
    const observed: Observed = {
      children,
      before,
      changes,
      read: (t: ResourceType, labels?: Record<string, string>, options?: { allNamespaces?: boolean }) => {
        const inf = reads.get(`${t.group}/${t.kind}`);
        if (!inf) throw new Error(`controller ${decl.name} reads ${t.kind} but does not declare it in reads`);
        return inf.list(options?.allNamespaces ? undefined : namespace, labels);
      },
      applyError,
      childFailure: failures?.find(namespace, involved => decl.failureOwner!(involved) === resource.metadata.name),
      prepared,
      external: external?.facts,
      now: new Date(),
    };
    const status = withNotOwned(decl.status?.(resource, observed), notOwned.map(n => n.reason), generation, observed.now);
    const clock = statusClock.get(key) ?? { at: -Infinity, recorded: new Set<string>() };
    for (const e of [...external?.events ?? [], ...eventsOf(resource, observed, status)]) {
      // While a status write waits, the next reconciles compute the same transition Events.
      const id = `${e.type}|${e.reason}|${e.message}`;
      if (clock.recorded.has(id)) continue;
      clock.recorded.add(id);
      await ctx.recorder.record(resource, e.type, e.reason, e.message);
    }
    let requeueAfterMs = external?.requeueAfterMs;
    let waiting = false;
    if (status && !jsonEqual(status, resource.status ?? {})) {
      const now = Date.now();
      // Children just changed: their own status follows in a moment (a Deployment's replicas, its
      // pods), so the resource's status is written once that burst has passed, not per step.
      if (changes.length) clock.at = now;
      const wait = coalesceMs > 0 ? clock.at + coalesceMs - now : 0;
      waiting = wait > 0;
      if (waiting) {
        requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, wait);
      } else {
        await applyStatus(ctx.client, type, resource, status);
        clock.at = now;
      }
    }
    // Events are held back from repeating only while a status write waits.
    if (!waiting) clock.recorded.clear();
    statusClock.set(key, clock);
    return requeueAfterMs ? { requeueAfterMs } : undefined;

    async function applyChildren(): Promise<void> {
      const desired = decl.render
        ? renders.get(key, renderInput(resource!, external?.facts), () => renderConstructs(scope => decl.render!(scope, resource!, { owner: controllerReference(resource!, type), external: external?.facts })))
        : [];
      const planned = desired.map(d => {
        const child = owned.get(d.kind!);
        if (!child) throw new Error(`controller ${decl.name} renders a ${d.kind} but does not own ${d.kind}s: add it to owns`);
        const current = child.informer.get(objectKey({ namespace: d.metadata.namespace ?? namespace, name: d.metadata.name }));
        return { d, child, current };
      });
      // Never adopt: if any name is taken by an object this resource does not control, touch
      // nothing (a partial set of children would be as wrong), and say so in the status.
      for (const { current } of planned) {
        const reason = current && notOwnedReason(current, uid, ctx.client.fieldManager);
        if (reason) notOwned.push({ blocker: blockerKey(current!.kind, current!), reason });
      }
      if (notOwned.length) {
        ctx.logger.warn({ notOwned: notOwned.map(n => n.reason) }, 'a child\'s name is taken by an object this resource does not control; leaving it alone');
        return;
      }
      for (const { d, child, current } of planned) {
        // Stopping (shutdown, or leadership lost): write nothing more; the next leader goes on.
        ctx.signal.throwIfAborted();
        const key = keyOf(d.kind, d.metadata.name);
        if (current) before.set(key, current);
        const { object, applied } = await applyIfChanged(ctx.client, child.type, d, current);
        children.set(key, object);
        if (applied) {
          changes.push({ verb: current ? 'Updated' : 'Created', kind: d.kind!, name: d.metadata.name! });
          ctx.logger.info({ kind: d.kind, name: d.metadata.name }, current ? 'updated child' : 'created child');
        }
      }
      // Prune, as kubectl's ApplySets do: owned children of a deletable kind no longer rendered.
      for (const { type: t, informer } of deletable) {
        for (const o of informer.listControlledBy(uid)) {
          if (children.has(keyOf(t.kind, o.metadata.name))) continue;
          before.set(keyOf(t.kind, o.metadata.name), o);
          try {
            // Only this object: one made again under its name since is not ours to delete.
            await ctx.client.delete(t, o.metadata.name!, o.metadata.namespace, { uid: o.metadata.uid });
          } catch (err) {
            if (!isNotFound(err) && !isConflict(err)) throw err;
          }
          changes.push({ verb: 'Deleted', kind: t.kind, name: o.metadata.name! });
          ctx.logger.info({ kind: t.kind, name: o.metadata.name }, 'deleted child no longer rendered');
        }
      }
    }
  }

  /** Records which objects block `resource` now, replacing what blocked it before. */
  function setBlockers(resource: string, keys: string[]): void {
    for (const k of blockedOn.get(resource) ?? []) {
      const set = blockers.get(k);
      set?.delete(resource);
      if (set?.size === 0) blockers.delete(k);
    }
    if (keys.length === 0) {
      blockedOn.delete(resource);
      return;
    }
    blockedOn.set(resource, keys);
    for (const k of keys) {
      let set = blockers.get(k);
      if (!set) blockers.set(k, (set = new Set()));
      set.add(resource);
    }
  }

  /** The owned children of a resource as cached, by `Kind/name`. */
  function cachedChildren(uid: string): Map<string, ObjectLike> {
    const map = new Map<string, ObjectLike>();
    for (const { informer } of owned.values()) {
      for (const o of informer.listControlledBy(uid)) map.set(keyOf(o.kind, o.metadata.name), o);
    }
    return map;
  }

  /** The kind's Events (or one per changed child), and a Warning when Degraded turns True. */
  function eventsOf(resource: KubeObject & { spec: unknown; status?: { conditions?: [] } }, observed: Observed, status: object | undefined): EventSpec[] {
    const events = decl.events
      ? decl.events(resource, observed, status)
      : observed.changes.map(c => ({ type: 'Normal' as const, reason: c.verb, message: `${c.verb} ${c.kind} ${c.name}` }));
    const now = findCondition((status as { conditions?: [] } | undefined)?.conditions, 'Degraded');
    const was = findCondition(resource.status?.conditions, 'Degraded');
    if (now?.status === 'True' && !(was?.status === 'True' && was.reason === now.reason)) {
      events.push({ type: 'Warning', reason: now.reason, message: now.message });
    }
    return events;
  }

  return controller;
}

function blockerKey(kind: string | undefined, o: { metadata: { namespace?: string; name?: string } }): string {
  return `${kind}|${objectKey(o.metadata)}`;
}

function splitKeyToRequest(key: string): Request {
  return splitKey(key);
}

/**
 * The status with `Degraded=True ChildNotOwned` when children's names are taken by objects the
 * resource does not control: whatever the kind's own status says, that is why it is not as
 * specified. Kinds without conditions in their status are left as they are.
 */
function withNotOwned(status: object | undefined, reasons: string[], generation: number, now: Date): object | undefined {
  if (!status || reasons.length === 0) return status;
  const conditions = (status as { conditions?: Condition[] }).conditions;
  if (!Array.isArray(conditions)) return status;
  const message = `${reasons.join('; ')}. The operator never takes over an object it did not create: rename or delete that object, or give this resource another name`;
  return { ...status, conditions: setCondition(conditions, { type: 'Degraded', status: 'True', reason: 'ChildNotOwned', message: message.slice(0, 32768), observedGeneration: generation }, now) };
}

async function createIfAbsent(client: KubeClient, type: ResourceType, object: ObjectLike): Promise<boolean> {
  try {
    await client.create(type, object as KubeObject, object.metadata.namespace);
    return true;
  } catch (err) {
    if (isConflict(err)) return false;
    throw err;
  }
}
