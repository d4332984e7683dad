/**
 * Stuck rollouts, recovered. A StatefulSet of OrderedReady pods (the default policy) waits for
 * each pod to be Running and Ready before it does anything else, so a pod of a broken revision
 * (an image that cannot be pulled, a container that keeps exiting) holds it forever: a fixed spec
 * never rolls out, and Kubernetes documents the way through as deleting that pod by hand ("forced
 * rollback", kubernetes/kubernetes#67250). The runtime does it for the StatefulSets it owns: a
 * pod of an older revision than the StatefulSet's current one, that cannot run, is deleted so the
 * StatefulSet makes it again from the current revision — with a Normal Event saying which and why.
 * A pod that is starting, Ready, below the rollout's partition, or of the current revision is
 * never touched.
 */
import {
  BuiltinTypes,
  type Children,
  isOfType,
  type Pod,
  podProblem,
  type StatefulSet,
} from '../../../constructs/contract';
import { isConflict, isNotFound } from '../client';
import type { ControllerParts, Target } from './controller-parts';

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
    if (!(pod.metadata.name ?? '').startsWith(`${name}-`) || isReady(pod)) return [];
    const problem = podProblem(pod);
    return problem ? [{ pod, revision, why: problem.message }] : [];
  });
}

function isReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/**
 * Deletes the pods each owned StatefulSet's rollout is stuck behind (see `stuckPods`), by uid (a
 * pod made again since is left alone), and records an Event for each. A refusal (no delete right
 * on pods, as a declaration owning no StatefulSet has) is logged, never fatal: the status still
 * says the pod cannot run.
 */
export async function recoverStuckRollouts(
  parts: Pick<ControllerParts, 'pods'>,
  t: Target,
  children: Children,
): Promise<void> {
  const pods = parts.pods;
  if (!pods) return;
  for (const sts of children.values()) {
    if (!isOfType(BuiltinTypes.StatefulSet, sts) || !sts.metadata.uid) continue;
    for (const stuck of stuckPods(sts, pods.listControlledBy(sts.metadata.uid))) {
      await deleteStuckPod(t, sts, stuck);
    }
  }
}

async function deleteStuckPod(t: Target, sts: StatefulSet, { pod, revision, why }: StuckPod): Promise<void> {
  const name = pod.metadata.name ?? '';
  const current = sts.status?.updateRevision ?? '';
  try {
    await t.ctx.client.delete(BuiltinTypes.Pod, name, pod.metadata.namespace, { uid: pod.metadata.uid });
  } catch (err) {
    if (isNotFound(err) || isConflict(err)) return;
    t.ctx.logger.warn({ err, pod: name }, 'could not delete a pod a rollout is stuck behind');
    return;
  }
  t.ctx.logger.info({ pod: name, revision, current }, 'deleted a pod a rollout was stuck behind');
  await t.ctx.recorder.record(
    t.resource,
    'Normal',
    'StuckPodReplaced',
    `Deleted pod ${name}, stuck on revision ${revision} (${why.replace(/^pod \S+: /, '')}), so StatefulSet ${sts.metadata.name ?? ''} makes it again at revision ${current}`,
  );
}
