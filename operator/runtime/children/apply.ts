import type { KubeObject, OwnerReference, ResourceType } from '../../../constructs/contract';
import {
  isConflict,
  isInvalid,
  type KubeClient,
  appliedEntry,
  needsApply,
  apiVersionOf,
  controllerOf,
} from '../client';

/** The controller owner reference a child of `owner` carries, so garbage collection removes it. */
export function controllerReference(owner: KubeObject, type: ResourceType): OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? apiVersionOf(type),
    kind: owner.kind ?? type.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
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
export async function applyIfChanged<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  desired: KubeObject,
  current: T | undefined,
  options: { readonly dryRun?: boolean } = {},
): Promise<{ object: T; applied: boolean }> {
  if (current && !needsApply(desired, current, client.fieldManager)) return { object: current, applied: false };
  // An update names the object it updates by uid: a precondition the API server checks, so an
  // object deleted and made again by someone else since the cache saw ours is never changed.
  const body = current?.metadata.uid
    ? { ...desired, metadata: { ...desired.metadata, uid: current.metadata.uid } }
    : desired;
  try {
    return { object: await client.apply<T>(type, body, options.dryRun ? { dryRun: true } : undefined), applied: true };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (current && (isConflict(err) || (isInvalid(err) && message.includes('metadata.uid')))) {
      // Not a refusal of the spec: the object changed hands. Retried, it is judged afresh.
      throw new Error(
        `${type.kind} ${desired.metadata.name ?? ''} was deleted or replaced since it was read; retrying: ${message}`,
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * Why a child name cannot be used: an object of that name exists and is not ours. Ours means
 * this resource is its controller, or it has no controller and our field manager applied it
 * (children rendered without an owner on purpose, such as a claim kept when the resource is
 * deleted, which a resource of the same name picks up again). Undefined when it is ours.
 */
export function notOwnedReason(current: KubeObject, ownerUid: string, fieldManager: string): string | undefined {
  const controller = controllerOf(current);
  if (controller?.uid === ownerUid) return undefined;
  if (!controller && appliedEntry(current, fieldManager)) return undefined;
  const held = controller
    ? `it is controlled by ${controller.kind} ${controller.name}`
    : 'it has no controller (someone made it by hand or with another tool)';
  return `${current.kind} ${current.metadata.name} already exists and ${held}`;
}
