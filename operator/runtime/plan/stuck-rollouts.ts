/**
 * Stuck rollouts, recovered. A StatefulSet of OrderedReady pods (the default policy) waits for
 * each pod to be Running and Ready before it does anything else, so a pod of a broken revision
 * (an image that cannot be pulled, a container that keeps exiting) holds it forever: a fixed spec
 * never rolls out, and Kubernetes documents the way through as deleting that pod by hand ("forced
 * rollback", kubernetes/kubernetes#67250). The runtime does it for the StatefulSets it owns: a
 * pod of an older revision than the StatefulSet's current one, that cannot run, is deleted so the
 * StatefulSet makes it again from the current revision — with a Normal Event saying which and why
 * (this module plans it; executor.ts deletes).
 * A pod that is starting, Ready, below the rollout's partition, or of the current revision is
 * never touched.
 */
import {
  BuiltinTypes,
  isOfType,
  type Pod,
  podIsReady,
  podProblem,
  type StatefulSet,
} from '../../../constructs/contract';
import type { PlanReads } from './planned-child';
import type { ChildPlan, DeleteStuckPod } from './plan';

/** The label a StatefulSet's pods carry naming their revision. */
const REVISION = 'controller-revision-hash';

/** A pod to delete, and why. */
export interface StuckPod {
  readonly pod: Pod;
  readonly revision: string;
  readonly why: string;
}

/**
 * The pods of `sts` its rollout is stuck behind: with OrderedReady pods and a rolling update the
 * StatefulSet controller has seen (its observedGeneration), pods at or above the partition, of a
 * revision other than the update revision, not Ready, and unable to run (see `podProblem`).
 */
export function stuckPods(sts: StatefulSet, pods: readonly Pod[]): StuckPod[] {
  const spec = sts.spec;
  const updateRevision = sts.status?.updateRevision;
  if (!spec || !updateRevision) return [];
  if (spec.podManagementPolicy === 'Parallel' || spec.updateStrategy?.type === 'OnDelete') return [];
  if ((sts.status?.observedGeneration ?? 0) < (sts.metadata.generation ?? 0)) return [];
  const partition = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  const name = sts.metadata.name ?? '';
  return pods.flatMap((pod) => {
    const revision = pod.metadata.labels?.[REVISION];
    const ordinal = Number(/-(\d+)$/.exec(pod.metadata.name ?? '')?.[1] ?? Number.NaN);
    if (!revision || revision === updateRevision || !(ordinal >= partition)) return [];
    if (!(pod.metadata.name ?? '').startsWith(`${name}-`) || podIsReady(pod)) return [];
    const problem = podProblem(pod);
    return problem ? [{ pod, revision, why: problem.message }] : [];
  });
}

/**
 * The stuck pods to delete (see `stuckPods`), one action each, of the StatefulSets the plan leaves
 * as they are: one it changes is judged at the next reconcile, once its controller has seen the
 * change. The executor deletes them last, by uid (a pod made again since is left alone), and only
 * when nothing of the plan was refused and no error stopped it; never while a terminal error
 * stands or a child is not ours (then there is no plan at all).
 */
export function planStuckPods(parts: Pick<PlanReads, 'pods'>, children: readonly ChildPlan[]): DeleteStuckPod[] {
  const pods = parts.pods;
  if (!pods) return [];
  return children.flatMap(({ key, child, actions, decided }) => {
    const sts = child.current;
    if (actions.length > 0 || decided || !sts || !isOfType(BuiltinTypes.StatefulSet, sts) || !sts.metadata.uid)
      return [];
    const current = sts.status?.updateRevision ?? '';
    return stuckPods(sts, pods.listControlledBy(sts.metadata.uid)).map(({ pod, revision, why }) => ({
      type: 'DeleteStuckPod' as const,
      key,
      pod,
      statefulSet: sts,
      revision,
      reason: `stuck on revision ${revision} (${why.replace(/^pod \S+: /, '')}), so StatefulSet ${sts.metadata.name ?? ''} makes it again at revision ${current}`,
    }));
  });
}
