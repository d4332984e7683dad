/**
 * A reconcile's plan, previewed: what `diff` and `plan` show is planned by the reconciler's own
 * steps — render, claim, plan (planner.ts) — over the objects the command listed, standing in for
 * the informers' caches (`ListedObjects`). Writes nothing; the dry runs that tell what the API
 * server would make of each change are the gate's own (`dryRunChange`, `changedTogether`).
 */
import {
  BuiltinTypes,
  ChildMap,
  ownsStatefulSets,
  type KubeObject,
  childKey,
  type ControllerDeclaration,
  type CustomResourceObject,
  type PersistentVolumeClaim,
  type Pod,
  type ResourceType,
} from '../../../constructs/contract';
import { ListedObjects, type ObjectReads } from '../cache';
import { renderChildrenWithWaits } from '../children';
import { type KubeClient, objectKey } from '../client';
import { claimFrom, type NotOwned, type PlanTarget } from './planned-child';
import type { ReconcilePlan } from './plan';
import { planReconcile } from './planner';

/** The objects a preview listed, read as the reconciler reads its caches. */
export interface PreviewReads {
  /** The objects of each type the controller owns or deletes, by kind. */
  readonly children: ReadonlyMap<string, { readonly type: ResourceType; readonly objects: ObjectReads }>;
  /** The claims, when the controller owns StatefulSets (their growth is planned from them). */
  readonly claims?: ObjectReads<PersistentVolumeClaim>;
  /** The pods, when the controller owns StatefulSets (their stuck rollouts are planned from them). */
  readonly pods?: ObjectReads<Pod>;
}

/** A resource's plan as the reconciler would make it now, or the names taken by others (then it plans nothing). */
export type PreviewedPlan =
  | { readonly plan: ReconcilePlan; readonly target: PlanTarget; readonly notOwned?: undefined }
  | { readonly notOwned: readonly NotOwned[]; readonly plan?: undefined; readonly target: PlanTarget };

const NONE = new ListedObjects(BuiltinTypes.ConfigMap, []);

/**
 * What a preview of `decl`'s plans reads, listed once per type through `list`: the types it owns
 * and deletes and, when it owns StatefulSets, its claims and pods (their growth and stuck rollouts
 * are planned from them) — the same list standing for a type both owned and read.
 */
export async function listForPreview(
  decl: ControllerDeclaration,
  list: (type: ResourceType) => Promise<readonly KubeObject[]>,
): Promise<PreviewReads> {
  const types = [...(decl.owns ?? []), ...(decl.deletes ?? [])];
  const statefulSets = ownsStatefulSets(decl);
  const reads = statefulSets ? [BuiltinTypes.PersistentVolumeClaim, BuiltinTypes.Pod] : [];
  const listed = new Map<string, { type: ResourceType; objects: ListedObjects }>();
  for (const type of [...types, ...reads]) {
    const key = `${type.group}/${type.kind}`;
    if (!listed.has(key)) listed.set(key, { type, objects: new ListedObjects(type, await list(type)) });
  }
  const of = (type: ResourceType) => listed.get(`${type.group}/${type.kind}`);
  const children = new Map<string, { type: ResourceType; objects: ListedObjects }>();
  for (const type of types) {
    const objects = of(type);
    if (objects) children.set(type.kind, objects);
  }
  return {
    children,
    claims: statefulSets ? of(BuiltinTypes.PersistentVolumeClaim)?.objects : undefined,
    pods: statefulSets ? of(BuiltinTypes.Pod)?.objects : undefined,
  };
}

/** The plan the reconciler of `decl` would make for `resource`, over the objects listed in `reads`. */
export async function previewPlan(
  decl: ControllerDeclaration,
  client: KubeClient,
  resource: CustomResourceObject,
  reads: PreviewReads,
): Promise<PreviewedPlan> {
  const { uid = '', namespace } = resource.metadata;
  const target: PlanTarget = { uid, namespace, ctx: { client } };
  // As the reconciler renders it: with the facts an external step left, read from the children.
  const rendered = renderChildrenWithWaits(decl, resource, controlledBy(reads, uid));
  const claim = claimFrom(decl.name, target, rendered, (desired, ns) => {
    const listed = desired.kind === undefined ? undefined : reads.children.get(desired.kind);
    if (!listed) return undefined;
    return { owned: listed, current: listed.objects.get(objectKey({ namespace: ns, name: desired.metadata.name })) };
  });
  if (claim.notOwned) return { notOwned: claim.notOwned, target };
  const deletable = (decl.deletes ?? []).map((type) => ({
    type,
    informer: reads.children.get(type.kind)?.objects ?? NONE,
  }));
  const plan = await planReconcile({ claims: reads.claims, pods: reads.pods, deletable }, target, claim.planned);
  return { plan, target };
}

/** The listed children a resource controls, by `Kind/name`: what its render reads its facts from. */
function controlledBy(reads: PreviewReads, uid: string): ChildMap {
  const map = new ChildMap();
  for (const { type, objects } of reads.children.values())
    for (const o of objects.listControlledBy(uid)) map.set(childKey(type.kind, o.metadata.name ?? ''), o);
  return map;
}
