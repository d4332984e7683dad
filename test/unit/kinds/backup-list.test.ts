/**
 * The backups a kept backup claim holds when its resource is made again under its name: the
 * listing Job the EtcdCluster and Database renders make until the status names the claim, its
 * script run with real shells (the system's sh and busybox's, as the images have them), and the
 * status and Events made from its report.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { backupListEvents, backupListing, listBackupsScript } from '../../../constructs/core/backup-list';
import { databaseController, desiredDatabaseStatus } from '../../../constructs/database/controller';
import { desiredEtcdStatus, etcdClusterController } from '../../../constructs/etcd/controller';
import { renderChildrenWithWaits } from '../../../operator/runtime/children/render';
import { validateBuiltin } from '../../support/builtin-validator';
import { databaseResource, etcdResource } from '../../support/data-resources';

const etcd = etcdResource;
const database = (spec: object, status?: object) => databaseResource(spec, status, true);

const backup = { schedule: '0 2 * * *', storage: '1Gi', retention: 5 };
const find = (objects: readonly any[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

/** The shells the listing runs under: the system's and, where it is installed, busybox's (the etcd tools image). */
const SHELLS: string[][] = [['sh'], ...(hasBusybox() ? [['busybox', 'sh']] : [])];

function hasBusybox(): boolean {
  try {
    execFileSync('busybox', ['true']);
    return true;
  } catch {
    return false;
  }
}

/** Runs the listing of `dir` under `shell`; returns its report. */
function listWith(shell: string[], dir: string, patterns: string[], claim = 'kv-backups'): any {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'list-report-')), 'message');
  const script = listBackupsScript({ dir, patterns, claim }).replace('/dev/termination-log', report);
  execFileSync(shell[0]!, [...shell.slice(1), '-c', script]);
  const text = fs.readFileSync(report, 'utf8');
  fs.rmSync(path.dirname(report), { recursive: true });
  return { text, report: JSON.parse(text) };
}

/** A file of `size` bytes in `dir`, last modified at `time`. */
function file(dir: string, name: string, size: number, time: string): void {
  fs.writeFileSync(path.join(dir, name), 'x'.repeat(size));
  fs.utimesSync(path.join(dir, name), new Date(time), new Date(time));
}

describe.each(SHELLS.map((s) => [s.join(' '), s] as const))('the listing script under %s', (_, shell) => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backup-list-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true });
  });

  test('lists the backup files matching the patterns, newest first by time written, with their sizes; nothing else', () => {
    file(dir, 'kv-20261128T020000Z.db', 10, '2026-11-28T02:00:05Z');
    file(dir, 'kv-20261130T020000Z.db', 30, '2026-11-30T02:00:05Z');
    file(dir, 'kv-20261129T020000Z.db', 20, '2026-11-29T02:00:05Z');
    // The snapshot being written, another cluster's file, a name JSON would need escapes for.
    file(dir, '.in-progress.db', 5, '2026-11-30T03:00:00Z');
    file(dir, 'notes.txt', 5, '2026-11-30T03:00:00Z');
    file(dir, 'kv-"quoted".db', 5, '2026-11-30T03:00:00Z');
    fs.mkdirSync(path.join(dir, 'kv-dir.db'));
    expect(listWith(shell, dir, ['kv-*.db']).report).toEqual({
      version: 1,
      claim: 'kv-backups',
      backups: [
        { file: 'kv-20261130T020000Z.db', sizeBytes: 30, time: '2026-11-30T02:00:05Z' },
        { file: 'kv-20261129T020000Z.db', sizeBytes: 20, time: '2026-11-29T02:00:05Z' },
        { file: 'kv-20261128T020000Z.db', sizeBytes: 10, time: '2026-11-28T02:00:05Z' },
      ],
    });
  });

  test('an empty claim, or one whose files match no pattern, reports no backups', () => {
    expect(listWith(shell, dir, ['kv-*.db']).report).toEqual({ version: 1, claim: 'kv-backups', backups: [] });
    file(dir, 'other-20261128T020000Z.db', 10, '2026-11-28T02:00:05Z');
    expect(listWith(shell, dir, ['kv-*.db', 'final-kv-*.sql']).report.backups).toEqual([]);
  });

  test('several patterns (scheduled and final dumps); at most 20, and no more than fit whole in a termination message', () => {
    for (let day = 1; day <= 25; day++) {
      const d = String(day).padStart(2, '0');
      file(dir, `orders-202611${d}T020000Z.sql`, day, `2026-11-${d}T02:00:05Z`);
    }
    file(dir, 'final-orders-20261126T000000Z.sql', 99, '2026-11-26T00:00:05Z');
    const { report } = listWith(shell, dir, ['orders-*.sql', 'final-orders-*.sql'], 'orders-backup');
    expect(report.backups).toHaveLength(20);
    expect(report.backups[0]).toEqual({
      file: 'final-orders-20261126T000000Z.sql',
      sizeBytes: 99,
      time: '2026-11-26T00:00:05Z',
    });
    expect(report.backups[1].file).toBe('orders-20261125T020000Z.sql');
    // Names as long as a file system takes: fewer listed, the report whole and under the kubelet's 4096 bytes.
    const long = fs.mkdtempSync(path.join(os.tmpdir(), 'backup-list-long-'));
    for (let i = 0; i < 20; i++)
      file(long, `kv-${String(i).padStart(2, '0')}${'x'.repeat(200)}.db`, i, '2026-11-28T02:00:05Z');
    const big = listWith(shell, long, ['kv-*.db']);
    fs.rmSync(long, { recursive: true });
    expect(Buffer.byteLength(big.text)).toBeLessThan(4096);
    expect(big.report.backups.length).toBeGreaterThan(5);
    expect(big.report.backups.length).toBeLessThan(20);
  });
});

describe('the listing Job as the kinds render it', () => {
  test('an EtcdCluster with backups whose status has not listed its claim gets a Job listing it: read-only, restricted, no token', () => {
    const objects = renderChildrenWithWaits(etcdClusterController, etcd({ backup })).objects;
    const job = find(objects, 'Job', 'kv-list-backups');
    expect(job).toBeDefined();
    expect(() => {
      validateBuiltin(job);
    }).not.toThrow();
    expect(job.metadata.ownerReferences[0]).toMatchObject({ kind: 'EtcdCluster', name: 'kv', controller: true });
    expect(job.metadata.labels['app.kubernetes.io/component']).toBe('backup-list');
    const pod = job.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.volumes).toEqual([
      { name: 'backups', persistentVolumeClaim: { claimName: 'kv-backups', readOnly: true } },
    ]);
    expect(pod.containers[0].volumeMounts[0].readOnly).toBe(true);
    expect(pod.containers[0].securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(pod.containers[0].command[2]).toContain('kv-*.db');
    expect(job.spec.podFailurePolicy.rules[0].onPodConditions[0].type).toBe('DisruptionTarget');
  });

  test('no Job once the status names the claim, nor without backups', () => {
    const listed = renderChildrenWithWaits(
      etcdClusterController,
      etcd({ backup }, { backupsListedFrom: 'kv-backups' }),
    );
    expect(find(listed.objects, 'Job', 'kv-list-backups')).toBeUndefined();
    expect(find(listed.objects, 'CronJob', 'kv-backup')).toBeDefined();
    const none = renderChildrenWithWaits(etcdClusterController, etcd({})).objects;
    expect(none.filter((o: any) => o.kind === 'Job')).toEqual([]);
  });

  test("a Database lists its kept backup claim (Retain) with its engine's image; not under Delete (the claim went with the Database before), nor with backups off", () => {
    const job = find(renderChildrenWithWaits(databaseController, database({})).objects, 'Job', 'orders-list-backups');
    expect(() => {
      validateBuiltin(job);
    }).not.toThrow();
    expect(job.spec.template.spec.containers[0].image).toBe('postgres:13');
    expect(job.spec.template.spec.containers[0].command[2]).toContain('orders-*.sql final-orders-*.sql');
    expect(job.spec.template.spec.volumes[0].persistentVolumeClaim).toEqual({
      claimName: 'orders-backup',
      readOnly: true,
    });
    for (const spec of [
      { deletionPolicy: 'Delete' },
      { backup: { enabled: false, schedule: '0 2 * * *', finalSnapshot: false } },
    ]) {
      const objects = renderChildrenWithWaits(databaseController, database(spec)).objects;
      expect(find(objects, 'Job', 'orders-list-backups')).toBeUndefined();
    }
    const listed = renderChildrenWithWaits(databaseController, database({}, { backupsListedFrom: 'orders-backup' }));
    expect(find(listed.objects, 'Job', 'orders-list-backups')).toBeUndefined();
  });
});

describe('the listing in status', () => {
  const job = (condition?: string) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'kv-list-backups', generation: 1 },
    spec: {},
    status: condition
      ? {
          conditions: [
            {
              type: condition,
              status: 'True',
              reason: condition === 'Failed' ? 'BackoffLimitExceeded' : '',
              message: condition === 'Failed' ? 'Job has reached the specified backoff limit' : '',
            },
          ],
          ...(condition === 'Complete' ? { succeeded: 1 } : { failed: 3 }),
        }
      : { active: 1 },
  });
  const pod = (message: string) => ({
    metadata: { name: 'kv-list-backups-x' },
    status: {
      phase: 'Succeeded',
      containerStatuses: [{ name: 'list', state: { terminated: { exitCode: 0, message } } }],
    },
  });
  const report = (backups: object[], claim = 'kv-backups') => JSON.stringify({ version: 1, claim, backups });
  const found = [
    { file: 'kv-20261130T020000Z.db', sizeBytes: 30, time: '2026-11-30T02:00:05Z' },
    { file: 'kv-20261129T020000Z.db', sizeBytes: 20, time: '2026-11-29T02:00:05Z' },
  ];

  test("a re-made EtcdCluster's status lists the snapshots its claim holds and names the claim; backups it reports later join them", () => {
    const listing = backupListing('kv-backups', job('Complete'), [pod(report(found))]);
    const status = desiredEtcdStatus(etcd({ backup }), { members: [], backupListing: listing });
    expect(status.backups).toEqual([
      { name: 'kv-20261130T020000Z.db', time: '2026-11-30T02:00:05Z', sizeBytes: 30, claim: 'kv-backups' },
      { name: 'kv-20261129T020000Z.db', time: '2026-11-29T02:00:05Z', sizeBytes: 20, claim: 'kv-backups' },
    ]);
    expect(status.backupsListedFrom).toBe('kv-backups');
    expect(backupListEvents('snapshot', undefined, listing)).toEqual([
      { type: 'Normal', reason: 'BackupsListed', message: 'Listed 2 snapshots already on PVC kv-backups' },
    ]);
    // Kept once the Job is pruned; a new backup's own record joins the list, newest first.
    const newer = {
      metadata: { name: 'b' },
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'rotate',
            state: {
              terminated: {
                exitCode: 0,
                finishedAt: '2026-12-01T02:00:06Z',
                message: JSON.stringify({
                  version: 1,
                  file: 'kv-20261201T020000Z.db',
                  sizeBytes: 40,
                  claim: 'kv-backups',
                }),
              },
            },
          },
        ],
      },
    };
    const later = desiredEtcdStatus(etcd({ backup }, status), { members: [], backupPods: [newer] });
    expect(later.backupsListedFrom).toBe('kv-backups');
    expect(later.backups!.map((b) => b.name)).toEqual([
      'kv-20261201T020000Z.db',
      'kv-20261130T020000Z.db',
      'kv-20261129T020000Z.db',
    ]);
    expect(
      backupListEvents(
        'snapshot',
        status,
        backupListing('kv-backups', job('Complete') as any, [pod(report(found))] as any),
      ),
    ).toEqual([]);
  });

  test('a Database: its dumps listed the same way', () => {
    const dumps = [{ file: 'final-orders-20261130T000000Z.sql', sizeBytes: 5, time: '2026-11-30T00:00:05Z' }];
    const listing = backupListing('orders-backup', job('Complete'), [pod(report(dumps, 'orders-backup'))]);
    const status = desiredDatabaseStatus(database({}), { hasCredentials: true, backupListing: listing });
    expect(status.backups).toEqual([
      { name: 'final-orders-20261130T000000Z.sql', time: '2026-11-30T00:00:05Z', sizeBytes: 5, claim: 'orders-backup' },
    ]);
    expect(status.backupsListedFrom).toBe('orders-backup');
  });

  test('not over while the Job runs, nor when it is seen complete before its pod is', () => {
    expect(backupListing('kv-backups', job() as any, [])).toEqual({ records: [] });
    expect(backupListing('kv-backups', job('Complete') as any, [])).toEqual({ records: [] });
    expect(backupListing('kv-backups', undefined, [])).toEqual({ records: [] });
    const status = desiredEtcdStatus(etcd({ backup }), { members: [], backupListing: { records: [] } });
    expect(status.backupsListedFrom).toBeUndefined();
    expect(status.backups).toBeUndefined();
  });

  test('a Job failed for good, or a report that cannot be read (cut short, another version, another claim), ends the listing with a Warning; nothing listed', () => {
    const failed = backupListing('kv-backups', job('Failed'), []);
    expect(failed).toMatchObject({ records: [], listedFrom: 'kv-backups' });
    expect(backupListEvents('snapshot', undefined, failed)).toEqual([
      {
        type: 'Warning',
        reason: 'BackupsNotListed',
        message: expect.stringContaining('Could not list the snapshots on PVC kv-backups: Job kv-list-backups'),
      },
    ]);
    const whole = report(found);
    for (const message of [
      whole.slice(0, -7),
      whole.replace('"version":1', '"version":2'),
      report(found, 'other-backups'),
      report([{ file: 'a.db', sizeBytes: '1', time: '2026-11-30T02:00:05Z' }]),
      report([{ file: 'a.db', sizeBytes: 1, time: 'yesterday' }]),
    ]) {
      const listing = backupListing('kv-backups', job('Complete'), [pod(message)]);
      expect(listing).toMatchObject({ records: [], listedFrom: 'kv-backups' });
      expect(listing.failure).toContain('without a readable report');
    }
  });
});
