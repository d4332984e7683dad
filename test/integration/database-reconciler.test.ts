import * as path from 'node:path';
import { databaseSpecsRefusedByRules, invalidDatabaseSpecs } from '../support/database-cases';
import {
  eventually,
  getJson,
  getJsonIfExists,
  jobCompletedAt,
  kubectl,
  kubectlOk,
  testWithNodes,
} from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';
import type { ReconcilerProcess } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const SEED = path.join(ROOT, 'test', 'fixtures', 'seeds', '001-my-db.yaml');

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let get: OperatorUnderTest['get'];
const pvcNames = () =>
  getJson(['get', 'pvc', '-n', ns])
    .items.map((p: any) => p.metadata.name)
    .sort();

beforeAll(async () => {
  ({ ns, reconciler, get } = await startOperatorUnderTest({
    operator: 'database',
    controllers: 'database',
    crds: ['databases.database.example.com'],
  }));
  // Backs up every minute from now on; checked by a later test, so the wait overlaps the others.
  kubectlOk(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'database.example.com/v1alpha1',
      kind: 'Database',
      metadata: { name: 'busy' },
      spec: {
        type: 'postgresql',
        version: '16',
        storage: { size: '2Gi' },
        backup: { enabled: true, schedule: '* * * * *' },
      },
    }),
  });
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe('the database controller against a real API server', () => {
  test.each([...invalidDatabaseSpecs, ...databaseSpecsRefusedByRules])(
    'the API server rejects %s, naming the field',
    (_w, spec, field) => {
      const r = kubectl(['create', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'database.example.com/v1alpha1',
          kind: 'Database',
          metadata: { name: 'bad' },
          spec,
        }),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(field);
    },
  );

  test('the engine and the storage class cannot change once set, naming the field; the version can', () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: 'engine' },
        spec: { type: 'postgresql', version: '16', storage: { size: '1Gi', storageClassName: 'standard' } },
      }),
    });
    const patch = (spec: object) =>
      kubectl(['patch', 'database', 'engine', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec })]);
    const engine = patch({ type: 'mysql', version: '8.4' });
    expect(engine.code).not.toBe(0);
    expect(engine.stderr).toMatch(/spec\.type: Forbidden: is immutable/);
    const storageClass = patch({ storage: { storageClassName: 'fast' } });
    expect(storageClass.code).not.toBe(0);
    expect(storageClass.stderr).toMatch(/spec\.storage\.storageClassName: Forbidden: is immutable/);
    expect(patch({ version: '17' }).code).toBe(0);
    expect(get('database', 'engine').spec).toMatchObject({ type: 'postgresql', version: '17' });
    // A restore seeds a new Database: it cannot be added later.
    const restore = patch({ restore: { fromDatabase: 'busy' } });
    expect(restore.code).not.toBe(0);
    expect(restore.stderr).toContain('spec.restore: Forbidden: restore cannot be added, changed or removed');
    kubectlOk(['delete', 'database', 'engine', '-n', ns]);
  });

  testWithNodes(
    'spec.restore: the data claim and a restore Job first, the StatefulSet only once the Job completed, then Restored',
    async () => {
      // kwok completes Job pods without running them: the order and the status are what is tested
      // here (the load itself runs on the real node, test/e2e/restore.test.ts).
      kubectlOk(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'database.example.com/v1alpha1',
          kind: 'Database',
          metadata: { name: 'seeded' },
          spec: { type: 'postgresql', version: '16', storage: { size: '1Gi' }, restore: { fromDatabase: 'busy' } },
        }),
      });
      // Made first (and pruned only once Restored): it reads the other Database's claim.
      const job = await eventually('the restore Job', () => get('job', 'seeded-restore'));
      expect(job.spec.template.spec.volumes).toContainEqual({
        name: 'backup',
        persistentVolumeClaim: { claimName: 'busy-backup', readOnly: true },
      });
      const restored = await eventually(
        'Restored=True',
        () =>
          get('database', 'seeded')?.status?.conditions?.find((c: any) => c.type === 'Restored' && c.status === 'True'),
        90_000,
      );
      expect(restored.message).toBe('restored from the newest dump in PVC busy-backup');
      const sts = await eventually('the StatefulSet', () => get('statefulset', 'seeded'), 60_000);
      // Once Restored, the finished restore Job is pruned: what it did stays in the status, and the
      // Job controller's Event says when it completed.
      await eventually('the restore Job pruned', () => (get('job', 'seeded-restore') ? undefined : true));
      expect(Date.parse(sts.metadata.creationTimestamp)).toBeGreaterThanOrEqual(jobCompletedAt(ns, 'seeded-restore'));
      expect(get('pvc', 'data-seeded-0').metadata.ownerReferences).toBeUndefined();
      expect(get('database', 'seeded').status.restoredFrom).toBe('busy-backup/');
      kubectlOk(['delete', 'database', 'seeded', '-n', ns]);
    },
  );

  let secret: any;
  test("seed 001's Database applies verbatim: StatefulSet, Services, backup claim and CronJob, and a generated Secret", async () => {
    kubectlOk(['apply', '-n', ns, '-f', SEED]);
    const db = get('database', 'my-db');
    for (const [kind, name] of [
      ['statefulset', 'my-db'],
      ['service', 'my-db'],
      ['service', 'my-db-headless'],
      ['cronjob', 'my-db-backup'],
      ['pvc', 'my-db-backup'],
    ] as [string, string][]) {
      const child = await eventually(`${kind}/${name}`, () => get(kind, name));
      if (kind !== 'pvc')
        expect(child.metadata.ownerReferences).toEqual([
          expect.objectContaining({ kind: 'Database', uid: db.metadata.uid, controller: true }),
        ]);
    }
    expect(get('pvc', 'my-db-backup').metadata.ownerReferences).toBeUndefined();
    expect(get('cronjob', 'my-db-backup').spec.schedule).toBe('0 2 * * *');
    secret = await eventually('the credentials Secret', () => get('secret', 'my-db-credentials'));
    expect(Object.keys(secret.data).sort()).toEqual(['database', 'password', 'username']);
    expect(Buffer.from(secret.data.password, 'base64').toString().length).toBeGreaterThanOrEqual(32);
    await eventually(
      'the data claim from the StatefulSet',
      () => (pvcNames().includes('data-my-db-0') ? true : undefined),
      60_000,
    );
    const status = await eventually('status', () =>
      get('database', 'my-db').status?.endpoint ? get('database', 'my-db').status : undefined,
    );
    expect(status).toMatchObject({
      endpoint: `my-db.${ns}.svc:5432`,
      credentialsSecret: 'my-db-credentials',
      backupCronJob: 'my-db-backup',
    });
    expect(['Creating', 'Ready']).toContain(status.phase);
  });

  test('spec updates propagate, drift is reverted, and the Secret never changes', async () => {
    kubectlOk(['patch', 'database', 'my-db', '-n', ns, '--type=merge', '-p', '{"spec":{"version":"16"}}']);
    await eventually('postgres:16', () =>
      get('statefulset', 'my-db')?.spec.template.spec.containers[0].image === 'postgres:16' ? true : undefined,
    );
    kubectlOk([
      'patch',
      'service',
      'my-db',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"selector":{"app.kubernetes.io/instance":"elsewhere"}}}',
    ]);
    await eventually('the selector to be restored', () =>
      get('service', 'my-db')?.spec.selector['app.kubernetes.io/instance'] === 'my-db' ? true : undefined,
    );
    const now = get('secret', 'my-db-credentials');
    expect({ uid: now.metadata.uid, rv: now.metadata.resourceVersion, data: now.data }).toEqual({
      uid: secret.metadata.uid,
      rv: secret.metadata.resourceVersion,
      data: secret.data,
    });
  });

  testWithNodes(
    'once its pod runs: phase Ready with its claims Bound, and a scheduled backup Job completes into lastBackupTime',
    async () => {
      const db = await eventually(
        'phase Ready',
        () => (get('database', 'busy')?.status?.phase === 'Ready' ? get('database', 'busy') : undefined),
        60_000,
      );
      expect(db.status.conditions.find((c: any) => c.type === 'Available')).toMatchObject({
        status: 'True',
        reason: 'ServerReady',
      });
      for (const claim of ['data-busy-0', 'busy-backup']) expect(get('pvc', claim).status.phase).toBe('Bound');
      const withBackup = await eventually(
        'lastBackupTime',
        () => (get('database', 'busy')?.status?.lastBackupTime ? get('database', 'busy') : undefined),
        150_000,
      );
      const jobs = getJson(['get', 'jobs', '-n', ns]).items.filter(
        (j: any) => j.metadata.ownerReferences?.[0]?.name === 'busy-backup',
      );
      expect(jobs.some((j: any) => j.status?.succeeded === 1)).toBe(true);
      expect(Date.parse(withBackup.status.lastBackupTime)).toBeGreaterThan(Date.now() - 5 * 60_000);
      kubectlOk(['delete', 'database', 'busy', '-n', ns]);
    },
  );

  test('disabling backups removes the CronJob and keeps the backup volume', async () => {
    kubectlOk(['patch', 'database', 'my-db', '-n', ns, '--type=merge', '-p', '{"spec":{"backup":{"enabled":false}}}']);
    await eventually('the CronJob to be deleted', () => (get('cronjob', 'my-db-backup') ? undefined : true));
    expect(get('pvc', 'my-db-backup')).toBeDefined();
    await eventually('status without backups', () =>
      get('database', 'my-db').status?.backupCronJob === undefined ? true : undefined,
    );
  });

  test('deleting a Database (Retain) removes the server but keeps its volumes and credentials', async () => {
    // Without a final snapshot it carries no finalizer: deleting it never waits for the operator.
    expect(get('database', 'my-db').metadata.finalizers).toBeUndefined();
    kubectlOk(['delete', 'database', 'my-db', '-n', ns]);
    await eventually(
      'the StatefulSet and Services to be collected',
      () => (get('statefulset', 'my-db') || get('service', 'my-db') ? undefined : true),
      90_000,
    );
    expect(pvcNames().filter((n: string) => n.includes('my-db'))).toEqual(['data-my-db-0', 'my-db-backup']);
    expect(get('secret', 'my-db-credentials').data).toEqual(secret.data);
  });

  test('with deletionPolicy Delete, the volumes and credentials go with the Database', async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: 'scratch' },
        spec: {
          type: 'mysql',
          version: '8.4',
          storage: { size: '1Gi' },
          backup: { enabled: true },
          deletionPolicy: 'Delete',
        },
      }),
    });
    await eventually(
      'its claims',
      () => (pvcNames().includes('data-scratch-0') && pvcNames().includes('scratch-backup') ? true : undefined),
      60_000,
    );
    await eventually('its Secret', () => get('secret', 'scratch-credentials'));
    kubectlOk(['delete', 'database', 'scratch', '-n', ns]);
    await eventually(
      'the claims to be collected',
      () => (pvcNames().some((n: string) => n.includes('scratch')) ? undefined : true),
      120_000,
    );
    await eventually(
      'the Secret to be collected',
      () => (get('secret', 'scratch-credentials') ? undefined : true),
      60_000,
    );
    expect(pvcNames().filter((n: string) => n.includes('my-db'))).toEqual(['data-my-db-0', 'my-db-backup']);
  });

  describe('a final snapshot before deletion (spec.backup.finalSnapshot)', () => {
    const FINALIZER = 'database.example.com/finalizer';
    const withFinalSnapshot = (name: string) =>
      JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name },
        spec: {
          type: 'postgresql',
          version: '16',
          storage: { size: '1Gi' },
          backup: { enabled: true, finalSnapshot: true },
        },
      });
    const reasons = (name: string) =>
      getJson(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`]).items.map(
        (e: any) => e.reason,
      );

    test('a Job of its name it did not create holds the deletion (Degraded, a Warning) and is left alone; switching finalSnapshot off lets the Database go', async () => {
      // The user's own Job under the name the final snapshot would take, suspended: never runs.
      kubectlOk(['create', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: 'held-final-backup' },
          spec: {
            suspend: true,
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
          },
        }),
      });
      // The Job controller writes its status once (Suspended); after that, only a writer of ours
      // could change its resourceVersion.
      const theirs = await eventually('their Job, marked Suspended by the Job controller', () => {
        const j = get('job', 'held-final-backup');
        return j?.status?.conditions?.some((c: any) => c.type === 'Suspended' && c.status === 'True') ? j : undefined;
      });
      kubectlOk(['apply', '-n', ns, '-f', '-'], { input: withFinalSnapshot('held') });
      await eventually('the finalizer, before its children', () =>
        get('database', 'held')?.metadata.finalizers?.includes(FINALIZER) ? true : undefined,
      );
      await eventually('its StatefulSet', () => get('statefulset', 'held'));
      kubectlOk(['delete', 'database', 'held', '-n', ns, '--wait=false']);
      const degraded = await eventually('Degraded FinalSnapshotBlocked', () =>
        get('database', 'held')?.status?.conditions?.find(
          (c: any) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'FinalSnapshotBlocked',
        ),
      );
      expect(degraded.message).toContain('held-final-backup');
      expect(degraded.message).toContain('spec.backup.finalSnapshot to false');
      expect(get('database', 'held').metadata.deletionTimestamp).toBeDefined();
      // Being deleted, it is not available, whatever its children still are.
      expect(get('database', 'held').status.conditions.find((c: any) => c.type === 'Available')).toMatchObject({
        status: 'False',
        reason: 'Deleting',
      });
      await eventually('a Warning Event', () => (reasons('held').includes('FinalSnapshotBlocked') ? true : undefined));
      // The user's Job is as it was: not adopted, not changed, not deleted.
      const after = get('job', 'held-final-backup');
      expect(after.metadata.uid).toBe(theirs.metadata.uid);
      expect(after.metadata.resourceVersion).toBe(theirs.metadata.resourceVersion);
      expect(after.metadata.ownerReferences).toBeUndefined();
      // The user gives up on the final snapshot: the Database goes, their Job stays.
      kubectlOk([
        'patch',
        'database',
        'held',
        '-n',
        ns,
        '--type=merge',
        '-p',
        '{"spec":{"backup":{"finalSnapshot":false}}}',
      ]);
      await eventually('the Database to go', () => (get('database', 'held') ? undefined : true));
      expect(get('job', 'held-final-backup').metadata.uid).toBe(theirs.metadata.uid);
      kubectlOk(['delete', 'job', 'held-final-backup', '-n', ns]);
    });

    testWithNodes(
      'deleting waits for the final dump Job to succeed; then the Database goes and the backup volume stays',
      async () => {
        kubectlOk(['apply', '-n', ns, '-f', '-'], { input: withFinalSnapshot('last') });
        const db = await eventually('the finalizer', () =>
          get('database', 'last')?.metadata.finalizers?.includes(FINALIZER) ? get('database', 'last') : undefined,
        );
        await eventually('its backup claim', () => get('pvc', 'last-backup'));
        kubectlOk(['delete', 'database', 'last', '-n', ns, '--wait=false']);
        const job = await eventually('the final dump Job', () => get('job', 'last-final-backup'), 60_000);
        expect(job.metadata.ownerReferences).toEqual([
          expect.objectContaining({ kind: 'Database', uid: db.metadata.uid, controller: true }),
        ]);
        expect(job.spec.template.spec.containers[0].command[2]).toContain('/backup/final-last-');
        expect(job.spec.template.spec.volumes).toContainEqual({
          name: 'backup',
          persistentVolumeClaim: { claimName: 'last-backup' },
        });
        await eventually('the Database to go', () => (get('database', 'last') ? undefined : true), 120_000);
        // It went only after the Job succeeded (the Job may since have been collected with it).
        expect(reasons('last')).toEqual(expect.arrayContaining(['FinalSnapshotStarted', 'FinalSnapshotTaken']));
        expect(get('pvc', 'last-backup')).toBeDefined();
      },
    );
    // Last: it deletes the namespace the reconciler watches.
    test('deleting the namespace is not held up: no Job can be made there, and its volumes go with it', async () => {
      kubectlOk(['apply', '-n', ns, '-f', '-'], { input: withFinalSnapshot('doomed') });
      await eventually('the finalizer', () =>
        get('database', 'doomed')?.metadata.finalizers?.includes(FINALIZER) ? true : undefined,
      );
      kubectlOk(['delete', 'namespace', ns, '--wait=false']);
      await eventually(
        'the namespace to go',
        () => (getJsonIfExists(['get', 'namespace', ns]) ? undefined : true),
        120_000,
      );
    });
  });
});
