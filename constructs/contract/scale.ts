/**
 * What a kind's scale subresource reports when the kind leaves its status fields to the runtime
 * (see `KindDescriptor.scaleStatus`): the pods of its workload children and their label selector,
 * serialized as `kubectl` and HorizontalPodAutoscalers read it. Pure.
 */
import { compareText } from './compare';
import { isJsonObject } from './json';
import type { KubeObject } from './objects';

/** The workload kinds whose pods a scale subresource counts (a Job's pods run to completion). */
const SCALED_KINDS: readonly string[] = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet'];

export interface ScaleStatus {
  /** The workloads' pods, as their own status counts them. */
  readonly replicas: number;
  /** The first workload's pod selector (by kind, then name); none without a workload. */
  readonly selector?: string;
}

/** The scale status of a resource's children. */
export function scaleStatusOf(children: Iterable<KubeObject>): ScaleStatus {
  const workloads = [...children]
    .filter((c) => SCALED_KINDS.includes(c.kind ?? ''))
    .sort(
      (a, b) => compareText(a.kind ?? '', b.kind ?? '') || compareText(a.metadata.name ?? '', b.metadata.name ?? ''),
    );
  const replicas = workloads.reduce((sum, w) => sum + numberAt(w.status, 'replicas'), 0);
  const first = workloads[0];
  const selector = first && isJsonObject(first.spec) ? serializedSelector(first.spec.selector) : undefined;
  return selector ? { replicas, selector } : { replicas };
}

function numberAt(object: unknown, field: string): number {
  const value = isJsonObject(object) ? object[field] : undefined;
  return typeof value === 'number' ? value : 0;
}

/**
 * A `metav1.LabelSelector` in its string form (`a=b,tier in (web,api),!legacy`), keys in order;
 * undefined for a selector that selects nothing to serialize.
 */
export function serializedSelector(selector: unknown): string | undefined {
  if (!isJsonObject(selector)) return undefined;
  const labels = isJsonObject(selector.matchLabels) ? selector.matchLabels : {};
  const terms = Object.keys(labels)
    .sort(compareText)
    .map((key) => `${key}=${String(labels[key])}`);
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  for (const e of expressions) {
    if (!isJsonObject(e) || typeof e.key !== 'string') continue;
    const values = Array.isArray(e.values) ? e.values.map(String).sort(compareText).join(',') : '';
    if (e.operator === 'In') terms.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') terms.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') terms.push(e.key);
    else if (e.operator === 'DoesNotExist') terms.push(`!${e.key}`);
  }
  return terms.length ? terms.join(',') : undefined;
}
