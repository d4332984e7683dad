import {
  BuiltinTypes,
  type FinalizeContext,
  type FinalizeOutcome,
  isNamespaceTerminating,
  type KubeObject,
  TerminalError,
} from '../contract';

/** A Job that must succeed before a deleted resource goes, e.g. its final snapshot. */
export interface FinalJob {
  /** The Job, owned by the resource (its controller owner reference). */
  readonly job: KubeObject;
  /** The resource, e.g. `Database` (for messages). */
  readonly kind: string;
  /** What the Job does, e.g. `dump the database to PVC my-db-backup`. */
  readonly does: string;
  /** What it left behind, e.g. `the dump is on PVC my-db-backup, which is kept`. */
  readonly leaves: string;
}

/**
 * The `finalize` step of a final snapshot: creates the Job once and waits for it to succeed
 * (`FinalSnapshotStarted`, `FinalSnapshotRunning`, `FinalSnapshotTaken`). A Job of that name
 * it did not create is never taken over (`FinalSnapshotBlocked`), and a failed one holds the
 * deletion (`FinalSnapshotFailed`): the message says to delete that Job to try again, or to set
 * `spec.backup.finalSnapshot` to false. In a namespace being deleted nothing can be created and
 * its claims go with it, so there is no final snapshot to wait for.
 */
export async function runFinalJob(final: FinalJob, context: FinalizeContext): Promise<FinalizeOutcome> {
  const name = final.job.metadata.name ?? '';
  const waiting = {
    done: false,
    reason: 'FinalSnapshotRunning',
    message: `waiting for Job ${name} to ${final.does}`,
  } as const;
  const escape = `delete Job ${name} to try again, or set spec.backup.finalSnapshot to false to delete the ${final.kind} without it`;
  const job = context.children.of(BuiltinTypes.Job, name);
  if (!job) {
    if (context.existing(BuiltinTypes.Job, name)) {
      throw new TerminalError(
        `a Job named ${name} exists that this ${final.kind} did not create, and the operator never takes one over: ${escape}`,
        'FinalSnapshotBlocked',
      );
    }
    let created: boolean;
    try {
      created = await context.api.createIfAbsent(BuiltinTypes.Job, final.job);
    } catch (err) {
      if (isNamespaceTerminating(err)) return { done: true };
      throw err;
    }
    return {
      ...waiting,
      events: created ? [{ type: 'Normal', reason: 'FinalSnapshotStarted', message: `Created Job ${name}` }] : [],
    };
  }
  const conditions = job.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) {
    return {
      done: true,
      events: [{ type: 'Normal', reason: 'FinalSnapshotTaken', message: `Job ${name} succeeded: ${final.leaves}` }],
    };
  }
  const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed) {
    throw new TerminalError(
      `the final snapshot Job ${name} failed (${failed.reason ?? 'Failed'}: ${failed.message ?? 'no message'}): ${escape}`,
      'FinalSnapshotFailed',
    );
  }
  return waiting;
}

/** A Job made from a CronJob's template: the scheduled work, once, now. */
export function jobFromCronJob(cronJob: KubeObject, name: string): KubeObject {
  const template = (cronJob as { spec?: { jobTemplate?: { metadata?: KubeObject['metadata']; spec?: unknown } } }).spec
    ?.jobTemplate;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cronJob.metadata.namespace,
      labels: template?.metadata?.labels ?? cronJob.metadata.labels,
      ownerReferences: cronJob.metadata.ownerReferences,
    },
    spec: template?.spec,
  };
}
