import { KubeClient } from './client';
import { isSubset, jsonEqual } from './diff';
import { Informer } from './informer';
import { apiVersionOf, KubeObject, OwnerReference, ResourceType } from './resource';

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
 * Applies `desired` with server-side apply unless the cached `current` already holds it.
 * Returns the object as it now is and whether a write happened. Skipping the no-op apply is
 * what makes a resync of settled objects cost zero write requests.
 */
export async function applyIfChanged<T extends KubeObject>(client: KubeClient, type: ResourceType, desired: KubeObject, current: T | undefined): Promise<{ object: T; applied: boolean }> {
  if (current && isSubset(desired, current)) return { object: current, applied: false };
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
