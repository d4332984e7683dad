import { KubeClient } from './client';
import { needsApply } from './managed-fields';
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

/** Writes `status` through the status subresource (the builder decides when it has changed). */
export async function applyStatus(client: KubeClient, type: ResourceType, obj: KubeObject & { status?: unknown }, status: object): Promise<void> {
  await client.apply(type, {
    apiVersion: obj.apiVersion ?? apiVersionOf(type),
    kind: obj.kind ?? type.kind,
    metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
    status,
  }, { subresource: 'status' });
}

