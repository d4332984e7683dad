/**
 * What is wrong with a pod, in words a status can carry: a container that cannot run as
 * specified (an image that cannot be pulled, a crash loop, a bad config), one that exited
 * non-zero, a pod no node will take; and which workload made a pod. Pure functions of pods as
 * cached, which the health rules (health.ts) trace a workload's failures to.
 */
import type { Problem } from './declaration';
import type { ContainerStatus, KubeObject, Pod, WorkloadCondition } from './objects';

/** Waiting reasons that mean a container cannot run as specified, not that it is still starting. */
const STUCK_REASONS = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/**
 * Why a pod cannot run, if it cannot: no node can take it (`PodUnschedulable`), or one of its
 * containers (init containers first) is stuck in a back-off or exited non-zero in a failed pod
 * (`PodFailing`). Undefined for a pod that is fine, still starting, or being deleted.
 */
export function podProblem(pod: Pod): Problem | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const name = pod.metadata.name ?? '';
  const unschedulable = unschedulableBecause(pod);
  if (unschedulable !== undefined)
    return { reason: 'PodUnschedulable', message: `pod ${name} cannot be scheduled: ${unschedulable}` };
  const podFailed = pod.status?.phase === 'Failed';
  for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const failure = containerFailure(c, podFailed);
    if (failure) return { reason: 'PodFailing', message: `pod ${name}: ${failure}`.slice(0, 1024) };
  }
  return undefined;
}

/**
 * Whether the scheduler's words are about a pod's claims: while a new volume is provisioned and
 * bound, it says `pod has unbound immediate PersistentVolumeClaims`, `persistentvolumeclaim "x"
 * not found` or `… bound to non-existent persistentvolume` for a moment. Whether a claim cannot
 * be bound is the claim's to say (a ProvisioningFailed Event); a bound volume on the wrong node
 * (`volume node affinity conflict`) names no claim and stays a pod no node takes.
 */
function aboutClaims(message: string | undefined): boolean {
  return message?.toLowerCase().includes('persistentvolumeclaim') ?? false;
}

/** Why the scheduler finds no node for a pod not yet running, if it says so (and not just waiting for its claims). */
function unschedulableBecause(pod: Pod): string | undefined {
  const condition = unscheduled(pod);
  if (!condition || aboutClaims(condition.message)) return undefined;
  return condition.message ?? 'no node fits it';
}

/** Whether the scheduler says a pod waits for its claims to be bound. */
export function waitsForClaims(pod: Pod): boolean {
  const condition = unscheduled(pod);
  return !pod.metadata.deletionTimestamp && condition !== undefined && aboutClaims(condition.message);
}

/** The scheduler's PodScheduled=False Unschedulable condition of a pod not yet running. */
function unscheduled(pod: Pod): WorkloadCondition | undefined {
  if (pod.status?.phase === 'Running') return undefined;
  return pod.status?.conditions?.find(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
}

/** How a container fails, in words: stuck in a back-off, or exited non-zero in a failed pod. */
function containerFailure(c: ContainerStatus, podFailed: boolean): string | undefined {
  const waiting = c.state?.waiting;
  if (waiting?.reason && STUCK_REASONS.has(waiting.reason)) {
    // A crash loop: the kubelet restarts the container, and how it ended is only in lastState.
    const last = c.lastState?.terminated;
    const exited = last && last.exitCode !== 0 ? ` ${exitedWith(last)} and` : '';
    return `container ${c.name}${exited} is waiting: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`;
  }
  const done = c.state?.terminated;
  if (done && done.exitCode !== 0 && podFailed)
    return `container ${c.name} ${exitedWith(done)}${done.message ? `: ${done.message}` : ''}`;
  return undefined;
}

function exitedWith(ended: { exitCode?: number; reason?: string }): string {
  return `exited with code ${ended.exitCode}${ended.reason ? ` (${ended.reason})` : ''}`;
}

/**
 * The workload a pod belongs to, by its controller owner reference: a StatefulSet, DaemonSet,
 * Job or ReplicaSet directly, and — for a ReplicaSet named `<deployment>-<pod-template-hash>`,
 * as the Deployment controller names them — the Deployment too (most specific first), so pods
 * are traced to a Deployment without caching its ReplicaSets.
 */
export function podWorkloads(pod: KubeObject): { readonly kind: string; readonly name: string }[] {
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller === true);
  if (!owner) return [];
  const found = [{ kind: owner.kind, name: owner.name }];
  const hash = pod.metadata.labels?.['pod-template-hash'];
  if (owner.kind === 'ReplicaSet' && hash && owner.name.endsWith(`-${hash}`))
    found.push({ kind: 'Deployment', name: owner.name.slice(0, -hash.length - 1) });
  return found;
}

/** Whether a pod was made by this workload (see `podWorkloads`), in its namespace. */
export function madeBy(pod: Pod, workload: KubeObject): boolean {
  return (
    pod.metadata.namespace === workload.metadata.namespace &&
    podWorkloads(pod).some((w) => w.kind === workload.kind && w.name === workload.metadata.name)
  );
}

/** Whether a pod is ready, as its Ready condition says (it is in its Services' endpoints). */
export function podIsReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}
