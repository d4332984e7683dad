import type { Deployment, KubeObject, Pod, Problem } from '../contract';
import { compareText } from '../contract/compare';
import { isJsonObject } from '../contract/json';
import { podProblem } from '../contract/pod-problems';

/**
 * For `mapReads.Pod`: the resource a pod belongs to, by its standard labels — pods are made by a
 * Deployment's ReplicaSet or a StatefulSet, not owned by the resource, but carry its name as
 * `app.kubernetes.io/instance`, with one of `names` as the app name and `component`.
 */
export function podInstance(
  names: readonly string[],
  component: string | readonly string[],
): (pod: KubeObject) => string | undefined {
  const components = typeof component === 'string' ? [component] : component;
  return (pod) => {
    const l = pod.metadata.labels ?? {};
    const name = l['app.kubernetes.io/name'];
    return name !== undefined && names.includes(name) && components.includes(l['app.kubernetes.io/component'] ?? '')
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

/**
 * The first pod (by name) that cannot run — a container stuck in a back-off or exited non-zero
 * in a failed pod (`PodFailing`), or no node to take it (`PodUnschedulable`) — as a reason and
 * message for a `Degraded` condition (see `podProblem`). A kind's `observed.health.failure`
 * traces pods to its own children; this is for pods it reads itself.
 */
export function podFailure(pods: readonly Pod[]): Problem | undefined {
  for (const p of [...pods].sort((a, b) => compareText(a.metadata.name ?? '', b.metadata.name ?? ''))) {
    const problem = podProblem(p);
    if (problem) return problem;
  }
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

/**
 * The pod failure policy of a Job that runs once (a restore: a corrupt snapshot stays corrupt, so
 * `backoffLimit: 0`), but whose pod may be disrupted — evicted, preempted, its node drained: the
 * API server marks such a pod `DisruptionTarget`, and the Job makes another without counting it a
 * failure. Needs `restartPolicy: Never`.
 */
export function retriedOnDisruption(): {
  rules: { action: string; onPodConditions: { type: string; status: string }[] }[];
} {
  return { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] };
}

/**
 * The report a container wrote as its termination message, versioned JSON (a backup's, a
 * restore's): its fields when it is an object of `version`; undefined for anything else — not
 * JSON, cut short (the kubelet keeps at most 4 KiB of it), of another version.
 */
export function terminationReport(message: string, version: number): Record<string, unknown> | undefined {
  let report: unknown;
  try {
    report = JSON.parse(message);
  } catch {
    return undefined;
  }
  return isJsonObject(report) && report.version === version ? report : undefined;
}
