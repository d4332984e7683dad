import { KubeClient } from './client';
import { KubeObject, ResourceType, resourcePath } from './resource';

/**
 * Finalizer handling in kube-runtime's style: `apply` runs while the object lives (after the
 * finalizer is in place), `cleanup` runs once when it is being deleted, and the finalizer is
 * removed only after cleanup succeeded. Use it only for cleanup outside the cluster; children
 * inside the cluster are removed by owner references and the garbage collector.
 */
export async function withFinalizer<T extends KubeObject, R>(
  client: KubeClient,
  type: ResourceType,
  obj: T,
  finalizer: string,
  handlers: { apply(obj: T): Promise<R>; cleanup(obj: T): Promise<void> },
): Promise<R | undefined> {
  const finalizers = obj.metadata.finalizers ?? [];
  const has = finalizers.includes(finalizer);
  if (obj.metadata.deletionTimestamp) {
    if (!has) return undefined;
    await handlers.cleanup(obj);
    await client.request('PATCH', resourcePath(type, obj.metadata.namespace, obj.metadata.name), {
      contentType: 'application/json-patch+json',
      // The test guards against removing the wrong entry if the list changed meanwhile.
      body: [
        { op: 'test', path: '/metadata/finalizers', value: finalizers },
        { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter(f => f !== finalizer) },
      ],
    });
    return undefined;
  }
  if (!has) {
    await client.request('PATCH', resourcePath(type, obj.metadata.namespace, obj.metadata.name), {
      contentType: 'application/json-patch+json',
      body: obj.metadata.finalizers
        ? [{ op: 'test', path: '/metadata/finalizers', value: finalizers }, { op: 'add', path: '/metadata/finalizers/-', value: finalizer }]
        : [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }],
    });
  }
  return handlers.apply(obj);
}
