import type { KubeObject, Pod, Problem } from '../contract';
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
    const status = p.status;
    for (const c of status?.containerStatuses ?? []) {
      const waiting = c.state?.waiting;
      if (waiting?.reason && STUCK_REASONS.has(waiting.reason)) {
        // A crash loop: the kubelet restarts the container, and how it ended is only in lastState.
        const last = c.lastState?.terminated;
        const exited = last && last.exitCode !== 0 ? ` ${exitedWith(last)} and` : '';
        return {
          reason: 'PodFailing',
          message:
            `pod ${p.metadata.name}: container ${c.name}${exited} is waiting: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`.slice(
              0,
              1024,
            ),
        };
      }
      const done = c.state?.terminated;
      if (done && done.exitCode !== 0 && status?.phase === 'Failed') {
        return {
          reason: 'PodFailing',
          message:
            `pod ${p.metadata.name}: container ${c.name} ${exitedWith(done)}${done.message ? `: ${done.message}` : ''}`.slice(
              0,
              1024,
            ),
        };
      }
    }
  }
  return undefined;
}

function exitedWith(ended: { exitCode?: number; reason?: string }): string {
  return `exited with code ${ended.exitCode}${ended.reason ? ` (${ended.reason})` : ''}`;
}
