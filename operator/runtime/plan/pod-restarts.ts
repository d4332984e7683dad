/**
 * Pods a kind's external step asks to start again (`ExternalStep.restartPods`), e.g. an etcd
 * member that must read its ConfigMap's environment at a new start. Planned here as `RestartPod`
 * actions, only for pods the resource's own StatefulSets control and only at the uid asked (a pod
 * made again since is already a new start); the executor deletes them by that uid, last.
 */
import { BuiltinTypes, isOfType, type PodRestart } from '../../../constructs/contract';
import type { PlanReads } from './planned-child';
import type { ChildPlan, RestartPod } from './plan';

export function planPodRestarts(
  parts: Pick<PlanReads, 'pods'>,
  children: readonly ChildPlan[],
  asked: readonly PodRestart[],
): RestartPod[] {
  const pods = parts.pods;
  if (!pods || asked.length === 0) return [];
  const ours = children.flatMap(({ child }) => {
    const sts = child.current;
    return sts && isOfType(BuiltinTypes.StatefulSet, sts) && sts.metadata.uid
      ? pods.listControlledBy(sts.metadata.uid)
      : [];
  });
  return asked.flatMap((r) => {
    const pod = ours.find(
      (p) => p.metadata.name === r.name && p.metadata.uid === r.uid && !p.metadata.deletionTimestamp,
    );
    return pod ? [{ type: 'RestartPod' as const, key: `Pod/${r.name}`, pod, reason: r.reason }] : [];
  });
}
