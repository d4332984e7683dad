import type { ManagedFieldsEntry } from './managed-fields';
import type { KubeObject, ResourceType } from './resource';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

interface PodLike extends KubeObject {
  spec?: { nodeName?: string };
  status?: { phase?: string; containerStatuses?: Array<{ name: string; state?: unknown }> };
}

/**
 * What the informers keep of each object, as client-go's informer transforms do: the cache
 * holds thousands of objects, and most of their bytes are never read.
 * - `managedFields`: only our own Apply entry, which the change check reads (none for Pods);
 * - kubectl's last-applied-configuration annotation (a second copy of the object);
 * - Pods, the heaviest objects and only read: their metadata, `spec.nodeName`, `status.phase`
 *   and each container's name and state — what status and failure reporting read.
 */
export function cacheTransform(fieldManager: string, type: ResourceType): (obj: KubeObject) => KubeObject {
  const isPod = type.group === '' && type.kind === 'Pod';
  return obj => {
    const metadata = { ...obj.metadata };
    const managed = metadata.managedFields as ManagedFieldsEntry[] | undefined;
    if (managed) {
      const ours = managed.filter(e => e.manager === fieldManager && e.operation === 'Apply' && !e.subresource);
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
    const pod = obj as PodLike;
    return {
      apiVersion: pod.apiVersion,
      kind: pod.kind,
      metadata,
      spec: { nodeName: pod.spec?.nodeName },
      status: {
        phase: pod.status?.phase,
        containerStatuses: pod.status?.containerStatuses?.map(c => ({ name: c.name, state: c.state })),
      },
    };
  };
}
