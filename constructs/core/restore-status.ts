/**
 * How a kind seeded from a backup (`spec.restore`) reports the restore: the condition `Restored`
 * and, when a restore Job fails, `Degraded` with reason `RestoreFailed` naming the backup and the
 * error. Once `Restored` is True the restore is over for good: the render stops making restore
 * Jobs, so a StatefulSet deleted and made again later never restores over data.
 */
import { childHealth, type Job, type Pod, type Problem } from '../contract';
import { type Condition, type ConditionList, findCondition } from '../contract/conditions';
import { terminationReport } from './pods';

export const RESTORED = 'Restored';

/** What a restore Job's container reports as its termination message once it loaded a backup, as JSON. */
export interface RestoreReport {
  /** Of this shape; another is not read. */
  readonly version: 1;
  /** The backup's file name, on `claim`. */
  readonly restored: string;
  readonly claim: string;
}

/**
 * The shell line a restore container ends with: its report (`RestoreReport`) naming the backup
 * it loaded (`file`, a shell word such as "$dump") and the claim it is on, as its termination
 * message. Both are names the kit makes (no quote or backslash in them).
 */
export function reportRestoreLine(file: string, claim: string): string {
  return `printf '{"version":1,"restored":"%s","claim":"%s"}' ${file} '${claim}' > /dev/termination-log`;
}

/** The backup a finished restore pod reports it loaded, as `claim/file`; undefined when none says (a truncated report, another version). */
export function reportedRestore(pods: readonly Pod[]): string | undefined {
  const messages = pods
    .filter((pod) => pod.status?.phase === 'Succeeded')
    .flatMap((pod) => pod.status?.containerStatuses ?? [])
    .map((c) => c.state?.terminated?.message?.trim() ?? '');
  for (const message of messages) {
    const report = parsedRestoreReport(message);
    if (report) return `${report.claim}/${report.restored}`;
  }
  return undefined;
}

/** A restore report as a restore container wrote it, or undefined for anything else. */
function parsedRestoreReport(message: string): Omit<RestoreReport, 'version'> | undefined {
  const { restored, claim } = terminationReport(message, 1) ?? {};
  return typeof restored === 'string' && restored && typeof claim === 'string' && claim
    ? { restored, claim }
    : undefined;
}

/** Whether a resource with `spec.restore` is still to be seeded: its status does not yet say `Restored`. */
export function stillToRestore(resource: {
  readonly spec: { readonly restore?: unknown };
  readonly status?: { readonly conditions?: readonly Condition[] };
}): boolean {
  // The status read only with spec.restore: a render that reads it is rendered again at each of
  // our status writes (and its resource reconciled then, to see it).
  if (resource.spec.restore === undefined) return false;
  return findCondition(resource.status?.conditions, RESTORED)?.status !== 'True';
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
