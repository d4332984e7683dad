import { isInvalid, KubeClient } from './client';
import { Condition, findCondition } from './conditions';
import type { Controller, ReconcileContext } from './controller';
import { jsonEqual } from './diff';
import { Informer } from './informer';
import type { Manager } from './manager';
import { needsApply } from './managed-fields';
import { apiVersionOf, KubeObject, objectKey, OwnerReference, ResourceType } from './resource';

/** The controller owner reference a child of `owner` carries, so garbage collection removes it. */
export function controllerReference(owner: KubeObject, type: ResourceType): OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? apiVersionOf(type),
    kind: owner.kind ?? type.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * Applies `desired` with server-side apply unless that would change nothing: unless what our
 * field manager owns on the cached `current` (its `managedFields` Apply entry) already equals
 * `desired`. A field dropped from `desired` counts as a change, so the apply removes it from
 * the child. Returns the object as it now is and whether a write happened. Skipping the no-op
 * apply is what makes a resync of settled objects cost zero write requests.
 */
export async function applyIfChanged<T extends KubeObject>(client: KubeClient, type: ResourceType, desired: KubeObject, current: T | undefined): Promise<{ object: T; applied: boolean }> {
  if (current && !needsApply(desired, current, client.fieldManager)) return { object: current, applied: false };
  return { object: await client.apply<T>(type, desired), applied: true };
}

/** Writes `status` through the status subresource when it differs from the object's. */
export async function applyStatusIfChanged(client: KubeClient, type: ResourceType, obj: KubeObject & { status?: unknown }, status: object): Promise<boolean> {
  if (jsonEqual(status, obj.status ?? {})) return false;
  await client.apply(type, {
    apiVersion: obj.apiVersion ?? apiVersionOf(type),
    kind: obj.kind ?? type.kind,
    metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
    status,
  }, { subresource: 'status' });
  return true;
}

/** Names of the live pods (not terminating, not finished) in a namespace matching the labels, sorted. */
export function livePodNames(pods: Informer, namespace: string | undefined, labels: Record<string, string>): string[] {
  return pods.list(namespace, labels)
    .filter(p => {
      const phase = (p.status as { phase?: string } | undefined)?.phase;
      return !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
    })
    .map(p => p.metadata.name!)
    .sort();
}

interface PodStatus {
  phase?: string;
  containerStatuses?: Array<{ name: string; state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number; message?: string } } }>;
}

/** Waiting reasons that mean a container cannot run as specified, not that it is still starting. */
const STUCK_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

/**
 * The first pod (by name) in a namespace matching the labels whose container failed or cannot
 * start — a failed pod, a container that exited non-zero, or one stuck in a back-off — as a
 * reason and message for a `Degraded` condition.
 */
export function podFailure(pods: Informer, namespace: string | undefined, labels: Record<string, string>): { reason: string; message: string } | undefined {
  for (const p of pods.list(namespace, labels).sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!))) {
    if (p.metadata.deletionTimestamp) continue;
    const status = p.status as PodStatus | undefined;
    for (const c of status?.containerStatuses ?? []) {
      const waiting = c.state?.waiting;
      if (waiting?.reason && STUCK_REASONS.has(waiting.reason)) {
        return { reason: 'PodFailing', message: `pod ${p.metadata.name}: container ${c.name} is waiting: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`.slice(0, 1024) };
      }
      const done = c.state?.terminated;
      if (done && done.exitCode !== 0 && status?.phase === 'Failed') {
        return { reason: 'PodFailing', message: `pod ${p.metadata.name}: container ${c.name} exited with code ${done.exitCode}${done.reason ? ` (${done.reason})` : ''}${done.message ? `: ${done.message}` : ''}`.slice(0, 1024) };
      }
    }
  }
  return undefined;
}

/** The child kinds a controller owns: each kind's resource type and the informer caching it. */
export interface OwnedChildren {
  readonly types: Record<string, ResourceType>;
  readonly informers: Record<string, Informer>;
}

/**
 * Sets up shared informers for the given child kinds and has `controller` reconcile the owner
 * (of `ownerType`) whenever one of its children changes.
 */
export function ownChildren(mgr: Manager, controller: Controller, ownerType: ResourceType, types: Record<string, ResourceType>): OwnedChildren {
  const informers = Object.fromEntries(Object.entries(types).map(([kind, type]) => [kind, mgr.informer(type)]));
  Object.values(informers).forEach(inf => controller.owns(inf, { apiVersion: apiVersionOf(ownerType), kind: ownerType.kind }));
  return { types, informers };
}

/**
 * Applies every desired child that differs from its cached copy (nothing is written for the
 * others), logging each change and, with `events`, recording a Normal Event about the owner.
 * Returns each child as it now is, by `Kind/name`.
 */
export async function applyChildren(ctx: ReconcileContext, owner: KubeObject, desired: KubeObject[], children: OwnedChildren, options: { events?: boolean } = {}): Promise<Map<string, KubeObject>> {
  const result = new Map<string, KubeObject>();
  for (const d of desired) {
    const current = children.informers[d.kind!].get(objectKey(d.metadata));
    const { object, applied } = await applyIfChanged(ctx.client, children.types[d.kind!], d, current);
    result.set(`${d.kind}/${d.metadata.name}`, object);
    if (!applied) continue;
    const verb = current ? 'Updated' : 'Created';
    ctx.logger.info({ kind: d.kind, name: d.metadata.name }, `${verb.toLowerCase()} child`);
    if (options.events) await ctx.recorder.record(owner, 'Normal', verb, `${verb} ${d.kind} ${d.metadata.name}`);
  }
  return result;
}

/**
 * Runs `apply`. A request the API server rejects as invalid (422/400) would be rejected again
 * until the spec changes, so it is not retried: the message is returned (for a Degraded
 * condition), logged, and recorded as a Warning Event once — not again while the object is
 * already Degraded, so a resync stays free of writes. Any other error is thrown, to be retried
 * with backoff.
 */
export async function rejectionOf(ctx: ReconcileContext, owner: KubeObject & { status?: unknown }, reason: string, apply: () => Promise<void>): Promise<string | undefined> {
  try {
    await apply();
    return undefined;
  } catch (err) {
    if (!isInvalid(err)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    ctx.logger.warn({ err: message, reason }, 'the API server rejected a desired child');
    if (findCondition((owner.status as { conditions?: Condition[] } | undefined)?.conditions, 'Degraded')?.status !== 'True') {
      await ctx.recorder.record(owner, 'Warning', reason, message);
    }
    return message;
  }
}

/**
 * Records one Warning Event when a computed status turns `Degraded=True` because of `failure`: a
 * child Kubernetes accepted but cannot make (a rejected apply is reported by `rejectionOf`).
 * Nothing is recorded while the stored status already says the same, so a resync writes nothing.
 */
export async function recordDegradedOnce(ctx: ReconcileContext, owner: KubeObject & { status?: unknown }, next: readonly Condition[] | undefined, failure: { reason: string } | undefined): Promise<void> {
  const now = findCondition(next, 'Degraded');
  if (!failure || now?.status !== 'True' || now.reason !== failure.reason) return;
  const before = findCondition((owner.status as { conditions?: Condition[] } | undefined)?.conditions, 'Degraded');
  if (before?.status === 'True' && before.reason === now.reason) return;
  await ctx.recorder.record(owner, 'Warning', now.reason, now.message);
}
