import {
  type AdmissionContext,
  ChildMap,
  childKey,
  type ControllerDeclaration,
  isOfType,
  type KubeObject,
  type ResourceType,
} from '../../../constructs/contract';
import type { Informer } from '../cache';

/**
 * What an admission context reads of the manager (its caches, whether they have synced, whether
 * this replica caches a namespace): a face of its own, so webhooks/ needs nothing of controller/.
 */
export interface CachedReads {
  informer<T extends KubeObject = KubeObject>(type: ResourceType): Informer<T>;
  readonly synced: boolean;
  owns(namespace: string | undefined): boolean;
}

/**
 * What a `validate` hook may read about a resource under review: its owned children and the
 * declared `reads`, from the same caches the controller reconciles from (the informers are
 * looked up now, before the manager starts them). Until they have synced a hook could miss
 * what it looks for, so reviews are refused (fail-closed) until then.
 */
export function admissionContextFor(
  manager: CachedReads,
  decl: ControllerDeclaration,
): (object: KubeObject) => Omit<AdmissionContext, 'operation' | 'old'> {
  const owned = (decl.owns ?? []).map((t) => ({ type: t, informer: manager.informer(t) }));
  const reads = new Map((decl.reads ?? []).map((t) => [`${t.group}/${t.kind}`, manager.informer(t)] as const));
  return (object) => {
    if (!manager.synced) throw new Error('the operator is starting and its caches have not synced yet; try again');
    if (!manager.owns(object.metadata.namespace))
      throw new Error(
        `this replica caches one shard of the namespaces, not ${object.metadata.namespace ?? '(cluster)'}'s: a sharded operator cannot serve hooks that read its caches`,
      );
    const children = new ChildMap();
    const uid = object.metadata.uid;
    if (uid) {
      for (const { type, informer } of owned) {
        for (const o of informer.listControlledBy(uid)) children.set(childKey(type.kind, o.metadata.name ?? ''), o);
      }
    }
    return {
      children,
      read: <T extends KubeObject>(
        t: ResourceType<T>,
        labels?: Record<string, string>,
        options?: { readonly allNamespaces?: boolean },
      ): T[] => {
        const informer = reads.get(`${t.group}/${t.kind}`);
        if (!informer) throw new Error(`controller ${decl.name} reads ${t.kind} but does not declare it in reads`);
        return informer
          .list(options?.allNamespaces ? undefined : object.metadata.namespace, labels)
          .filter((o) => isOfType(t, o));
      },
    };
  };
}
