import type { K8sObject } from './synth';

/**
 * Validates a built-in object offline against the Kubernetes OpenAPI schema shipped by
 * kubernetes-models (one class per group/version/kind, each with `validate()`).
 */
export function validateBuiltin(obj: K8sObject): void {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  const modulePath = `kubernetes-models/${group ? `${group}/` : ''}${version}/${obj.kind}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the model module is named by the object, known only at run time
  const mod = require(modulePath) as Record<string, new (o: unknown) => { validate(): void }>;
  const Model = mod[obj.kind];
  if (!Model) throw new Error(`kubernetes-models has no ${obj.kind} in ${modulePath}`);
  new Model(obj).validate();
}

/** Whether an apiVersion belongs to a built-in API group. */
export function isBuiltin(apiVersion: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}
