/**
 * Labels a kind's external step asks for on pods (`ExternalStep.labelPods`), e.g. each database
 * instance's role, which a Service selects on. Planned here as `LabelPod` actions: only for pods
 * the resource's own StatefulSets control, only at the uid asked, only the labels that differ from
 * the pod's, and never a label the pod's StatefulSet selects by or one of Kubernetes' own — a pod
 * relabelled out of its StatefulSet's selector would be orphaned and made again.
 */
import type { PodLabels } from '../../../constructs/contract';
import type { PlanReads } from './planned-child';
import type { ChildPlan, LabelPod } from './plan';
import { podAsked, type StatefulSetPod, statefulSetPods } from './pod-restarts';

export function planPodLabels(
  parts: Pick<PlanReads, 'pods'>,
  children: readonly ChildPlan[],
  asked: readonly PodLabels[],
): LabelPod[] {
  if (asked.length === 0) return [];
  const ours = statefulSetPods(parts, children);
  return asked.flatMap((a): LabelPod[] => {
    const found = podAsked(ours, a);
    if (!found) return [];
    const labels = changedLabels(found, a.labels);
    if (Object.keys(labels).length === 0) return [];
    return [{ type: 'LabelPod', key: `Pod/${a.name}`, pod: found.pod, labels, reason: a.reason }];
  });
}

/** The labels asked that the pod does not have as asked, leaving out every one it may not change. */
function changedLabels(
  { pod, sts }: StatefulSetPod,
  asked: Readonly<Record<string, string | null>>,
): Record<string, string | null> {
  const current = pod.metadata.labels ?? {};
  const selected = new Set(Object.keys(sts.spec?.selector?.matchLabels ?? {}));
  return Object.fromEntries(
    Object.entries(asked).filter(
      ([key, value]) => !selected.has(key) && !isKubernetesLabel(key) && (current[key] ?? null) !== value,
    ),
  );
}

/** A label of Kubernetes' own prefixes (`statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index`). */
export function isKubernetesLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return key === 'controller-revision-hash';
  const prefix = key.slice(0, slash);
  return /(^|\.)(kubernetes\.io|k8s\.io)$/.test(prefix);
}
