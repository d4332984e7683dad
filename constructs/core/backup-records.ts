/**
 * What a kind's backups made, for its status: each backup Job's container ends by writing a
 * report, versioned JSON (`BackupReport`: the file, its size, the claim it is on), as its
 * termination message (the kubelet's file, writable under a read-only root and needing no API
 * token), and the reconciler reads it off the finished pod. Pods go with their Job's history, so
 * the status keeps the list itself, newest first.
 */
import type { Pod } from '../contract';
import { compareText } from '../contract/compare';
import { terminationReport } from './pods';
import { t } from './schema';

/** One backup as the status lists it. */
export interface BackupRecord {
  readonly name: string;
  readonly time: string;
  readonly sizeBytes: number;
  /** The claim it was written to (none: listed by a version that did not say). */
  readonly claim?: string;
}

/** What a backup container reports as its termination message, as JSON. */
export interface BackupReport {
  /** Of this shape; another is not read. */
  readonly version: 1;
  /** The file's name on the claim. */
  readonly file: string;
  readonly sizeBytes: number;
  readonly claim: string;
}

/** How many backups a status lists at most, newest first (older ones may still be on the volume). */
export const LISTED_BACKUPS = 20;

/** The status field listing a resource's backups. */
export function backupRecordsSchema(what: string) {
  return t.array(
    t.object({
      name: t.string({
        required: true,
        description: `The ${what}'s file name on the backup volume; restore it by this name.`,
      }),
      time: t.dateTime({ required: true, description: 'When it was written.' }),
      sizeBytes: t.integer({ required: true, minimum: 0, description: 'Its size in bytes.' }),
      claim: t.string({ description: 'The PersistentVolumeClaim it is on.' }),
    }),
    {
      maxItems: 1000,
      description: `The ${what}s this resource has written, newest first (at most ${LISTED_BACKUPS}; a rotation may have deleted older ones).`,
    },
  );
}

/**
 * The shell line a backup container ends with: its report (`BackupReport`) naming the file it
 * wrote (`file`, a shell word such as "$f"), its size and `claim`, as its termination message.
 * The file and claim are names the kit makes (no quote or backslash in them).
 */
export function reportBackupLine(file: string, claim: string): string {
  const json = `{"version":1,"file":"%s","sizeBytes":%s,"claim":"%s"}`;
  return `printf '${json}' "$(basename ${file})" "$(wc -c < ${file} | tr -d ' ')" '${claim}' > /dev/termination-log`;
}

/** A report as a backup container wrote it, or undefined for anything else (a truncated one, another version). */
function parsedReport(message: string): { file: string; sizeBytes: number; claim?: string } | undefined {
  const report = terminationReport(message, 1);
  // Anything but a report of this version: the line the version before wrote, or nothing.
  if (!report) return legacyReport(message);
  const { file, sizeBytes, claim } = report;
  if (typeof file !== 'string' || !file || typeof claim !== 'string' || !claim) return undefined;
  if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return undefined;
  return { file, sizeBytes, claim };
}

/**
 * The line the version before wrote (`backup <file> <bytes>`): a backup that finished before the
 * operator was upgraded is still listed (its claim not said).
 */
function legacyReport(message: string): Omit<BackupReport, 'version' | 'claim'> | undefined {
  const [, file, size] = /^backup (\S+) (\d+)$/.exec(message) ?? [];
  return file && size ? { file, sizeBytes: Number(size) } : undefined;
}

/** The backups a finished pod's containers report in their termination messages. */
function reportedBackups(pod: Pod): BackupRecord[] {
  if (pod.status?.phase !== 'Succeeded') return [];
  return (pod.status.containerStatuses ?? []).flatMap((c) => {
    const ended = c.state?.terminated;
    const report = parsedReport(ended?.message?.trim() ?? '');
    if (!report || !ended?.finishedAt) return [];
    const { file, sizeBytes } = report;
    return [{ name: file, time: ended.finishedAt, sizeBytes, ...(report.claim ? { claim: report.claim } : {}) }];
  });
}

/**
 * The backups listed before, with those the finished backup pods report and those found on the
 * claim (`found`, see backup-list; a name already listed keeps its record), newest first, each
 * once, at most `keep` (rotation deletes older files: the list says what may still be there).
 */
export function recordedBackups(
  previous: readonly BackupRecord[] | undefined,
  pods: readonly Pod[],
  keep = LISTED_BACKUPS,
  found: readonly BackupRecord[] = [],
): BackupRecord[] {
  const byName = new Map<string, BackupRecord>(found.map((b) => [b.name, b]));
  for (const record of previous ?? []) byName.set(record.name, record);
  for (const record of pods.flatMap(reportedBackups)) byName.set(record.name, record);
  return [...byName.values()]
    .sort((a, b) => compareText(b.time, a.time) || compareText(b.name, a.name))
    .slice(0, Math.min(keep, LISTED_BACKUPS));
}
