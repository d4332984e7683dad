import * as fs from 'node:fs';
import * as path from 'node:path';
import { structuralProblems } from '../../../constructs/core/structural';
import { ChildMap, childKey, finalizerName } from '../../../constructs/contract';
import {
  databaseController,
  databaseEvents,
  desiredDatabaseStatus,
  finalSnapshot,
  newCredentials,
} from '../../../constructs/database/controller';
import { renderChildren } from '../../../operator/runtime/children/render';
import { dumpRotationLine } from '../../../constructs/database/database-resources';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { newTlsSecret } from '../../../constructs/database/server-certificate';
import * as os from 'node:os';

const desiredDatabaseChildren = (db: any) => renderChildren(databaseController, db);
import { validateBuiltin } from '../../support/builtin-validator';
import { CrdValidator } from '../../support/crd-validator';
import { invalidDatabaseSpecs } from '../../support/database-cases';
import { one, parseYaml, podSpecsOf, synthProject } from '../../support/synth';

const result = synthProject();
const files = Object.fromEntries(
  Object.entries(result.files).filter(([f]) => /^\d{4}-database|samples\/database/.test(f)),
);
const objects = Object.keys(files)
  .filter((f) => !f.includes('/'))
  .sort()
  .flatMap((f) => parseYaml(files[f]));
const crd = one(objects, 'CustomResourceDefinition', 'databases.database.example.com');
const validator = new CrdValidator(crd);
const SEED = path.join(__dirname, '..', '..', 'fixtures', 'seeds', '001-my-db.yaml');

const db = (spec: object = {}) =>
  ({
    apiVersion: 'database.example.com/v1alpha1',
    kind: 'Database',
    metadata: { name: 'my-db', namespace: 'data', uid: 'u-5', generation: 2 },
    spec: {
      type: 'postgresql',
      version: '13',
      storage: { size: '10Gi' },
      backup: { enabled: true, schedule: '0 2 * * *' },
      // As the API server stores it, with the schema's defaults.
      tls: { enabled: true, required: false },
      deletionPolicy: 'Retain',
      ...spec,
    },
  }) as any;

describe('synthesized Database operator', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test('the CRD: database.example.com/v1alpha1 Database, structural, with defaults', () => {
    const v = crd.spec.versions[0];
    expect(crd.spec.names).toMatchObject({ kind: 'Database', plural: 'databases' });
    expect(v.name).toBe('v1alpha1');
    expect(structuralProblems(v.schema.openAPIV3Schema)).toEqual([]);
    const spec = v.schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.type.enum).toEqual(['postgresql', 'mysql']);
    expect(spec.properties.deletionPolicy).toMatchObject({ default: 'Retain' });
    // What the operator cannot change in place is refused on update by the API server.
    for (const field of [spec.properties.type, spec.properties.storage.properties.storageClassName]) {
      expect(field['x-kubernetes-validations']).toEqual([expect.objectContaining({ rule: 'self == oldSelf' })]);
    }
  });

  test('RBAC: Secrets created, and read or replaced only as its own (the runtime hands over none other: the replication Secret); pods patched (role labels); deletes only CronJobs, its finished restore Job, a pod a rollout is stuck behind and a StatefulSet made again with larger claims; claims never deleted', () => {
    const role = one(objects, 'ClusterRole', 'database-manager-role');
    const grants = role.rules.flatMap((r: any) =>
      r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`),
    );
    expect(grants).toEqual(
      expect.arrayContaining([
        '/secrets: get,create,update',
        '/persistentvolumeclaims: get,list,watch,create,update,patch',
        'batch/cronjobs: get,list,watch,create,update,patch,delete',
      ]),
    );
    expect(grants.filter((g: string) => g.includes('delete'))).toEqual([
      '/pods: get,list,watch,patch,delete',
      'apps/statefulsets: get,list,watch,create,update,patch,delete',
      'batch/cronjobs: get,list,watch,create,update,patch,delete',
      // Pruned: only a Job the Database controls and no longer renders (its restore, once Restored).
      'batch/jobs: get,list,watch,create,update,patch,delete',
    ]);
    // Never a list or watch of Secrets: each is read by the name the operator gave it.
    expect(grants.filter((g: string) => g.includes('secrets'))).toEqual(['/secrets: get,create,update']);
    for (const o of objects)
      expect(() => {
        validateBuiltin(o);
      }).not.toThrow();
  });

  test("the synthesized sample and seed 001's sample validate verbatim", () => {
    expect(validator.validate(parseYaml(files['samples/database-sample.k8s.yaml'])[0])).toEqual([]);
    expect(validator.validate(parseYaml(fs.readFileSync(SEED, 'utf8'))[0])).toEqual([]);
  });

  test.each(invalidDatabaseSpecs)('rejects %s, naming the field', (_w, spec, field) => {
    expect(
      validator
        .validate({ apiVersion: 'database.example.com/v1alpha1', kind: 'Database', metadata: { name: 'x' }, spec })
        .join('\n'),
    ).toContain(field);
  });
});

describe('the children of a Database', () => {
  test('postgresql with backups: Services, StatefulSet on a 10Gi claim, backup claim and CronJob; Retain keeps data', () => {
    const children = desiredDatabaseChildren(db()) as any[];
    expect(children.map((c) => `${c.kind}/${c.metadata.name}`)).toEqual([
      'ConfigMap/my-db-retention',
      'Service/my-db-headless',
      'Service/my-db',
      // The primary's (as my-db), and the standbys'.
      'Service/my-db-rw',
      'Service/my-db-ro',
      // The application role's script, run on the server's first start.
      'ConfigMap/my-db-config',
      // In cdk8s's dependency order: the CronJob waits for the StatefulSet, listed after the claim.
      'PersistentVolumeClaim/my-db-backup',
      // Once: the dumps the claim holds (kept from a Database of this name before) into the status.
      'Job/my-db-list-backups',
      'StatefulSet/my-db',
      'CronJob/my-db-backup',
    ]);
    for (const c of children)
      expect(() => {
        validateBuiltin(c);
      }).not.toThrow();
    const [retention, , svc, rw, ro, , backupClaim, , sts, cron] = children;
    // The primary's pod alone behind my-db and my-db-rw; the standbys, as labelled, behind my-db-ro.
    const instance = { 'app.kubernetes.io/instance': 'my-db', 'app.kubernetes.io/component': 'database' };
    for (const primary of [svc, rw])
      expect(primary.spec.selector).toMatchObject({ ...instance, 'statefulset.kubernetes.io/pod-name': 'my-db-0' });
    expect(ro.spec.selector).toMatchObject({ ...instance, 'database.example.com/role': 'standby' });
    // One instance by default: no disruption budget (it could only block a drain).
    expect(sts.spec.replicas).toBe(1);
    // Under Retain the retention ConfigMap (owner of the credentials) is not owned: it stays.
    expect(retention.metadata.ownerReferences).toBeUndefined();
    expect(retention.data.deletionPolicy).toBe('Retain');
    expect(svc.spec.ports[0]).toMatchObject({ port: 5432 });
    expect(sts.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('10Gi');
    const c = sts.spec.template.spec.containers[0];
    expect(c.image).toBe('postgres:13');
    expect(c.env.find((e: any) => e.name === 'POSTGRES_PASSWORD').valueFrom.secretKeyRef).toEqual({
      name: 'my-db-credentials',
      key: 'password',
    });
    // The backup claim is user data: not owned under Retain, so deleting the Database keeps it.
    expect(backupClaim.metadata.ownerReferences).toBeUndefined();
    expect(cron.spec.schedule).toBe('0 2 * * *');
    expect(cron.spec.jobTemplate.spec.template.spec.containers[0].command[2]).toContain('pg_dump -h my-db.data.svc');
    for (const { spec } of podSpecsOf(children)) {
      expect(spec.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 999,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(spec.containers[0].securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
    }
    // No secret material anywhere in the children.
    expect(JSON.stringify(children)).not.toMatch(/"password"\s*:\s*"/);
  });

  test('Delete policy: claims go with the Database; no backups: no backup objects; mysql works the same way', () => {
    const children = desiredDatabaseChildren(
      db({
        type: 'mysql',
        version: '8.4',
        deletionPolicy: 'Delete',
        backup: { enabled: false, schedule: '0 2 * * *' },
      }),
    ) as any[];
    // mysql has no standbys: no <name>-ro.
    expect(children.map((c) => c.kind)).toEqual(['ConfigMap', 'Service', 'Service', 'Service', 'StatefulSet']);
    expect(children[0].metadata.ownerReferences[0]).toMatchObject({ kind: 'Database', uid: 'u-5', controller: true });
    const sts = children[4];
    expect(sts.spec.persistentVolumeClaimRetentionPolicy.whenDeleted).toBe('Delete');
    expect(sts.spec.template.spec.containers[0]).toMatchObject({
      image: 'mysql:8.4',
      ports: [{ containerPort: 3306 }],
    });
    const withBackup = desiredDatabaseChildren(db({ deletionPolicy: 'Delete' })) as any[];
    expect(withBackup.find((c) => c.kind === 'PersistentVolumeClaim').metadata.ownerReferences[0]).toMatchObject({
      kind: 'Database',
      uid: 'u-5',
    });
  });

  test('credentials are random, generated per Database, and owned by the retention ConfigMap', () => {
    const retention = { metadata: { name: 'my-db-retention', uid: 'cm-1' } };
    const a = newCredentials(db(), retention) as any;
    const b = newCredentials(db(), retention) as any;
    expect(a.stringData.password).not.toBe(b.stringData.password);
    expect(a.stringData.password.length).toBeGreaterThanOrEqual(32);
    expect(a.stringData).toMatchObject({ username: 'app', database: 'my_db' });
    expect(a.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'my-db-retention', uid: 'cm-1' },
    ]);
  });

  // A StatefulSet deletes a failed server pod and makes it again at once (see the etcd test).
  test('a server failure stays Degraded while the server is not ready, though the failed pod is gone; ready clears it', () => {
    const failing = { reason: 'PodFailing', message: 'pod my-db-0: container postgresql exited with code 1' };
    const notReady = { metadata: { name: 'my-db' }, status: { readyReplicas: 0 } };
    const degraded = (s: any) => s.conditions.find((c: any) => c.type === 'Degraded');
    const seen = desiredDatabaseStatus(db(), { statefulSet: notReady, hasCredentials: true, childFailure: failing });
    expect(degraded(seen)).toMatchObject({ status: 'True', ...failing });
    const later = desiredDatabaseStatus({ ...db(), status: seen }, { statefulSet: notReady, hasCredentials: true });
    expect(degraded(later)).toEqual(degraded(seen));
    const ready = { metadata: { name: 'my-db' }, status: { readyReplicas: 1 } };
    expect(
      degraded(desiredDatabaseStatus({ ...db(), status: later }, { statefulSet: ready, hasCredentials: true })),
    ).toMatchObject({ status: 'False', reason: 'AsExpected' });
  });

  test('status: endpoint, credentials, backups, phase', () => {
    const s = desiredDatabaseStatus(db(), { hasCredentials: true });
    expect(s).toMatchObject({
      phase: 'Creating',
      endpoint: 'my-db.data.svc:5432',
      credentialsSecret: 'my-db-credentials',
      backupCronJob: 'my-db-backup',
      observedGeneration: 2,
    });
    expect(
      desiredDatabaseStatus(db(), {
        statefulSet: { metadata: { name: 'my-db' }, status: { readyReplicas: 1 } },
        hasCredentials: true,
      }).phase,
    ).toBe('Ready');
    expect(
      desiredDatabaseStatus(db(), { applyError: 'rejected', hasCredentials: false }).credentialsSecret,
    ).toBeUndefined();
    const off = desiredDatabaseStatus(db({ backup: { enabled: false, schedule: '0 2 * * *' } }), {
      hasCredentials: true,
    });
    expect(off.backupCronJob).toBeUndefined();
    expect(off.conditions?.find((c) => c.type === 'BackupScheduled')).toMatchObject({
      status: 'False',
      reason: 'Disabled',
    });
  });
});

describe('a Database for production', () => {
  const server = (spec: object = {}) =>
    (desiredDatabaseChildren(db(spec)) as any[]).find((c) => c.kind === 'StatefulSet').spec.template.spec;

  test("PostgreSQL's application role: made on the first start by a script from the <name>-config ConfigMap, from the Secret's keys, and no superuser login for it", () => {
    const children = desiredDatabaseChildren(db()) as any[];
    const init = children.find((c) => c.kind === 'ConfigMap' && c.metadata.name === 'my-db-config');
    const script: string = init.data['10-application-role.sh'];
    expect(script).toContain('CREATE ROLE :"user" LOGIN PASSWORD :\'password\';');
    expect(script).toContain('ALTER DATABASE :"db" OWNER TO :"user";');
    expect(script).toContain('ALTER ROLE postgres PASSWORD NULL;');
    // No right beyond a login: none of the role options that grant one.
    expect(script).not.toMatch(/SUPERUSER|REPLICATION|CREATEDB|CREATEROLE|BYPASSRLS/);
    // The values are read by psql from the environment, never written into a command line.
    expect(script).toContain('\\set password `printenv DATABASE_PASSWORD`');
    const spec = server();
    const container = spec.containers[0];
    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.valueFrom?.secretKeyRef?.key ?? e.value]));
    expect(env).toMatchObject({ DATABASE_USER: 'username', DATABASE_PASSWORD: 'password', DATABASE_NAME: 'database' });
    // The image's superuser is postgres, not the application's login; its database is made by the script.
    expect(env.POSTGRES_USER).toBeUndefined();
    expect(env.POSTGRES_DB).toBeUndefined();
    expect(container.volumeMounts).toContainEqual({
      name: 'init',
      mountPath: '/docker-entrypoint-initdb.d',
      readOnly: true,
    });
    expect(spec.volumes).toContainEqual({
      name: 'init',
      configMap: {
        name: 'my-db-config',
        items: ['10-application-role.sh', '20-replication-role.sh'].map((key) => ({ key, path: key })),
      },
    });
    // mysql's image makes its MYSQL_USER an ordinary user already: no script.
    const mysql = desiredDatabaseChildren(db({ type: 'mysql', version: '8.4' })) as any[];
    expect(mysql.some((c) => c.metadata.name === 'my-db-config')).toBe(false);
  });

  test('readiness is probed from the start and every 2 s, so the Service has the server about a second after it accepts connections', () => {
    const probe = server().containers[0].readinessProbe;
    expect(probe.initialDelaySeconds ?? 0).toBe(0);
    expect(probe.periodSeconds).toBeLessThanOrEqual(2);
    expect(probe.exec.command.join(' ')).toContain('pg_isready');
  });

  test("spec.resources: the server's as given; omitted, the documented defaults (its refusals: test/support/database-cases)", () => {
    expect(server().containers[0].resources).toEqual({
      requests: { cpu: '100m', memory: '256Mi' },
      limits: { memory: '1Gi' },
    });
    expect(
      server({ resources: { requests: { cpu: '2', memory: '4Gi' }, limits: { memory: '8Gi' } } }).containers[0]
        .resources,
    ).toEqual({ requests: { cpu: '2', memory: '4Gi' }, limits: { memory: '8Gi' } });
  });

  test("backup.retention: after each scheduled dump, the oldest beyond it are deleted; final dumps, other files and other Databases' dumps stay", () => {
    const command = (spec: object) =>
      (desiredDatabaseChildren(db(spec)) as any[]).find((c) => c.kind === 'CronJob').spec.jobTemplate.spec.template.spec
        .containers[0].command[2] as string;
    expect(command({})).not.toContain('rm -f');
    expect(command({ backup: { enabled: true, schedule: '0 2 * * *', retention: 2 } })).toContain(
      dumpRotationLine('my-db', 2),
    );
    // The line itself, run by a shell over a directory standing for the backup volume.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-dumps-'));
    const files = [
      'my-db-20261201T020000Z.sql',
      'my-db-20261202T020000Z.sql',
      'my-db-20261203T020000Z.sql',
      'my-db-20261204T020000Z.sql',
      'final-my-db-20261130T020000Z.sql',
      'my-db-x-20261101T020000Z.sql',
      'notes.txt',
    ];
    for (const f of files) fs.writeFileSync(path.join(dir, f), 'x');
    execFileSync('sh', ['-c', dumpRotationLine('my-db', 2).replaceAll('/backup/', `${dir}/`)]);
    expect(fs.readdirSync(dir).sort()).toEqual([
      'final-my-db-20261130T020000Z.sql',
      'my-db-20261203T020000Z.sql',
      'my-db-20261204T020000Z.sql',
      'my-db-x-20261101T020000Z.sql',
      'notes.txt',
    ]);
    fs.rmSync(dir, { recursive: true });
  });

  test('a server that was ready and is not: Available=False ServerUnavailable and a Warning Event, once; back, a Normal ServerAvailable Event', () => {
    const sts = (ready: number) => ({ metadata: { name: 'my-db' }, status: { readyReplicas: ready } });
    const observed = {
      applyError: undefined,
      changes: [],
      read: () => [],
      children: new ChildMap(),
      health: { children: [] },
    } as any;
    const available = (s: any) => s.conditions.find((c: any) => c.type === 'Available');
    const created = desiredDatabaseStatus(db(), { statefulSet: sts(0), hasCredentials: true });
    expect(available(created)).toMatchObject({ status: 'False', reason: 'ServerNotReady' });
    const ready = desiredDatabaseStatus({ ...db(), status: created }, { statefulSet: sts(1), hasCredentials: true });
    // The first start is no comeback.
    expect(databaseEvents({ ...db(), status: created }, observed, ready).map((e) => e.reason)).not.toContain(
      'ServerAvailable',
    );
    const gone = desiredDatabaseStatus({ ...db(), status: ready }, { statefulSet: sts(0), hasCredentials: true });
    expect(available(gone)).toMatchObject({ status: 'False', reason: 'ServerUnavailable' });
    expect(gone.phase).toBe('Unavailable');
    expect(databaseEvents({ ...db(), status: ready }, observed, gone)).toContainEqual({
      type: 'Warning',
      reason: 'ServerUnavailable',
      message: expect.stringContaining('not ready'),
    });
    // Still gone: the reason stays, no second Warning.
    const still = desiredDatabaseStatus({ ...db(), status: gone }, { statefulSet: sts(0), hasCredentials: true });
    expect(available(still).reason).toBe('ServerUnavailable');
    expect(databaseEvents({ ...db(), status: gone }, observed, still).map((e) => e.reason)).not.toContain(
      'ServerUnavailable',
    );
    const back = desiredDatabaseStatus({ ...db(), status: still }, { statefulSet: sts(1), hasCredentials: true });
    expect(databaseEvents({ ...db(), status: still }, observed, back)).toContainEqual({
      type: 'Normal',
      reason: 'ServerAvailable',
      message: expect.stringContaining('ready again'),
    });
  });
});

describe('the final snapshot of a deleted Database', () => {
  const owner = {
    apiVersion: 'database.example.com/v1alpha1',
    kind: 'Database',
    name: 'my-db',
    uid: 'u-5',
    controller: true,
    blockOwnerDeletion: true,
  };
  /** A finalize context over given cached Jobs, recording what it creates. */
  function context(jobs: { name: string; ours: boolean; conditions?: object[] }[] = []) {
    const created: any[] = [];
    const children = new ChildMap();
    const all = new Map<string, any>();
    for (const j of jobs) {
      const job = {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: j.name, namespace: 'data', ownerReferences: j.ours ? [owner] : undefined },
        status: { conditions: j.conditions },
      };
      all.set(j.name, job);
      if (j.ours) children.set(`Job/${j.name}`, job);
    }
    return {
      created,
      ctx: {
        children,
        owner,
        api: {
          createIfAbsent: async (_t: unknown, o: any) => {
            created.push(o);
            return true;
          },
          getOwn: () => Promise.reject(new Error('a Database keeps nothing')),
          getMadeFor: () => Promise.reject(new Error('a Database keeps nothing')),
          replaceOwn: () => Promise.reject(new Error('a Database keeps nothing')),
        },
        existing: (_t: unknown, name: string) => all.get(name),
        signal: new AbortController().signal,
      },
    };
  }
  const wanting = () => db({ backup: { enabled: true, schedule: '0 2 * * *', finalSnapshot: true } });

  test('only a Database that asks for one carries the finalizer, database.example.com/finalizer', () => {
    expect(finalizerName(databaseController.for)).toBe('database.example.com/finalizer');
    expect(databaseController.needsFinalizer?.(wanting())).toBe(true);
    expect(
      databaseController.needsFinalizer?.(
        db({ backup: { enabled: true, schedule: '0 2 * * *', finalSnapshot: false } }),
      ),
    ).toBe(false);
    expect(
      databaseController.needsFinalizer?.(
        db({ backup: { enabled: false, schedule: '0 2 * * *', finalSnapshot: true } }),
      ),
    ).toBe(false);
  });

  test('creates one Job dumping to the kept backup claim, owned by the Database, then waits for it', async () => {
    const { ctx, created } = context();
    const outcome = await finalSnapshot(wanting(), ctx);
    expect(outcome).toMatchObject({ done: false, reason: 'FinalSnapshotRunning' });
    expect(outcome.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'FinalSnapshotStarted' })]);
    expect(created).toHaveLength(1);
    const [job] = created;
    expect(() => {
      validateBuiltin(job);
    }).not.toThrow();
    expect(job).toMatchObject({ kind: 'Job', metadata: { name: 'my-db-final-backup', namespace: 'data' } });
    expect(job.metadata.ownerReferences).toEqual([owner]);
    const pod = job.spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'backup', persistentVolumeClaim: { claimName: 'my-db-backup' } });
    expect(pod.containers[0].command[2]).toContain('f=/backup/final-my-db-');
    expect(pod.containers[0].command[2]).toContain('pg_dump -h my-db.data.svc');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 999 });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  test('done when its Job completed; a failed Job or one it did not create is an error that says how to go on', async () => {
    const complete = context([
      { name: 'my-db-final-backup', ours: true, conditions: [{ type: 'Complete', status: 'True' }] },
    ]);
    expect(await finalSnapshot(wanting(), complete.ctx)).toMatchObject({ done: true });
    expect(complete.created).toEqual([]);

    const running = context([{ name: 'my-db-final-backup', ours: true, conditions: [] }]);
    const waiting = await finalSnapshot(wanting(), running.ctx);
    expect(waiting).toMatchObject({ done: false, reason: 'FinalSnapshotRunning' });
    expect(waiting.events ?? []).toEqual([]);
    expect(running.created).toEqual([]);

    const failed = context([
      {
        name: 'my-db-final-backup',
        ours: true,
        conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'reached the limit' }],
      },
    ]);
    await expect(finalSnapshot(wanting(), failed.ctx)).rejects.toMatchObject({
      reason: 'FinalSnapshotFailed',
      message: expect.stringContaining('BackoffLimitExceeded'),
    });
    await expect(finalSnapshot(wanting(), failed.ctx)).rejects.toThrow('spec.backup.finalSnapshot to false');

    const theirs = context([{ name: 'my-db-final-backup', ours: false }]);
    await expect(finalSnapshot(wanting(), theirs.ctx)).rejects.toMatchObject({ reason: 'FinalSnapshotBlocked' });
    expect(theirs.created).toEqual([]);
  });

  test('in a namespace being deleted: done, since no Job can be made there and its volumes go with it', async () => {
    const { ctx } = context();
    const refused = Object.assign(new Error('forbidden: namespace is being terminated'), {
      status: 403,
      details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
    });
    ctx.api.createIfAbsent = async () => {
      throw refused;
    };
    expect(await finalSnapshot(wanting(), ctx)).toEqual({ done: true });
    // Any other refusal is an error, retried.
    ctx.api.createIfAbsent = async () => {
      throw Object.assign(new Error('forbidden'), { status: 403 });
    };
    await expect(finalSnapshot(wanting(), ctx)).rejects.toThrow('forbidden');
  });

  test('switched off while the Database is being deleted: done at once, nothing created', async () => {
    const { ctx, created } = context([{ name: 'my-db-final-backup', ours: true, conditions: [] }]);
    expect(await finalSnapshot(db(), ctx)).toEqual({ done: true });
    expect(created).toEqual([]);
  });

  test('RBAC: patch of Databases (the finalizer), and Jobs: made (the final dump, the restore), deleted only as prunes', () => {
    const role = one(objects, 'ClusterRole', 'database-manager-role');
    const grants = role.rules.flatMap((r: any) =>
      r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`),
    );
    expect(grants).toContain('database.example.com/databases: get,list,watch,patch');
    expect(grants).toContain('batch/jobs: get,list,watch,create,update,patch,delete');
  });
});

describe('TLS of a PostgreSQL Database', () => {
  const server = (spec: object = {}) =>
    (desiredDatabaseChildren(db(spec)) as any[]).find((c) => c.kind === 'StatefulSet').spec.template;
  const hba = (spec: object = {}) =>
    (desiredDatabaseChildren(db(spec)) as any[]).find((c) => c.metadata.name === 'my-db-config').data['pg_hba.conf'];

  test('on by default: the server takes its certificate and key from the Secret <name>-tls, readable by its group only, and its rules from <name>-config', () => {
    const template = server();
    const container = template.spec.containers[0];
    expect(container.args).toEqual([
      'postgres',
      '-c',
      'hba_file=/etc/postgresql/operator/pg_hba.conf',
      '-c',
      'password_encryption=scram-sha-256',
      '-c',
      'ssl=on',
      '-c',
      'ssl_cert_file=/etc/postgresql/tls/tls.crt',
      '-c',
      'ssl_key_file=/etc/postgresql/tls/tls.key',
    ]);
    expect(template.spec.volumes).toContainEqual({
      name: 'tls',
      secret: { secretName: 'my-db-tls', defaultMode: 0o640 },
    });
    expect(container.volumeMounts).toContainEqual({ name: 'tls', mountPath: '/etc/postgresql/tls', readOnly: true });
    expect(template.metadata.annotations).toEqual({ 'database.example.com/client-access': 'tls-offered' });
    // Plaintext is still let in, by password, from the network; the socket and loopback need none.
    expect(hba()).toMatch(/^host all all all md5$/m);
    expect(hba()).toMatch(/^local all all trust$/m);
    expect(hba()).not.toMatch(/hostssl/);
  });

  test('required: only TLS from the network (hostssl), and the pod template changes, so the server restarts to read it', () => {
    expect(hba({ tls: { enabled: true, required: true } })).toMatch(/^hostssl all all all md5$/m);
    expect(hba({ tls: { enabled: true, required: true } })).not.toMatch(/^host all all all/m);
    expect(server({ tls: { enabled: true, required: true } }).metadata.annotations).toEqual({
      'database.example.com/client-access': 'tls-required',
    });
  });

  test('off: no certificate, no Secret mounted; mysql has none of it', () => {
    const off = server({ tls: { enabled: false, required: false } });
    expect(off.spec.containers[0].args.join(' ')).not.toContain('ssl');
    expect(off.spec.volumes.map((v: any) => v.name)).not.toContain('tls');
    expect(off.metadata.annotations).toEqual({ 'database.example.com/client-access': 'plaintext' });
    const mysql = server({ type: 'mysql', version: '8.4' });
    expect(mysql.spec.containers[0].args).toBeUndefined();
    expect(mysql.spec.volumes.map((v: any) => v.name)).not.toContain('tls');
  });

  test("the Secret: a CA of the Database's own that signed the server's certificate for its Services' and pods' names; no CA key kept", () => {
    const now = new Date('2026-12-06T12:00:00Z');
    const { secret, expires } = newTlsSecret(db(), { metadata: { name: 'my-db-retention', uid: 'cm-1' } }, now);
    expect(secret.metadata).toMatchObject({
      name: 'my-db-tls',
      namespace: 'data',
      ownerReferences: [{ kind: 'ConfigMap', name: 'my-db-retention', uid: 'cm-1' }],
    });
    expect(secret.type).toBe('kubernetes.io/tls');
    const data = (secret as any).stringData as Record<string, string>;
    expect(Object.keys(data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    const ca = new X509Certificate(data['ca.crt']!);
    const leaf = new X509Certificate(data['tls.crt']!);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkPrivateKey(createPrivateKey(data['tls.key']!))).toBe(true);
    for (const host of [
      'my-db',
      'my-db.data.svc',
      'my-db.data.svc.cluster.local',
      'my-db-rw.data.svc',
      'my-db-0.my-db-headless.data.svc',
    ])
      expect(leaf.checkHost(host)).toBeDefined();
    expect(leaf.checkHost('other.data.svc')).toBeUndefined();
    expect(expires).toBe('2036-12-03T12:00:00Z');
    expect(new Date(leaf.validTo).toISOString()).toBe('2036-12-03T12:00:00.000Z');
    // Two Databases never share a CA.
    const again = newTlsSecret(db(), { metadata: { name: 'my-db-retention', uid: 'cm-1' } }, now).secret as any;
    expect(again.stringData['ca.crt']).not.toBe(data['ca.crt']);
  });

  test('prepare: the Secret made once, after the retention ConfigMap; status tlsSecret; an Event saying until when it is valid; never again once the status names it', async () => {
    const created: any[] = [];
    const api = {
      createIfAbsent: async (_t: unknown, o: any) => {
        created.push(o);
        return true;
      },
    } as any;
    const retention = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'my-db-retention', namespace: 'data', uid: 'cm-1' },
    };
    const children = new ChildMap([[childKey('ConfigMap', 'my-db-retention'), retention]]);
    const prepared: any = await databaseController.prepare!(api, db(), children, undefined);
    expect(created.map((o) => o.metadata.name)).toEqual(['my-db-credentials', 'my-db-tls', 'my-db-replication']);
    expect(prepared).toMatchObject({ hasCredentials: true, hasTls: true, createdTls: { expires: expect.any(String) } });
    const status = desiredDatabaseStatus(db(), {
      hasCredentials: true,
      tls: { exists: true },
      hasReplication: prepared.hasReplication,
    });
    expect(status).toMatchObject({ tlsSecret: 'my-db-tls', replicationSecret: 'my-db-replication' });
    const observed = {
      applyError: undefined,
      changes: [],
      read: () => [],
      children,
      health: { children: [] },
      prepared,
    } as any;
    expect(databaseEvents(db(), observed, status)).toContainEqual({
      type: 'Normal',
      reason: 'CertificateIssued',
      message: expect.stringContaining(`valid until ${prepared.createdTls.expires as string}`),
    });
    created.length = 0;
    const settled: any = await databaseController.prepare!(api, { ...db(), status }, children, undefined);
    // Both known from the status: no request at all.
    expect(created).toEqual([]);
    expect(settled).toMatchObject({ hasCredentials: true, hasTls: true });
    // AlreadyExists: the Secret made before is kept, and no expiry is claimed for a certificate not made.
    const kept: any = await databaseController.prepare!(
      { createIfAbsent: async () => false } as any,
      db(),
      children,
      undefined,
    );
    expect(kept).toMatchObject({ hasTls: true });
    expect(kept.createdTls).toBeUndefined();
  });
});
