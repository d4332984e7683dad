import type { ContainerStatus, KubeObject, Pod, ResourceType } from '../../../constructs/contract';
import { type FieldSet, deepFreeze } from '../client';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * What the informers keep of each object, as client-go's informer transforms do: the cache
 * holds thousands of objects, and most of their bytes are never read.
 * - `managedFields`: only our own Apply entry, which the change check reads (none for Pods),
 *   its field sets shared between objects where they are equal (see FieldSetPool);
 * - kubectl's last-applied-configuration annotation (a second copy of the object);
 * - Pods, the heaviest objects and only read: their metadata, `spec.nodeName`, `status.phase`,
 *   the Ready condition and a PodScheduled=False one, and each (init) container's name and
 *   state — what status and failure reporting read.
 */
export function cacheTransform(
  fieldManager: string,
  type: ResourceType,
  pool: FieldSetPool = new FieldSetPool(),
): (obj: KubeObject) => KubeObject {
  const isPod = type.group === '' && type.kind === 'Pod';
  return (obj) => {
    const metadata = { ...obj.metadata };
    const managed = metadata.managedFields;
    if (managed) {
      const ours = managed
        .filter((e) => e.manager === fieldManager && e.operation === 'Apply' && !e.subresource)
        .map((e) => (e.fieldsV1 ? { ...e, fieldsV1: pool.share(e.fieldsV1) } : e));
      if (ours.length) metadata.managedFields = ours;
      else delete metadata.managedFields;
    }
    if (metadata.annotations?.[LAST_APPLIED]) {
      const { [LAST_APPLIED]: _dropped, ...rest } = metadata.annotations;
      metadata.annotations = rest;
    }
    if (!isPod) return { ...obj, metadata };
    // Pods are only read, never applied: no field ownership to keep.
    delete metadata.managedFields;
    // isPod: the object is a Pod.
    const pod = obj as Pod;
    return {
      apiVersion: pod.apiVersion,
      kind: pod.kind,
      metadata,
      spec: { nodeName: pod.spec?.nodeName },
      status: keptPodStatus(pod.status ?? {}),
    };
  };
}

/**
 * The phase, whether it is ready and why no node takes it (a PodScheduled=False condition), and
 * each (init) container's state: what `podProblem` and `childHealth` read.
 */
function keptPodStatus(status: NonNullable<Pod['status']>): Pod['status'] {
  const kept: NonNullable<Pod['status']> = { phase: status.phase };
  const conditions = status.conditions
    ?.filter((c) => c.type === 'Ready' || (c.type === 'PodScheduled' && c.status === 'False'))
    .map(({ type, status, reason, message }) => ({
      type,
      status,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    }));
  if (conditions?.length) kept.conditions = conditions;
  if (status.initContainerStatuses) kept.initContainerStatuses = status.initContainerStatuses.map(keptContainerStatus);
  if (status.containerStatuses) kept.containerStatuses = status.containerStatuses.map(keptContainerStatus);
  return kept;
}

/** A container's name and state, and — while it waits — how it last ended: why a crash-looping one waits. */
function keptContainerStatus(c: ContainerStatus): ContainerStatus {
  const last = c.state?.waiting ? c.lastState?.terminated : undefined;
  return {
    name: c.name,
    state: c.state,
    ...(last ? { lastState: { terminated: { exitCode: last.exitCode, reason: last.reason } } } : {}),
  };
}

/**
 * Keeps one copy of equal field sets. Every child one controller renders has the same fields, so
 * the `f:spec` tree of a thousand Deployments is one object, not a thousand (it was about half
 * of what a cached Deployment weighed). The top-level subtrees are shared rather than the whole
 * set, because `f:metadata` names the owner's uid and so differs between objects. Shared sets
 * are frozen: the cache is read-only, and a write would show through in every object.
 */
export class FieldSetPool {
  private readonly byJson = new Map<string, WeakRef<FieldSet>>();
  private readonly forget = new FinalizationRegistry<string>((json) => {
    if (!this.byJson.get(json)?.deref()) this.byJson.delete(json);
  });

  /** The same field set, made of subtrees shared with the equal ones seen before. */
  share(set: FieldSet): FieldSet {
    const out: FieldSet = {};
    for (const [key, subtree] of Object.entries(set)) out[key] = this.shared(subtree);
    return out;
  }

  /** How many distinct subtrees are held (for tests). */
  get size(): number {
    return this.byJson.size;
  }

  private shared(subtree: FieldSet): FieldSet {
    const json = JSON.stringify(subtree);
    const known = this.byJson.get(json)?.deref();
    if (known) return known;
    deepFreeze(subtree);
    this.byJson.set(json, new WeakRef(subtree));
    this.forget.register(subtree, json);
    return subtree;
  }
}
