/**
 * What a kind's backups made, for its status: each backup Job's container ends by writing one
 * line, `backup <file> <bytes>`, as its termination message (the kubelet's file, writable under
 * a read-only root and needing no API token), and the reconciler reads it off the finished pod.
 * Pods go with their Job's history, so the status keeps the list itself, newest first.
 */
import type { Pod } from '../contract';
import { compareText } from '../contract/compare';
import { t } from './schema';

/** One backup as the status lists it. */
export interface BackupRecord {
  readonly name: string;
  readonly time: string;
  readonly sizeBytes: number;
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
    }),
    {
      maxItems: 1000,
      description: `The ${what}s this resource has written, newest first (at most ${LISTED_BACKUPS}; a rotation may have deleted older ones).`,
    },
  );
}

/**
 * The shell line a backup container ends with: the termination message naming the file it wrote
 * (`file`, a shell word such as "$f") and its size.
 */
export function reportBackupLine(file: string): string {
  return `printf 'backup %s %s' "$(basename ${file})" "$(wc -c < ${file} | tr -d ' ')" > /dev/termination-log`;
}

const REPORT = /^backup (\S+) (\d+)$/;

/** The backups a finished pod's containers report in their termination messages. */
function reportedBackups(pod: Pod): BackupRecord[] {
  if (pod.status?.phase !== 'Succeeded') return [];
  return (pod.status.containerStatuses ?? []).flatMap((c) => {
    const ended = c.state?.terminated;
    const [, name, size] = REPORT.exec(ended?.message?.trim() ?? '') ?? [];
    return name && size && ended?.finishedAt ? [{ name, time: ended.finishedAt, sizeBytes: Number(size) }] : [];
  });
}

/**
 * The backups listed before, with those the finished backup pods report, newest first, each once,
 * at most `keep` (rotation deletes older files: the list says what may still be there).
 */
export function recordedBackups(
  previous: readonly BackupRecord[] | undefined,
  pods: readonly Pod[],
  keep = LISTED_BACKUPS,
): BackupRecord[] {
  const byName = new Map<string, BackupRecord>((previous ?? []).map((b) => [b.name, b]));
  for (const record of pods.flatMap(reportedBackups)) byName.set(record.name, record);
  return [...byName.values()]
    .sort((a, b) => compareText(b.time, a.time) || compareText(b.name, a.name))
    .slice(0, Math.min(keep, LISTED_BACKUPS));
}
