import type { Deployment, KubeObject, Pod, Problem } from '../contract';
import { compareText } from '../contract/compare';

/**
 * For `mapReads.Pod`: the resource a pod belongs to, by its standard labels — pods are made by a
 * Deployment's ReplicaSet or a StatefulSet, not owned by the resource, but carry its name as
 * `app.kubernetes.io/instance`, with one of `names` as the app name and `component`.
 */
export function podInstance(names: readonly string[], component: string): (pod: KubeObject) => string | undefined {
  return (pod) => {
    const l = pod.metadata.labels ?? {};
    const name = l['app.kubernetes.io/name'];
    return name !== undefined && names.includes(name) && l['app.kubernetes.io/component'] === component
      ? l['app.kubernetes.io/instance']
      : undefined;
  };
}

/** Names of the live pods (not terminating, not finished), sorted. */
export function livePodNames(pods: readonly Pod[]): string[] {
  return pods
    .filter((p) => {
      const phase = p.status?.phase;
      return !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
    })
    .map((p) => p.metadata.name ?? '')
    .sort();
}

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
 * The first pod (by name) whose container failed or cannot start — a failed pod with a
 * container that exited non-zero, or a container stuck in a back-off — as a reason and message
 * for a `Degraded` condition.
 */
export function podFailure(pods: readonly Pod[]): Problem | undefined {
  for (const p of [...pods].sort((a, b) => compareText(a.metadata.name ?? '', b.metadata.name ?? ''))) {
    if (p.metadata.deletionTimestamp) continue;
    for (const c of p.status?.containerStatuses ?? []) {
      const failure = containerFailure(c, p.status?.phase === 'Failed');
      if (failure) return { reason: 'PodFailing', message: `pod ${p.metadata.name}: ${failure}`.slice(0, 1024) };
    }
  }
  return undefined;
}

type ContainerStatus = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

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

/**
 * A Deployment's `ReplicaFailure=True` condition (pods it cannot create: quota, admission) as a
 * problem for `Degraded`, with this message when the condition has none.
 */
export function replicaFailure(deployment: Deployment | undefined, fallbackMessage: string): Problem | undefined {
  const failure = deployment?.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  if (!failure) return undefined;
  return { reason: failure.reason ?? 'ReplicaFailure', message: (failure.message ?? fallbackMessage).slice(0, 1024) };
}

function exitedWith(ended: { exitCode?: number; reason?: string }): string {
  return `exited with code ${ended.exitCode}${ended.reason ? ` (${ended.reason})` : ''}`;
}
