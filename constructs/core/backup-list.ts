/**
 * The backups a backup claim already holds when its resource is made: a resource deleted and made
 * again under its name takes up its kept backup claim, and its status lists what is on it. A Job
 * `<name>-list-backups` mounts the claim read-only, lists the backup files (newest first, at most
 * `LISTED_BACKUPS`) and ends with a report, versioned JSON (`BackupListReport`), as its
 * termination message; the status merges it into `status.backups` and names the claim in
 * `status.backupsListedFrom`. From then on the render no longer makes the Job, and the reconciler
 * prunes it: a claim is listed once per resource.
 */
import { k8s } from 'cdk8s-plus-27';
import { type Construct } from 'constructs';
import { BuiltinTypes, childHealth, type EventSpec, type Job, type Observed, type Pod } from '../contract';
import { selectorLabels } from './labels';
import { type BackupRecord, LISTED_BACKUPS, recordedBackups } from './backup-records';
import { retriedOnDisruption, terminationReport } from './pods';
import { t } from './schema';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security';
import { stepResources } from './step-resources';

/** The `app.kubernetes.io/component` of the listing Job and its pod. */
export const BACKUP_LIST_COMPONENT = 'backup-list';

/** The Job listing a resource's backup claim. */
export function backupListJobName(resource: string): string {
  return `${resource}-list-backups`;
}

/** What the listing container reports as its termination message, as JSON. */
export interface BackupListReport {
  /** Of this shape; another is not read. */
  readonly version: 1;
  /** The claim listed. */
  readonly claim: string;
  /** Newest first. */
  readonly backups: readonly { readonly file: string; readonly sizeBytes: number; readonly time: string }[];
}

/** The kubelet keeps 4096 bytes of a termination message; the report stays below, whole. */
const REPORT_MAX_BYTES = 4000;

/**
 * The listing container's script: the files in `dir` matching `patterns` (shell globs), newest
 * first by modification time, each with its size and that time, as a `BackupListReport` — at most
 * `LISTED_BACKUPS` of them and as many as fit whole in a termination message. A name with a
 * character outside `[A-Za-z0-9._-]` (none the kit writes) is skipped, so the JSON needs no escapes.
 * Plain POSIX sh with ls, wc and date: busybox's and GNU coreutils' alike.
 */
export function listBackupsScript(props: { dir: string; patterns: readonly string[]; claim: string }): string {
  return [
    'set -eu',
    `cd ${props.dir}`,
    `out='{"version":1,"claim":"${props.claim}","backups":['`,
    "sep=''",
    'n=0',
    `for f in $(ls -1t -- ${props.patterns.join(' ')} 2>/dev/null); do`,
    '  [ -f "$f" ] || continue',
    '  case "$f" in *[!A-Za-z0-9._-]*) continue ;; esac',
    `  [ "$n" -lt ${LISTED_BACKUPS} ] || break`,
    `  entry=$(printf '{"file":"%s","sizeBytes":%s,"time":"%s"}' "$f" "$(wc -c < "$f" | tr -d ' ')" "$(date -u -r "$f" +%Y-%m-%dT%H:%M:%SZ)")`,
    `  [ $((\${#out} + \${#entry})) -lt ${REPORT_MAX_BYTES} ] || break`,
    '  out="$out$sep$entry"',
    "  sep=','",
    '  n=$((n + 1))',
    'done',
    `printf '%s]}' "$out" > /dev/termination-log`,
  ].join('\n');
}

export interface BackupListJobProps {
  readonly metadata: k8s.ObjectMeta;
  /** Labels of the Job and its pod; component `BACKUP_LIST_COMPONENT`. */
  readonly labels: Record<string, string>;
  /** The backup claim, mounted read-only. */
  readonly claim: string;
  /** Shell globs of the backup files' names. */
  readonly patterns: readonly string[];
  /** An image with a POSIX shell, ls, wc and date. */
  readonly image: string;
  /** The uid the backups are written as. */
  readonly uid: number;
}

/**
 * The Job listing a backup claim: one restricted pod without an API token, the claim mounted
 * read-only (listing never changes a backup), retried twice on failure and without counting a
 * disruption.
 */
export function backupListJob(scope: Construct, id: string, props: BackupListJobProps): k8s.KubeJob {
  const dir = '/backups';
  return new k8s.KubeJob(scope, id, {
    metadata: props.metadata,
    spec: {
      backoffLimit: 2,
      podFailurePolicy: retriedOnDisruption(),
      template: {
        metadata: { labels: props.labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurityContext(props.uid),
          containers: [
            {
              name: 'list',
              image: props.image,
              command: ['sh', '-c', listBackupsScript({ dir, patterns: props.patterns, claim: props.claim })],
              terminationMessagePolicy: 'FallbackToLogsOnError',
              resources: stepResources('10m', '16Mi', '64Mi'),
              securityContext: restrictedContainerSecurityContext(),
              volumeMounts: [{ name: 'backups', mountPath: dir, readOnly: true }],
            },
          ],
          volumes: [{ name: 'backups', persistentVolumeClaim: { claimName: props.claim, readOnly: true } }],
        },
      },
    },
  });
}

/** The status field naming the backup claim listed. */
export function backupsListedFromSchema() {
  return t.string({
    description:
      'The backup claim whose backups were listed into `backups` when this resource took it up (it may hold backups of a resource of this name deleted before).',
  });
}

/**
 * Whether the render makes the listing Job: backups are on (their claim is `claim`) and the status
 * has not listed that claim yet. Reads the status only then.
 */
export function backupsToList(
  resource: { readonly status?: { readonly backupsListedFrom?: string } },
  claim: string | undefined,
): boolean {
  return claim !== undefined && resource.status?.backupsListedFrom !== claim;
}

/** A listing report as the container wrote it, or undefined (cut short, another version, not of `claim`). */
function parsedListReport(message: string, claim: string): BackupRecord[] | undefined {
  const report = terminationReport(message, 1);
  if (report?.claim !== claim || !Array.isArray(report.backups)) return undefined;
  const records: BackupRecord[] = [];
  for (const entry of report.backups as unknown[]) {
    const { file, sizeBytes, time } = (entry ?? {}) as Record<string, unknown>;
    if (typeof file !== 'string' || !file || typeof time !== 'string' || Number.isNaN(Date.parse(time)))
      return undefined;
    if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return undefined;
    records.push({ name: file, time, sizeBytes, claim });
  }
  return records;
}

/** How the listing of a backup claim stands, for the status. */
export interface BackupListing {
  /** The backups found on the claim (none until the Job has succeeded). */
  readonly records: readonly BackupRecord[];
  /** The claim, once its listing is over (succeeded, or failed for good): the Job is no longer made. */
  readonly listedFrom?: string;
  /** Why the listing failed, when it did (for a Warning Event). */
  readonly failure?: string;
}

/**
 * The listing of `claim` from its Job and pods: done when the Job completed and a pod's report is
 * read, or when the Job failed for good (its backups then go unlisted, not listed again and again).
 */
export function backupListing(claim: string, job: Job | undefined, pods: readonly Pod[]): BackupListing {
  if (!job) return { records: [] };
  return listingOfJob(claim, job, pods);
}

/**
 * The listing of `claim` as a reconcile observed it: the Job `<app instance>-list-backups` and,
 * only while there is one, its pods (by their labels).
 */
export function observedBackupListing(
  observed: Pick<Observed, 'children' | 'read'>,
  of: { readonly app: string; readonly instance: string; readonly claim: string },
): BackupListing {
  const job = observed.children.of(BuiltinTypes.Job, backupListJobName(of.instance));
  if (!job) return { records: [] };
  const labels = selectorLabels({
    name: of.app,
    instance: of.instance,
    component: BACKUP_LIST_COMPONENT,
    managedBy: '',
  });
  return listingOfJob(of.claim, job, observed.read(BuiltinTypes.Pod, labels));
}

function listingOfJob(claim: string, job: Job, pods: readonly Pod[]): BackupListing {
  const health = childHealth(job);
  if (health.readiness === 'Failed') {
    return { records: [], listedFrom: claim, failure: `Job ${job.metadata.name ?? ''}: ${health.message}` };
  }
  if (health.readiness !== 'Current') return { records: [] };
  const succeeded = pods.filter((p) => p.status?.phase === 'Succeeded');
  for (const c of succeeded.flatMap((p) => p.status?.containerStatuses ?? [])) {
    const records = parsedListReport(c.state?.terminated?.message?.trim() ?? '', claim);
    if (records) return { records, listedFrom: claim };
  }
  // The Job is seen complete before its pod is (each has its own watch): wait for the pod.
  if (!succeeded.length) return { records: [] };
  // Its pod ended without a report that can be read (cut short, another version).
  return { records: [], listedFrom: claim, failure: `Job ${job.metadata.name ?? ''} ended without a readable report` };
}

/**
 * The Event of a listing just over (`before`: the status it had): how many backups it found on the
 * claim (none when it found none), or a Warning that it could not list them.
 */
export function backupListEvents(
  what: string,
  before: { readonly backupsListedFrom?: string } | undefined,
  listing: BackupListing | undefined,
): EventSpec[] {
  const claim = listing?.listedFrom;
  if (!claim || before?.backupsListedFrom === claim) return [];
  if (listing.failure) {
    return [
      {
        type: 'Warning',
        reason: 'BackupsNotListed',
        message: `Could not list the ${what}s on PVC ${claim}: ${listing.failure}`.slice(0, 1024),
      },
    ];
  }
  const n = listing.records.length;
  if (!n) return [];
  return [
    {
      type: 'Normal',
      reason: 'BackupsListed',
      message: `Listed ${n} ${what}${n === 1 ? '' : 's'} already on PVC ${claim}`,
    },
  ];
}

/**
 * A kind's status fields of its backups: `backups` (those listed before, those its backup pods
 * report and those its listing found, see `recordedBackups`) and `backupsListedFrom`, each only
 * when there is one.
 */
export function backupStatusFields(
  before: { readonly backups?: readonly BackupRecord[]; readonly backupsListedFrom?: string } | undefined,
  backupPods: readonly Pod[],
  listing: BackupListing | undefined,
  keep?: number,
): { backups?: BackupRecord[]; backupsListedFrom?: string } {
  const backups = recordedBackups(before?.backups, backupPods, keep, listing?.records);
  const listedFrom = listing?.listedFrom ?? before?.backupsListedFrom;
  return { ...(backups.length ? { backups } : {}), ...(listedFrom ? { backupsListedFrom: listedFrom } : {}) };
}
