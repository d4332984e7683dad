/**
 * What a plan is made from: each desired child with what stands under its name (claimed, never
 * adopted), the reads planning takes (claims, pods, the children of the kinds it deletes) and the
 * resource it is for — the same whether they come from the reconciler's caches or a preview's lists.
 */
import {
  ChildMap,
  type KubeObject,
  type PersistentVolumeClaim,
  type Pod,
  type ResourceType,
  type TerminalError,
  childKey,
} from '../../../constructs/contract';
import { isJsonObject } from '../../../constructs/contract/json';
import type { ObjectReads } from '../cache';
import { notOwnedReason } from '../children';
import type { KubeClient } from '../client';
import type { RenderedChildren } from '../../../constructs/contract/render';

/** A desired child, with what the cache holds under its name. */
export interface PlannedChild {
  readonly desired: KubeObject;
  /** The type it is of (in the reconciler, with its informer). */
  readonly owned: { readonly type: ResourceType };
  readonly current: KubeObject | undefined;
  /** The `Kind/name`s of the children it waits for (see `waitsFor`). */
  readonly waitsFor: readonly string[];
  /** Updated even when another child of the same change is refused (see `applyIndependently`). */
  readonly independent?: boolean;
}

/** A child whose name is taken by an object this resource does not control. */
export interface NotOwned {
  /** The taking object. */
  readonly object: KubeObject;
  /** The child it is in the way of, `Kind/name`. */
  readonly key: string;
  readonly reason: string;
}

/** What claiming found: the children to apply, or (never adopting) the names taken by others. */
export type Claim =
  | { readonly planned: readonly PlannedChild[]; readonly notOwned?: undefined }
  | { readonly planned?: undefined; readonly notOwned: readonly NotOwned[] };

/** A child the API server refused; `fresh` when this reconcile asked, not when an earlier refusal stood. */
export interface Refusal {
  readonly refused: TerminalError;
  readonly fresh: boolean;
}

/**
 * What planning a reconcile reads (planner.ts): the claims, the pods and the children of the kinds
 * it deletes — the informers' caches in the reconciler, the objects listed in a preview.
 */
export interface PlanReads {
  readonly claims?: ObjectReads<PersistentVolumeClaim>;
  readonly pods?: ObjectReads<Pod>;
  readonly deletable: readonly { readonly type: ResourceType; readonly informer: ObjectReads }[];
}

/** The resource a plan is for, and the client it reads StorageClasses and our field manager's name through. */
export interface PlanTarget {
  /** The resource's uid: its children are those it controls. */
  readonly uid: string;
  readonly namespace: string | undefined;
  readonly ctx: { readonly client: KubeClient };
}

/**
 * The children of a resource as cached (or, in a preview, listed), by `Kind/name`: the objects
 * of each owned type it controls.
 */
export function cachedChildren(
  parts: { readonly owned: ReadonlyMap<string, { readonly type: ResourceType; readonly informer: ObjectReads }> },
  uid: string,
): ChildMap {
  const map = new ChildMap();
  for (const { type, informer } of parts.owned.values()) {
    for (const o of informer.listControlledBy(uid)) map.set(childKey(type.kind, o.metadata.name ?? ''), o);
  }
  return map;
}

/**
 * The cached claims a StatefulSet may have made: those carrying its selector's labels, as its
 * controller labels every claim it makes (by the label index, no scan of the namespace).
 */
export function cachedClaimsOf(
  parts: Pick<PlanReads, 'claims'>,
  statefulSet: KubeObject,
): readonly PersistentVolumeClaim[] {
  const claims = parts.claims;
  if (!claims || statefulSet.kind !== 'StatefulSet') return [];
  const spec = isJsonObject(statefulSet.spec) ? statefulSet.spec : {};
  const selector =
    isJsonObject(spec.selector) && isJsonObject(spec.selector.matchLabels) ? spec.selector.matchLabels : {};
  const labels = Object.fromEntries(
    Object.entries(selector).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return Object.keys(labels).length > 0 ? claims.list(statefulSet.metadata.namespace, labels) : [];
}

/** A desired child's type, and what stands under its name (in its namespace): undefined for a kind not owned. */
export type ChildLookup = (
  desired: KubeObject,
  namespace: string | undefined,
) => { readonly owned: PlannedChild['owned']; readonly current: KubeObject | undefined } | undefined;

/**
 * Claim, reading through `lookup`: the reconciler's cache, or the objects a preview listed (the
 * same claim either way, so a preview plans what the reconciler would).
 */
export function claimFrom(controller: string, t: PlanTarget, rendered: RenderedChildren, lookup: ChildLookup): Claim {
  const planned = rendered.objects.map((d) => {
    const found = lookup(d, d.metadata.namespace ?? t.namespace);
    if (!found)
      throw new Error(`controller ${controller} renders a ${d.kind} but does not own ${d.kind}s: add it to owns`);
    const key = childKey(found.owned.type.kind, d.metadata.name ?? '');
    const waitsFor = rendered.waits.get(key) ?? [];
    return { desired: d, ...found, waitsFor, independent: rendered.independent?.has(key) };
  });
  const notOwned = planned.flatMap(({ current, owned, desired }) => {
    const reason = current && notOwnedReason(current, t.uid, t.ctx.client.fieldManager);
    const key = childKey(owned.type.kind, desired.metadata.name ?? '');
    return reason ? [{ object: current, key, reason }] : [];
  });
  return notOwned.length === 0 ? { planned } : { notOwned };
}
