import { WrittenChildren, ChildFailures, ownerByReferences, ownerOfClaim, ownerOfPod, RenderCache } from '../children';
import type { KubeObject, PersistentVolumeClaim, Pod, ResourceType } from '../../../constructs/contract';
import {
  BuiltinTypes,
  type ControllerDeclaration,
  customResourceType,
  healthReads,
} from '../../../constructs/contract';
import { Blockers } from './blockers';
import { Controller, type ControllerSetupOptions, type Manager } from '../controller';
import type { ControllerParts, Resource } from './controller-parts';
import type { Informer } from '../cache';
import { reconcile } from './pipeline';
import type { RenderedChildren } from '../../../constructs/contract/render';
import { apiVersionOf } from '../client';
import { StatusPacer } from './status-pacing';
import { realClock } from '../queue';

export type { ControllerSetupOptions };

/** See ControllerSetupOptions.statusCoalesceMs. */
export const DEFAULT_STATUS_COALESCE_MS = 1000;

/**
 * The renders kept per controller (see RenderCache), as their JSON's length: a Memcached's is
 * about 2 KB, so every resource's render at N = 10,000 fits (the bench's table gives what keeping
 * them costs in memory).
 */
const RENDER_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Builds the controller a declaration describes — controller-runtime's builder, driven by the
 * kind's one declaration instead of restated watches:
 * - informers for the kind (`for`), its children (`owns`, each change reconciling the
 *   controlling owner) and what it reads (`reads`, mapped to resources by `mapReads`), plus the
 *   failure Events of its children when it names a `failureOwner` (or finds them by owner
 *   references, `failuresByOwnerReferences`), and the Pods of the workloads it owns, traced to
 *   them by their owner references (`healthReads`);
 * - a reconcile of named steps (see pipeline.ts): observe (deleted resources are left to
 *   the garbage collector, or finalized when the kind has a `finalize` step: finalizer.ts), external, render, claim, apply, prune, prepare, status, events and
 *   the status write, only when it changed;
 * - never adopting: a child is applied only when it does not exist or this resource is its
 *   controller (its controller owner reference's uid). Otherwise nothing is applied, the
 *   status says `Degraded` (ChildNotOwned, naming the object and its owner), one Warning Event
 *   is recorded, and the resource is reconciled again when that object changes or goes. Updates
 *   and prunes carry the child's uid as a precondition;
 * - terminal errors: a `TerminalError` from any step, or a child the API server refuses as
 *   invalid (400/422), is not retried until the resource's spec changes (its generation); the
 *   status says why, and a Warning Event is recorded once, when `Degraded` turns True.
 * Any other error is thrown, and the work queue retries it with backoff.
 */
export function buildController(
  mgr: Manager,
  decl: ControllerDeclaration,
  options: ControllerSetupOptions,
): Controller {
  const parts = controllerParts(mgr, decl, options);
  const { type, owned, blockers } = parts;
  const controller = new Controller({
    ...options,
    name: decl.name,
    reconciler: (req, ctx) => reconcile(parts, req, ctx),
    statusWriteWaitMs: (key) => parts.pacer.writeWaitMs(key),
  });
  // A render that read the status (a restore's Jobs, made until the status says Restored) sees our
  // own status writes, which are otherwise no reason to reconcile.
  controller.for(parts.resources, {
    statusIsInput: (key, before, after) => parts.renders.statusChanged(key, before.status, after.status),
  });
  options.metrics.watchConditions(type, () => parts.resources.list());
  for (const { type: t, informer } of owned.values()) {
    controller.owns(informer, { apiVersion: apiVersionOf(type), kind: type.kind });
    controller.watches(informer, (o) => blockers.blockedBy(t.kind, o));
    // A child written is held until the cache shows it, and no longer (see WrittenChildren).
    parts.written.follow(t.kind, informer);
  }
  // What a kind reads reaches its status and Events alone (render sees the resource and the
  // external facts, external and prepare its owned children): a change of it waits for the
  // resource's next status write.
  for (const t of decl.reads ?? []) {
    const informer = parts.reads.get(`${t.group}/${t.kind}`);
    const map = decl.mapReads?.[t.kind];
    if (map && informer) watchByName(controller, informer, map);
  }
  parts.failures?.enqueueOwners(controller);
  // A pod's change reconciles the resource whose workload made it, unless the kind maps pods itself.
  if (parts.pods && !decl.mapReads?.Pod) watchByName(controller, parts.pods, ownerOfPod(type, owned));
  // A claim's change (its volume grown) reconciles the resource whose StatefulSet made it.
  if (parts.claims && !decl.mapReads?.PersistentVolumeClaim)
    watchByName(controller, parts.claims, ownerOfClaim(type, owned));
  return controller;
}

/** The informers, caches and memory every reconcile of the declaration's controller shares. */
function controllerParts(mgr: Manager, decl: ControllerDeclaration, options: ControllerSetupOptions): ControllerParts {
  // The runtime reads every kind's resources alike: spec opaque, status with conditions.
  const type: ResourceType<Resource> = customResourceType(decl.for);
  const owned = new Map((decl.owns ?? []).map((t) => [t.kind, { type: t, informer: mgr.informer(t) }] as const));
  const failureOwner =
    decl.failureOwner ?? (decl.failuresByOwnerReferences ? ownerByReferences(type, owned) : undefined);
  // Failure Events have informers of their own (by reason), not one of every Event.
  const readTypes = (decl.reads ?? []).filter((t) => !(failureOwner && t === BuiltinTypes.CoreEvent));
  return {
    // The runtime reads every kind's resources alike: spec opaque, status with conditions.
    decl: decl as ControllerDeclaration<Resource>,
    type,
    resources: mgr.informer(type),
    owned,
    reads: new Map(readTypes.map((t) => [`${t.group}/${t.kind}`, mgr.informer(t)] as const)),
    // validateControllerDeclaration: every deleted type is owned.
    deletable: (decl.deletes ?? []).flatMap((t) => owned.get(t.kind) ?? []),
    pods: healthReads(decl).includes(BuiltinTypes.Pod) ? mgr.informer<Pod>(BuiltinTypes.Pod) : undefined,
    claims: healthReads(decl).includes(BuiltinTypes.PersistentVolumeClaim)
      ? mgr.informer<PersistentVolumeClaim>(BuiltinTypes.PersistentVolumeClaim)
      : undefined,
    renders: new RenderCache<RenderedChildren>(RENDER_CACHE_BYTES),
    refused: new Map(),
    refusedChildren: new Map(),
    written: new WrittenChildren(),
    pacer: new StatusPacer(options.statusCoalesceMs ?? DEFAULT_STATUS_COALESCE_MS, options.clock),
    clock: options.clock ?? realClock,
    blockers: new Blockers(),
    metrics: options.metrics,
    failures: failureOwner ? ChildFailures.cache(mgr, failureOwner) : undefined,
    tracer: options.tracer,
  };
}

/**
 * Has a change of an object reconcile the resource `resourceOf` names, in the object's namespace,
 * when that resource's status may next be written: what a kind reads (and the pods of its
 * workloads) can move nothing else (see Controller.watchesForStatus).
 */
function watchByName(
  controller: Controller,
  informer: Informer,
  resourceOf: (object: KubeObject) => string | undefined,
): void {
  controller.watchesForStatus(informer, (o) => {
    const name = resourceOf(o);
    return name ? [{ namespace: o.metadata.namespace, name }] : [];
  });
}
