/**
 * Restoring from backups (spec.restore) as the kinds render and report it: the etcd members'
 * claims seeded by etcdutl before the StatefulSet may start any member, a Database's data volume
 * loaded from a dump before its server first starts, the scripts run with a real shell, the
 * `Restored` condition and `Degraded=RestoreFailed`, and the backups listed in status.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Problem } from '../../../constructs/contract';
import { recordedBackups } from '../../../constructs/core/backup-records';
import { stillToRestore } from '../../../constructs/core/restore-status';
import { databaseController, desiredDatabaseStatus } from '../../../constructs/database/controller';
import { dumpSource, postgresRestoreScript } from '../../../constructs/database/database-restore';
import { desiredEtcdStatus, etcdClusterController } from '../../../constructs/etcd/controller';
import { snapshotRotationScript } from '../../../constructs/etcd/etcd-cluster-resources';
import { snapshotSource } from '../../../constructs/etcd/etcd-restore';
import { renderChildrenWithWaits } from '../../../operator/runtime/children/render';
import { validateBuiltin } from '../../support/builtin-validator';
import { databaseResource, etcdResource } from '../../support/data-resources';

const etcd = etcdResource;
const database = databaseResource;

const restoredTrue = { conditions: [condition('Restored', 'True', 'Restored', 'restored from x')] };

function condition(type: string, status: 'True' | 'False', reason: string, message: string) {
  return { type, status, reason, message, lastTransitionTime: '2026-11-29T00:00:00Z', observedGeneration: 1 };
}

/** A restore Job's pod failure policy: a pod disrupted (evicted, preempted, its node drained) does not count as a failure. */
const RETRIED_ON_DISRUPTION = {
  rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
};

const find = (objects: readonly any[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

describe('EtcdCluster spec.restore', () => {
  const restore = { backup: 'old-kv-20261129T020000Z.db' };

  test('a backup by name is read from the claim of the cluster that took it; a claim and path as given', () => {
    expect(snapshotSource({ backup: 'old-kv-20261129T020000Z.db' })).toEqual({
      claim: 'old-kv-backups',
      path: 'old-kv-20261129T020000Z.db',
    });
    expect(snapshotSource({ claim: 'snaps', path: 'etcd/x.db' })).toEqual({ claim: 'snaps', path: 'etcd/x.db' });
  });

  test("still to restore: each member's claim and a restore Job per member, and the StatefulSet waits for them all", () => {
    const { objects, waits } = renderChildrenWithWaits(etcdClusterController, etcd({ restore }));
    for (const i of [0, 1, 2]) {
      const claim = find(objects, 'PersistentVolumeClaim', `data-kv-${i}`);
      // Member data outlives the cluster: no owner, as the claim template's claims.
      expect(claim.metadata.ownerReferences).toBeUndefined();
      expect(claim.spec).toEqual(find(objects, 'StatefulSet', 'kv').spec.volumeClaimTemplates[0].spec);
      const job = find(objects, 'Job', `kv-restore-${i}`);
      expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'EtcdCluster', uid: 'u-kv' })]);
      const pod = job.spec.template.spec;
      // Not again on a failed restore (a corrupt snapshot stays corrupt), but again when its pod is
      // evicted or its node drained: a disruption is not the restore's failure.
      expect(job.spec.backoffLimit).toBe(0);
      expect(job.spec.podFailurePolicy).toEqual(RETRIED_ON_DISRUPTION);
      expect(pod.restartPolicy).toBe('Never');
      expect(pod.initContainers.map((c: any) => c.name)).toEqual(['check', 'restore']);
      const etcdutl = pod.initContainers[1];
      expect(etcdutl.image).toBe('quay.io/coreos/etcd:v3.5.21');
      expect(etcdutl.command).toEqual([
        'etcdutl',
        'snapshot',
        'restore',
        '/snapshot/old-kv-20261129T020000Z.db',
        '--data-dir=/var/lib/etcd/.restoring',
        `--name=kv-${i}`,
        '--initial-cluster=kv-0=https://kv-0.kv.db.svc:2380,kv-1=https://kv-1.kv.db.svc:2380,kv-2=https://kv-2.kv.db.svc:2380',
        '--initial-cluster-token=kv.db',
        `--initial-advertise-peer-urls=https://kv-${i}.kv.db.svc:2380`,
      ]);
      // The same name, token and peer URL the member's own pod starts with.
      const member = find(objects, 'StatefulSet', 'kv').spec.template.spec.containers[0];
      expect(member.args).toContain('--initial-cluster-token=kv.db');
      expect(member.args).toContain('--data-dir=/var/lib/etcd/data');
      expect(pod.containers[0].command).toEqual(['mv', '/var/lib/etcd/.restoring', '/var/lib/etcd/data']);
      expect(pod.volumes).toEqual([
        { name: 'data', persistentVolumeClaim: { claimName: `data-kv-${i}` } },
        { name: 'snapshot', persistentVolumeClaim: { claimName: 'old-kv-backups', readOnly: true } },
      ]);
      for (const c of [...pod.initContainers, ...pod.containers])
        expect(c.terminationMessagePolicy).toBe('FallbackToLogsOnError');
      expect(() => {
        validateBuiltin(job);
        validateBuiltin(claim);
      }).not.toThrow();
    }
    expect(waits.get('StatefulSet/kv')).toEqual(['Job/kv-restore-0', 'Job/kv-restore-1', 'Job/kv-restore-2']);
  });

  test('once Restored, or without spec.restore, no restore is rendered and nothing waits', () => {
    for (const cluster of [etcd({ restore }, restoredTrue), etcd({})]) {
      const { objects, waits } = renderChildrenWithWaits(etcdClusterController, cluster);
      expect(objects.filter((o) => o.kind === 'Job' || o.kind === 'PersistentVolumeClaim')).toEqual([]);
      expect(waits.size).toBe(0);
    }
    const restoring = { spec: { restore: { backup: 'kv-20261129T020000Z.db' } } };
    expect(stillToRestore(restoring)).toBe(true);
    expect(stillToRestore({ ...restoring, status: restoredTrue })).toBe(false);
    // Without spec.restore, the status is not even read (a render reading it renders at each status write).
    const unread = {
      spec: {},
      get status(): never {
        throw new Error('status read');
      },
    };
    expect(stillToRestore(unread)).toBe(false);
  });

  test("the check step (a real shell): a missing snapshot and a volume with data are refused, a failed attempt's leftovers cleared", () => {
    const { objects } = renderChildrenWithWaits(etcdClusterController, etcd({ restore }));
    const script: string = find(objects, 'Job', 'kv-restore-0').spec.template.spec.initContainers[0].command[2];
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-restore-'));
    // The pod's paths, under a scratch root.
    const run = () =>
      spawnSync(
        'sh',
        ['-c', script.replaceAll('/snapshot/', `${root}/snapshot/`).replaceAll('/var/lib/etcd', `${root}/etcd`)],
        {
          encoding: 'utf8',
        },
      );
    fs.mkdirSync(path.join(root, 'snapshot'));
    fs.mkdirSync(path.join(root, 'etcd', '.restoring'), { recursive: true });
    let out = run();
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('snapshot old-kv-20261129T020000Z.db not found in PVC old-kv-backups');
    fs.writeFileSync(path.join(root, 'snapshot', 'old-kv-20261129T020000Z.db'), 'snapshot');
    out = run();
    expect(out.status).toBe(0);
    expect(fs.existsSync(path.join(root, 'etcd', '.restoring'))).toBe(false);
    fs.mkdirSync(path.join(root, 'etcd', 'data'));
    out = run();
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('PVC data-kv-0 of member kv-0 already holds etcd data: not restoring over it');
    fs.rmSync(root, { recursive: true });
  });

  const jobs = (state: 'running' | 'complete' | 'failed') =>
    [0, 1, 2].map((i) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `kv-restore-${i}` },
      status:
        state === 'complete' || (state === 'failed' && i > 0)
          ? { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 }
          : state === 'failed'
            ? { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }], failed: 1 }
            : { active: 1 },
    }));
  const progress = (state: 'running' | 'complete' | 'failed', failure?: Problem) => ({
    source: 'snapshot old-kv-20261129T020000Z.db from PVC old-kv-backups',
    sourceClaim: 'old-kv-backups',
    jobs: jobs(state),
    pods: [],
    failure,
  });
  const conditionOf = (status: any, type: string) => status.conditions.find((c: any) => c.type === type);

  test('status: Restoring while the Jobs run; Restored once all complete, and it stays; RestoreFailed naming the snapshot and the error', () => {
    const running = desiredEtcdStatus(etcd({ restore }), { members: [], restore: progress('running') });
    expect(running.phase).toBe('Restoring');
    expect(running.restoredFrom).toBe('old-kv-backups/old-kv-20261129T020000Z.db');
    expect(conditionOf(running, 'Restored')).toMatchObject({ status: 'False', reason: 'Restoring' });
    expect(conditionOf(running, 'Restored').message).toContain('0/3 restore Jobs complete');

    const failure = {
      reason: 'PodFailing',
      message:
        'Job kv-restore-0: pod kv-restore-0-x: container restore exited with code 1 (Error): Error: expected sha256 [1 2], got [3 4]',
      // The children's failure names its child (see assessChildren): a restore Job's is the restore's.
      object: { kind: 'Job', name: 'kv-restore-0' },
    };
    const failed = desiredEtcdStatus(etcd({ restore }), { members: [], restore: progress('failed', failure) });
    expect(failed.phase).toBe('Failed');
    expect(conditionOf(failed, 'Degraded')).toMatchObject({ status: 'True', reason: 'RestoreFailed' });
    expect(conditionOf(failed, 'Degraded').message).toBe(
      `restoring snapshot old-kv-20261129T020000Z.db from PVC old-kv-backups failed: ${failure.message}`,
    );
    expect(conditionOf(failed, 'Restored')).toMatchObject({ status: 'False', reason: 'RestoreFailed' });

    const done = desiredEtcdStatus(etcd({ restore }), { members: [], restore: progress('complete') });
    expect(conditionOf(done, 'Restored')).toMatchObject({ status: 'True', reason: 'Restored' });
    expect(done.phase).not.toBe('Restoring');
    // Later the Jobs are not rendered (nor read); Restored stays as it was.
    const later = desiredEtcdStatus(etcd({ restore }, done), {
      members: [],
      restore: { ...progress('running'), jobs: [undefined, undefined, undefined] },
    });
    expect(conditionOf(later, 'Restored')).toMatchObject({ status: 'True', reason: 'Restored' });
  });

  test('status: a restore whose snapshot claim does not exist is RestoreFailed saying so', () => {
    const waiting = {
      metadata: { name: 'kv-restore-0-abc' },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/1 nodes are available: persistentvolumeclaim "old-kv-backups" not found.',
          },
        ],
      },
    };
    const status = desiredEtcdStatus(etcd({ restore }), {
      members: [],
      restore: { ...progress('running'), pods: [waiting] },
    });
    expect(conditionOf(status, 'Degraded')).toMatchObject({ status: 'True', reason: 'RestoreFailed' });
    expect(conditionOf(status, 'Degraded').message).toContain('PVC old-kv-backups does not exist in this namespace');
  });
});

describe('Database spec.restore', () => {
  test('a dump with its claim (as status.backups lists both) is read from that claim: nothing is read off its name', () => {
    // A Database named final-x: from its name alone, its dump would seem a final one of x's.
    expect(dumpSource({ backup: 'final-x-20261129T020000Z.sql', claim: 'final-x-backup' })).toEqual({
      claim: 'final-x-backup',
      dump: 'final-x-20261129T020000Z.sql',
    });
  });

  test('a dump by name is read from the backup claim of the Database that wrote it, final ones too; fromDatabase takes its newest', () => {
    expect(dumpSource({ backup: 'old-db-20261129T020000Z.sql' })).toEqual({
      claim: 'old-db-backup',
      dump: 'old-db-20261129T020000Z.sql',
    });
    expect(dumpSource({ backup: 'final-old-db-20261129T020000Z.sql' })).toEqual({
      claim: 'old-db-backup',
      dump: 'final-old-db-20261129T020000Z.sql',
    });
    expect(dumpSource({ fromDatabase: 'old-db' })).toEqual({ claim: 'old-db-backup' });
  });

  test('still to restore: the data claim and a restore Job in the server image, and the StatefulSet waits for it', () => {
    const db = database({ restore: { fromDatabase: 'old-db' } });
    const { objects, waits } = renderChildrenWithWaits(databaseController, db);
    const sts = find(objects, 'StatefulSet', 'orders');
    const claim = find(objects, 'PersistentVolumeClaim', 'data-orders-0');
    expect(claim.spec).toEqual(sts.spec.volumeClaimTemplates[0].spec);
    expect(claim.metadata.labels).toEqual(sts.spec.volumeClaimTemplates[0].metadata.labels);
    expect(claim.metadata.ownerReferences).toBeUndefined();
    const job = find(objects, 'Job', 'orders-restore');
    const container = job.spec.template.spec.containers[0];
    expect(container.image).toBe(sts.spec.template.spec.containers[0].image);
    // The server's environment but what only a running instance reads (its name, the replication password).
    const serverEnv = sts.spec.template.spec.containers[0].env.filter(
      (e: { name: string }) => e.name !== 'POD_NAME' && e.name !== 'REPLICATION_PASSWORD',
    );
    expect(container.env).toEqual(serverEnv);
    expect(job.spec.template.spec.volumes).toContainEqual({
      name: 'backup',
      persistentVolumeClaim: { claimName: 'old-db-backup', readOnly: true },
    });
    expect(job.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 999 });
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.podFailurePolicy).toEqual(RETRIED_ON_DISRUPTION);
    expect(() => {
      validateBuiltin(job);
    }).not.toThrow();
    expect(waits.get('StatefulSet/orders')).toEqual(['Job/orders-restore']);
    // Under Delete the claim goes with the Database, as the StatefulSet's own would.
    const deleting = renderChildrenWithWaits(
      databaseController,
      database({ restore: { fromDatabase: 'old-db' }, deletionPolicy: 'Delete' }),
    ).objects;
    expect(find(deleting, 'PersistentVolumeClaim', 'data-orders-0').metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Database', uid: 'u-orders' }),
    ]);
    const restored = renderChildrenWithWaits(
      databaseController,
      database({ restore: { fromDatabase: 'old-db' } }, restoredTrue),
    );
    expect(restored.objects.some((o) => o.kind === 'Job')).toBe(false);
    expect(restored.waits.size).toBe(0);
  });

  /** Runs the restore script's first lines (picking the dump, the refusals) against a scratch root, stopping before initdb. */
  function pickAndCheck(source: Parameters<typeof postgresRestoreScript>[0], files: string[], pgVersion = false) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'db-restore-'));
    fs.mkdirSync(path.join(root, 'backup'));
    for (const f of files) fs.writeFileSync(path.join(root, 'backup', f), f);
    fs.mkdirSync(path.join(root, 'data', 'pgdata'), { recursive: true });
    if (pgVersion) fs.writeFileSync(path.join(root, 'data', 'pgdata', 'PG_VERSION'), '15\n');
    const lines = postgresRestoreScript(source, 'data-orders-0', `${root}/data`).split('\n');
    const upToRefusals = lines
      .slice(
        0,
        lines.findIndex((l) => l.startsWith('rm -rf')),
      )
      .join('\n');
    const out = spawnSync(
      'sh',
      ['-c', `${upToRefusals.replaceAll('/backup/', `${root}/backup/`)}\necho "picked $dump"`],
      {
        encoding: 'utf8',
        env: { ...process.env, PGDATA: path.join(root, 'data', 'pgdata') },
      },
    );
    fs.rmSync(root, { recursive: true });
    return out;
  }

  test('the restore script (a real shell) picks the newest dump by its time, final ones included, and refuses what it must', () => {
    const dumps = [
      'old-db-20261101T020000Z.sql',
      'final-old-db-20261128T230000Z.sql',
      'old-db-20261128T020000Z.sql',
      'old-db-20261129T020000Z.sql.partial',
    ];
    expect(pickAndCheck({ claim: 'old-db-backup' }, dumps).stdout).toBe('picked final-old-db-20261128T230000Z.sql\n');
    const named = pickAndCheck({ claim: 'old-db-backup', dump: 'old-db-20261101T020000Z.sql' }, dumps);
    expect(named.stdout).toBe('picked old-db-20261101T020000Z.sql\n');
    const missing = pickAndCheck({ claim: 'old-db-backup', dump: 'old-db-20260101T000000Z.sql' }, dumps);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('dump old-db-20260101T000000Z.sql not found in PVC old-db-backup');
    const none = pickAndCheck({ claim: 'old-db-backup' }, []);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('no dump in PVC old-db-backup');
    const over = pickAndCheck({ claim: 'old-db-backup' }, dumps, true);
    expect(over.status).toBe(1);
    expect(over.stderr).toContain('PVC data-orders-0 already holds a database: not restoring over it');
  });

  test('status: Restoring, then Ready once the server is; a failed load is Degraded naming the dump and the error', () => {
    const restore = { fromDatabase: 'old-db' };
    const job = (status: object) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'orders-restore' },
      status,
    });
    const input = (j: object, failure?: Problem) => ({
      hasCredentials: true,
      restore: {
        source: 'the newest dump in PVC old-db-backup',
        sourceClaim: 'old-db-backup',
        jobs: [job(j)],
        pods: [],
        failure,
      },
    });
    const restoring = desiredDatabaseStatus(database({ restore }), input({ active: 1 }));
    expect(restoring.phase).toBe('Restoring');
    expect(restoring.restoredFrom).toBe('old-db-backup/');
    const failure = {
      reason: 'PodFailing',
      message:
        'Job orders-restore: pod orders-restore-x: container restore exited with code 3 (Error): loading old-db-20261129T020000Z.sql\npsql:/backup/old-db-20261129T020000Z.sql:1: ERROR:  syntax error at or near "THIS"',
      object: { kind: 'Job', name: 'orders-restore' },
    };
    const failed = desiredDatabaseStatus(
      database({ restore }),
      input({ conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] }, failure),
    );
    const degraded = failed.conditions?.find((c) => c.type === 'Degraded');
    expect(failed.phase).toBe('Failed');
    expect(degraded).toMatchObject({ status: 'True', reason: 'RestoreFailed' });
    expect(degraded?.message).toContain('old-db-20261129T020000Z.sql');
    expect(degraded?.message).toContain('syntax error');
    const done = desiredDatabaseStatus(database({ restore }), {
      ...input({ conditions: [{ type: 'Complete', status: 'True' }] }),
      statefulSet: { metadata: { name: 'orders' }, status: { readyReplicas: 1 } },
    });
    expect(done.phase).toBe('Ready');
    expect(done.conditions?.find((c) => c.type === 'Restored')).toMatchObject({ status: 'True' });
  });

  test('status.restoredFrom names the dump the restore Job loaded (its report), and keeps it once the Job is gone', () => {
    const restore = { fromDatabase: 'old-db' };
    const loaded = {
      metadata: { name: 'orders-restore-x' },
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'restore',
            state: {
              terminated: {
                exitCode: 0,
                message: JSON.stringify({
                  version: 1,
                  restored: 'old-db-20261129T020000Z.sql',
                  claim: 'old-db-backup',
                }),
              },
            },
          },
        ],
      },
    };
    const complete = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'orders-restore' },
      status: { conditions: [{ type: 'Complete', status: 'True' }] },
    };
    const progress = (pods: object[]) => ({
      hasCredentials: true,
      restore: { source: 'the newest dump in PVC old-db-backup', sourceClaim: 'old-db-backup', jobs: [complete], pods },
    });
    const done = desiredDatabaseStatus(database({ restore }), progress([loaded]) as any);
    expect(done.restoredFrom).toBe('old-db-backup/old-db-20261129T020000Z.sql');
    // The Job and its pod gone (history), the status still says which dump it was.
    const later = desiredDatabaseStatus(
      database({ restore }, { restoredFrom: done.restoredFrom, conditions: done.conditions }),
      progress([]) as any,
    );
    expect(later.restoredFrom).toBe('old-db-backup/old-db-20261129T020000Z.sql');
    // A truncated report names nothing.
    const truncated = JSON.parse(JSON.stringify(loaded));
    truncated.status.containerStatuses[0].state.terminated.message = '{"version":1,"restored":"old-db-2026';
    expect(desiredDatabaseStatus(database({ restore }), progress([truncated]) as any).restoredFrom).toBe(
      'old-db-backup/',
    );
  });

  test('the restore script ends by reporting the dump it loaded and its claim, as JSON', () => {
    const script = postgresRestoreScript({ claim: 'old-db-backup' }, 'data-orders-0', '/var/lib/postgresql/data');
    const last = script.split('\n').at(-1) ?? '';
    const message = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'db-report-')), 'message');
    execFileSync('sh', ['-c', `dump=old-db-20261129T020000Z.sql; ${last.replace('/dev/termination-log', message)}`]);
    expect(JSON.parse(fs.readFileSync(message, 'utf8'))).toEqual({
      version: 1,
      restored: 'old-db-20261129T020000Z.sql',
      claim: 'old-db-backup',
    });
  });
});

describe('backups listed in status', () => {
  const pod = (phase: string, message: string, finishedAt = '2026-11-29T02:00:05Z') => ({
    metadata: { name: 'p' },
    status: {
      phase,
      containerStatuses: [{ name: 'dump', state: { terminated: { exitCode: 0, message, finishedAt } } }],
    },
  });

  const report = (file: string, sizeBytes: number, claim = 'kv-backups') =>
    JSON.stringify({ version: 1, file, sizeBytes, claim });

  test('from the termination messages of finished backup pods, kept across pods gone, newest first, at most the retention', () => {
    const before = [
      { name: 'kv-20261128T020000Z.db', time: '2026-11-28T02:00:05Z', sizeBytes: 10, claim: 'kv-backups' },
    ];
    const listed = recordedBackups(before, [
      pod('Succeeded', report('kv-20261129T020000Z.db', 20480)),
      pod('Failed', report('kv-20261129T030000Z.db', 1)),
      pod('Succeeded', 'something else'),
    ]);
    expect(listed).toEqual([
      { name: 'kv-20261129T020000Z.db', time: '2026-11-29T02:00:05Z', sizeBytes: 20480, claim: 'kv-backups' },
      before[0],
    ]);
    expect(recordedBackups(listed, [], 1)).toEqual([listed[0]]);
  });

  test('a report is versioned JSON: a truncated one, another version or wrong types make no record; the line of the version before still does', () => {
    const whole = report('kv-20261129T020000Z.db', 20480);
    for (const message of [
      whole.slice(0, -5),
      JSON.stringify({ version: 2, file: 'kv-20261129T020000Z.db', sizeBytes: 1, claim: 'kv-backups' }),
      JSON.stringify({ version: 1, file: 'kv-20261129T020000Z.db', sizeBytes: '1', claim: 'kv-backups' }),
      JSON.stringify({ version: 1, file: '', sizeBytes: 1, claim: 'kv-backups' }),
    ])
      expect(recordedBackups([], [pod('Succeeded', message)])).toEqual([]);
    // A backup that finished before an upgrade wrote `backup <file> <bytes>`: listed, its claim not known.
    expect(recordedBackups([], [pod('Succeeded', 'backup kv-20261129T020000Z.db 20480')])).toEqual([
      { name: 'kv-20261129T020000Z.db', time: '2026-11-29T02:00:05Z', sizeBytes: 20480 },
    ]);
  });

  test('the backup steps write that message: the etcd rotation (a real shell) reports the snapshot it named and its size', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-report-'));
    fs.writeFileSync(path.join(dir, '.in-progress.db'), 'x'.repeat(1234));
    const script = snapshotRotationScript('kv', 3, dir).replace('/dev/termination-log', path.join(dir, 'message'));
    execFileSync('sh', ['-c', script]);
    const written = JSON.parse(fs.readFileSync(path.join(dir, 'message'), 'utf8'));
    expect(written).toEqual({
      version: 1,
      file: expect.stringMatching(/^kv-\d{8}T\d{6}Z\.db$/),
      sizeBytes: 1234,
      claim: 'kv-backups',
    });
    expect(fs.existsSync(path.join(dir, written.file))).toBe(true);
    fs.rmSync(dir, { recursive: true });
    const db = renderChildrenWithWaits(
      databaseController,
      database({ backup: { enabled: true, schedule: '@daily', finalSnapshot: false } }),
    ).objects;
    const dump = find(db, 'CronJob', 'orders-backup').spec.jobTemplate.spec.template.spec.containers[0];
    expect(dump.command[2]).toContain('> /dev/termination-log');
    expect(dump.command[2]).toContain(
      '"claim":"%s"}\' "$(basename "$f")" "$(wc -c < "$f" | tr -d \' \')" \'orders-backup\'',
    );
  });
});
