/**
 * A reconcile's plan, previewed: what `diff` and `plan` show is planned by the reconciler's own
 * steps — render, claim, plan (planner.ts) — over the objects the command listed, standing in for
 * the informers' caches (`ListedObjects`). Writes nothing; the dry runs that tell what the API
 * server would make of each change are the gate's own (`dryRunChange`, `changedTogether`).
 */
import {
  BuiltinTypes,
  ownsStatefulSets,
  type KubeObject,
  type ControllerDeclaration,
  type CustomResourceObject,
  type PersistentVolumeClaim,
  type Pod,
  type ResourceType,
} from '../../../constructs/contract';
import { ListedObjects, type ObjectReads } from '../cache';
import { renderChildrenWithWaits } from '../children';
import { type KubeClient, objectKey } from '../client';
import { cachedChildren, claimFrom, type NotOwned, type PlanTarget } from './planned-child';
import type { ReconcilePlan } from './plan';
import { planReconcile, type PodsAsked } from './planner';

/** The objects a preview listed, read as the reconciler reads its caches. */
export interface PreviewReads {
  /** The objects of each type the controller owns or deletes, by kind (read as its informers are). */
  readonly children: ReadonlyMap<string, { readonly type: ResourceType; readonly informer: ObjectReads }>;
  /** The claims, when the controller owns StatefulSets (their growth is planned from them). */
  readonly claims?: ObjectReads<PersistentVolumeClaim>;
  /** The pods, when the controller owns StatefulSets (their stuck rollouts are planned from them). */
  readonly pods?: ObjectReads<Pod>;
  /** With an external step: the objects of each of its `reads` types, by `group/kind` (its cache reads). */
  readonly reads?: ReadonlyMap<string, ObjectReads>;
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
  // An external step reads its declared types' caches: `plan` and `diff` preview it over them.
  const declared = decl.external ? (decl.reads ?? []) : [];
  const reads = [...(statefulSets ? [BuiltinTypes.PersistentVolumeClaim, BuiltinTypes.Pod] : []), ...declared];
  const listed = new Map<string, { type: ResourceType; informer: ListedObjects }>();
  for (const type of [...types, ...reads]) {
    const key = `${type.group}/${type.kind}`;
    if (!listed.has(key)) listed.set(key, { type, informer: new ListedObjects(type, await list(type)) });
  }
  const of = (type: ResourceType) => listed.get(`${type.group}/${type.kind}`);
  const byKey = <K>(list: readonly ResourceType[], key: (t: ResourceType) => K) =>
    new Map(
      list.flatMap((type) => {
        const objects = of(type);
        return objects ? [[key(type), objects] as const] : [];
      }),
    );
  const children = byKey(types, (t) => t.kind);
  const declaredReads = new Map([...byKey(declared, (t) => `${t.group}/${t.kind}`)].map(([k, v]) => [k, v.informer]));
  return {
    children,
    claims: statefulSets ? of(BuiltinTypes.PersistentVolumeClaim)?.informer : undefined,
    pods: statefulSets ? of(BuiltinTypes.Pod)?.informer : undefined,
    ...(decl.external ? { reads: declaredReads } : {}),
  };
}

/** The plan the reconciler of `decl` would make for `resource`, over the objects listed in `reads`. */
export async function previewPlan(
  decl: ControllerDeclaration,
  client: KubeClient,
  resource: CustomResourceObject,
  reads: PreviewReads,
  asked?: PodsAsked,
): Promise<PreviewedPlan> {
  const { uid = '', namespace } = resource.metadata;
  const target: PlanTarget = { uid, namespace, ctx: { client } };
  // As the reconciler renders it: with the facts an external step left, read from the children.
  const rendered = renderChildrenWithWaits(decl, resource, cachedChildren({ owned: reads.children }, uid));
  const claim = claimFrom(decl.name, target, rendered, (desired, ns) => {
    const listed = desired.kind === undefined ? undefined : reads.children.get(desired.kind);
    if (!listed) return undefined;
    return { owned: listed, current: listed.informer.get(objectKey({ namespace: ns, name: desired.metadata.name })) };
  });
  if (claim.notOwned) return { notOwned: claim.notOwned, target };
  const deletable = (decl.deletes ?? []).map((type) => ({
    type,
    informer: reads.children.get(type.kind)?.informer ?? NONE,
  }));
  const plan = await planReconcile({ claims: reads.claims, pods: reads.pods, deletable }, target, claim.planned, asked);
  return { plan, target };
}
