/**
 * How a kind seeded from a backup (`spec.restore`) reports the restore: the condition `Restored`
 * and, when a restore Job fails, `Degraded` with reason `RestoreFailed` naming the backup and the
 * error. Once `Restored` is True the restore is over for good: the render stops making restore
 * Jobs, so a StatefulSet deleted and made again later never restores over data.
 */
import { childHealth, type Job, type Pod, type Problem } from '../contract';
import { type Condition, type ConditionList, findCondition } from '../contract/conditions';

export const RESTORED = 'Restored';

/** Whether a resource with `spec.restore` is still to be seeded: its status does not yet say `Restored`. */
export function stillToRestore(
  wantsRestore: boolean,
  status: { readonly conditions?: readonly Condition[] } | undefined,
): boolean {
  if (!wantsRestore) return false;
  return findCondition(status?.conditions, RESTORED)?.status !== 'True';
}

export interface RestoreProgress {
  /** What is restored, for messages, e.g. `snapshot a.db from PVC b`. */
  readonly source: string;
  /** The restore Jobs the render asked for, as they are (undefined: not made yet). */
  readonly jobs: readonly (Job | undefined)[];
  /** The restore Jobs' pods. */
  readonly pods: readonly Pod[];
  /** The children's first failure (see `assessChildren`). */
  readonly failure?: Problem;
  /** The claim the backup is read from: a pod waiting for it means it does not exist. */
  readonly sourceClaim: string;
}

/**
 * Sets `Restored` from the restore Jobs (kept True once True) and returns the problem for
 * `Degraded` when the restore failed: a Job failed (its pod's last words say why), or the claim
 * holding the backup does not exist.
 */
export function setRestored(
  list: ConditionList,
  previous: readonly Condition[] | undefined,
  p: RestoreProgress,
): Problem | undefined {
  const before = findCondition(previous, RESTORED);
  if (before?.status === 'True') {
    list.set(RESTORED, 'True', before.reason, before.message);
    return undefined;
  }
  const problem = restoreProblem(p);
  if (problem) {
    list.set(RESTORED, 'False', problem.reason, problem.message);
    return problem;
  }
  const complete = p.jobs.filter((j) => j && childHealth(j).readiness === 'Current').length;
  if (complete === p.jobs.length) {
    list.set(RESTORED, 'True', 'Restored', `restored from ${p.source}`);
  } else {
    list.set(
      RESTORED,
      'False',
      'Restoring',
      `restoring ${p.source}: ${complete}/${p.jobs.length} restore Jobs complete`,
    );
  }
  return undefined;
}

function restoreProblem(p: RestoreProgress): Problem | undefined {
  const failed = (message: string): Problem => ({
    reason: 'RestoreFailed',
    message: `restoring ${p.source} failed: ${message}`.slice(0, 1024),
  });
  const missing = p.pods.some((pod) =>
    pod.status?.conditions?.some(
      (c) => c.type === 'PodScheduled' && c.status === 'False' && c.message?.includes(`"${p.sourceClaim}" not found`),
    ),
  );
  if (missing) return failed(`PVC ${p.sourceClaim} does not exist in this namespace`);
  const names = p.jobs.flatMap((j) => (j?.metadata.name ? [j.metadata.name] : []));
  const failure = p.failure;
  if (failure?.object?.kind === 'Job' && names.includes(failure.object.name)) return failed(failure.message);
  const failedJob = p.jobs.find((j) => j && childHealth(j).readiness === 'Failed');
  return failedJob ? failed(`Job ${failedJob.metadata.name ?? ''}: ${childHealth(failedJob).message}`) : undefined;
}
