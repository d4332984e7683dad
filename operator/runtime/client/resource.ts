import type { KubeObject, OwnerReference, ResourceType } from '../../../constructs/contract';

/** `group/version`, or just `version` for the core group. */
export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** The REST path of a collection or one object, e.g. /apis/apps/v1/namespaces/ns/deployments/x. */
export function resourcePath(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const ns = t.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name ? `/${encodeURIComponent(name)}` : '';
  const sub = name && subresource ? `/${subresource}` : '';
  return `${base}${ns}/${t.resource}${obj}${sub}`;
}

/** The work-queue key of an object: `namespace/name`, or `name` when cluster-scoped. */
export function objectKey(meta: { namespace?: string; name?: string }): string {
  return meta.namespace ? `${meta.namespace}/${meta.name}` : `${meta.name}`;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The controller owner reference of an object, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller);
}

/** Freezes a value and everything in it: for objects shared between readers (caches, renders). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The object without the bookkeeping the API server changes on every write (resourceVersion,
 * managedFields): what stays the same unless someone changed the object itself.
 */
export function withoutBookkeeping<T extends KubeObject>(obj: T): T {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
