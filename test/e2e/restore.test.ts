/**
 * Backups that come back, on the real node with the operators `kubectl apply -f dist/` installs:
 * a key in a real etcd cluster and a row in a real PostgreSQL, each backed up by a Job of its
 * backup CronJob, the resource deleted, and a new one restored from that backup reading them
 * again; a corrupt snapshot and a dump that does not load refused with the reason, nothing
 * started; and the schema refusing a malformed restore source.
 */
import {
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  jobCompletedAt,
  kubectl,
  kubectlOk,
} from '../support/kube';
import { commandInPod, etcdctlWithCertificate, psqlAs, psqlThrough, runCronJobNow } from '../support/pod-script';

const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(420_000);

if (skip) test.todo(`restoring backups on a real node — skipped: ${skip}`);

(skip ? describe.skip : describe)('restoring backups on a real node', () => {
  let ns: string;

  beforeAll(() => {
    ns = createTestNamespace('e2e-restore');
    kubectlOk(['rollout', 'status', 'deployment/etcd-operator', '-n', 'etcd-system', '--timeout=120s']);
    kubectlOk(['rollout', 'status', 'deployment/database-operator', '-n', 'database-system', '--timeout=120s']);
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  const apply = (kind: string, name: string, spec: object) =>
    kubectl(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: kind === 'EtcdCluster' ? 'etcd.database.coreos.com/v1alpha1' : 'database.example.com/v1alpha1',
        kind,
        metadata: { name },
        spec,
      }),
    });
  /** `apply`, failing with kubectl's words when refused. */
  const applied = (kind: string, name: string, spec: object) => {
    const r = apply(kind, name, spec);
    if (r.code !== 0) throw new Error(`applying ${kind} ${name} failed: ${r.stderr}`);
  };
  const resource = (kind: string, name: string) => getJsonIfExists([`get`, kind, name, '-n', ns]);
  const condition = (kind: string, name: string, type: string) =>
    resource(kind, name)?.status?.conditions?.find((c: any) => c.type === type);
  /** The resource's condition `type` once it has `reason` (or status True), with the namespace's pods if it never does. */
  const awaitCondition = (kind: string, name: string, type: string, reason?: string) =>
    eventually(
      `${kind} ${name}: ${type} ${reason ?? 'True'}`,
      () => {
        const c = condition(kind, name, type);
        return (reason ? c?.reason === reason : c?.status === 'True') ? c : undefined;
      },
      300_000,
      1000,
      () =>
        kubectl(['get', 'pods,jobs,pvc', '-n', ns, '-o', 'wide']).stdout + JSON.stringify(resource(kind, name)?.status),
    );
  const gone = (kind: string, name: string) =>
    eventually(`${kind} ${name} gone`, () => (resource(kind, name) ? undefined : true), 120_000, 1000);
  const warnings = (name: string) =>
    getJson(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name},type=Warning`]).items.map(
      (e: any) => e.reason as string,
    );
  /** The backups the resource's status lists, once it lists one. */
  const listedBackups = (kind: string, name: string) =>
    eventually(
      `${kind} ${name} to list its backup`,
      () => {
        const b = resource(kind, name)?.status?.backups as
          { name: string; sizeBytes: number; claim?: string }[] | undefined;
        return b?.length ? b : undefined;
      },
      60_000,
      1000,
    );

  /**
   * Until the cluster's client Service routes to a member: etcd may call a member healthy (and the
   * status Available) a moment before the kubelet's readiness probe has run, and until then the
   * Service has no ready endpoint (a CI run's etcdctl timed out dialling it).
   */
  const clientServiceReady = (cluster: string) =>
    eventually(
      `${cluster}-client to route to a ready member`,
      () =>
        getJson(['get', 'endpointslices', '-n', ns, '-l', `kubernetes.io/service-name=${cluster}-client`]).items.some(
          (slice: any) => (slice.endpoints ?? []).some((e: any) => e.conditions?.ready === true),
        )
          ? true
          : undefined,
      120_000,
      1000,
    );
  /** etcdctl as a client holding the cluster's client certificate, through its client Service (TLS). */
  const etcdctl = (cluster: string, ...args: string[]) => etcdctlWithCertificate(ns, cluster, '3.5.21', ...args);
  let snapshot: string;

  test('EtcdCluster: a key written, a snapshot by the backup Job, the cluster deleted; a new 3-member cluster restored from the snapshot reads the key', async () => {
    applied('EtcdCluster', 'source-etcd', { replicas: 1, backup: { schedule: '0 3 * * *', storage: '1Gi' } });
    await awaitCondition('EtcdCluster', 'source-etcd', 'Available');
    await clientServiceReady('source-etcd');
    await etcdctl('source-etcd', 'put', 'restore-key', 'came back');
    await eventually(
      'the backup CronJob',
      () => getJsonIfExists(['get', 'cronjob', 'source-etcd-backup', '-n', ns]),
      60_000,
    );
    await runCronJobNow(ns, 'source-etcd-backup', 'snapshot-now');
    const [listed] = await listedBackups('EtcdCluster', 'source-etcd');
    expect(listed!.name).toMatch(/^source-etcd-\d{8}T\d{6}Z\.db$/);
    expect(listed!.sizeBytes).toBeGreaterThan(0);
    expect(listed!.claim).toBe('source-etcd-backups');
    snapshot = listed!.name;

    kubectlOk(['delete', 'etcdcluster', 'source-etcd', '-n', ns]);
    await gone('EtcdCluster', 'source-etcd');
    await eventually('its members gone', () => (resource('pod', 'source-etcd-0') ? undefined : true), 120_000, 1000);

    applied('EtcdCluster', 'restored-etcd', { replicas: 3, restore: { backup: snapshot } });
    const restored = await awaitCondition('EtcdCluster', 'restored-etcd', 'Restored');
    expect(restored.message).toBe(`restored from snapshot ${snapshot} from PVC source-etcd-backups`);
    await eventually(
      '3 healthy members',
      () => {
        const members = (resource('EtcdCluster', 'restored-etcd')?.status?.etcdMembers ?? []) as any[];
        return members.length === 3 && members.every((m) => m.healthy && !m.learner) ? members : undefined;
      },
      300_000,
      1000,
      () => kubectl(['get', 'pods', '-n', ns, '-o', 'wide']).stdout,
    );
    // One cluster of the restored members under their own names, the key in it.
    await clientServiceReady('restored-etcd');
    const list = await etcdctl('restored-etcd', 'member', 'list');
    expect(list).toContain('restored-etcd-0');
    // Restored as a TLS cluster: its peer URLs https, as a new cluster's.
    expect(list).toContain('https://restored-etcd-2.restored-etcd.');
    expect(list).not.toContain('source-etcd');
    expect((await etcdctl('restored-etcd', 'get', 'restore-key', '--print-value-only')).trim()).toBe('came back');
    const cluster = resource('EtcdCluster', 'restored-etcd');
    expect(cluster.status.restoredFrom).toBe(`source-etcd-backups/${snapshot}`);
    expect(cluster.status.conditions.find((c: any) => c.type === 'Available')).toMatchObject({ status: 'True' });
    // Each member's pod started once, on restored data (no restart from a refused data directory).
    for (const i of [0, 1, 2])
      expect(getJson(['get', 'pod', `restored-etcd-${i}`, '-n', ns]).status.containerStatuses[0].restartCount).toBe(0);
  });

  test('EtcdCluster: made again under its name, it lists the snapshot its kept backup claim holds, with an Event, before any backup of its own', async () => {
    applied('EtcdCluster', 'source-etcd', { replicas: 1, backup: { schedule: '0 3 * * *', storage: '1Gi' } });
    const [listed, ...more] = await listedBackups('EtcdCluster', 'source-etcd');
    expect(more).toEqual([]);
    expect(listed).toMatchObject({ name: snapshot, claim: 'source-etcd-backups' });
    expect(listed!.sizeBytes).toBeGreaterThan(0);
    const cluster = resource('EtcdCluster', 'source-etcd');
    expect(cluster.status.backupsListedFrom).toBe('source-etcd-backups');
    // No backup Job of its own ran: the listing found it.
    expect(cluster.status.lastBackupTime).toBeUndefined();
    const events = getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=source-etcd']);
    expect(events.items.map((e: any) => `${e.reason}: ${e.message}`)).toContain(
      'BackupsListed: Listed 1 snapshot already on PVC source-etcd-backups',
    );
    // The listing Job is pruned once the status names the claim.
    await eventually('the listing Job pruned', () => (resource('job', 'source-etcd-list-backups') ? undefined : true));
    kubectlOk(['delete', 'etcdcluster', 'source-etcd', '-n', ns]);
    await gone('EtcdCluster', 'source-etcd');
    await eventually('its members gone', () => (resource('pod', 'source-etcd-0') ? undefined : true), 120_000, 1000);
  });

  test('EtcdCluster: a corrupt snapshot is refused with RestoreFailed naming it and the reason, a Warning Event, and no member started', async () => {
    // The real snapshot cut short, as a torn copy would be.
    await commandInPod(ns, {
      image: 'busybox',
      claim: { name: 'source-etcd-backups', mountPath: '/backups' },
      command: ['sh', '-c', `head -c 20000 /backups/${snapshot} > /backups/source-etcd-20000101T000000Z.db`],
    });
    applied('EtcdCluster', 'broken-etcd', { replicas: 1, restore: { backup: 'source-etcd-20000101T000000Z.db' } });
    const degraded = await awaitCondition('EtcdCluster', 'broken-etcd', 'Degraded', 'RestoreFailed');
    expect(degraded.status).toBe('True');
    expect(degraded.message).toContain(
      'restoring snapshot source-etcd-20000101T000000Z.db from PVC source-etcd-backups failed',
    );
    expect(degraded.message).toContain('container restore exited with code');
    expect(warnings('broken-etcd')).toContain('RestoreFailed');
    expect(resource('EtcdCluster', 'broken-etcd').status.phase).toBe('Failed');
    expect(resource('statefulset', 'broken-etcd')).toBeUndefined();
    expect(resource('pod', 'broken-etcd-0')).toBeUndefined();
    process.stdout.write(`corrupt snapshot: Degraded ${degraded.reason}: ${degraded.message}\n`);
  });

  test("EtcdCluster: a restore into a member's volume that holds data (kept from the deleted cluster of that name) is refused, the volume untouched", async () => {
    const kept = getJson(['get', 'pvc', 'data-source-etcd-0', '-n', ns]);
    applied('EtcdCluster', 'source-etcd', { replicas: 1, restore: { backup: snapshot } });
    const degraded = await eventually(
      'Degraded=True',
      () => {
        const c = condition('EtcdCluster', 'source-etcd', 'Degraded');
        return c?.status === 'True' ? c : undefined;
      },
      120_000,
      1000,
    );
    expect(degraded.message).toContain('data-source-etcd-0');
    expect(resource('statefulset', 'source-etcd')).toBeUndefined();
    expect(resource('pod', 'source-etcd-0')).toBeUndefined();
    // Not written to, not even its labels: the operator never touches a claim it did not make.
    expect(getJson(['get', 'pvc', 'data-source-etcd-0', '-n', ns]).metadata.resourceVersion).toBe(
      kept.metadata.resourceVersion,
    );
    process.stdout.write(`restore over data: Degraded ${degraded.reason}: ${degraded.message}\n`);
  });

  test('EtcdCluster: the schema refuses a malformed restore source, naming the field', () => {
    const refused = apply('EtcdCluster', 'malformed-etcd', { restore: { backup: 'latest' } });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('spec.restore.backup');
    const both = apply('EtcdCluster', 'malformed-etcd', { restore: { claim: 'source-etcd-backups' } });
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('spec.restore.claim');
  });

  const psql = (db: string, ...sql: string[]) => psqlAs(ns, db, ...sql);
  const postgres = { type: 'postgresql', version: '13', storage: { size: '1Gi' } };

  test('Database: a row written, a dump by the backup Job (from the standby), the Database deleted; a new Database with a standby restored from its newest dump reads the row on both', async () => {
    // Each with a standby: the backup dumps it, and the restored primary's standby is cloned from it.
    applied('Database', 'source-db', {
      ...postgres,
      instances: 2,
      backup: { enabled: true, schedule: '0 3 * * *' },
    });
    await awaitCondition('Database', 'source-db', 'Available');
    await psql(
      'source-db',
      'CREATE TABLE orders (id int PRIMARY KEY, note text)',
      "INSERT INTO orders VALUES (7, 'came back')",
    );
    await eventually(
      'the row on the standby',
      async () =>
        (
          await psqlThrough(ns, 'source-db', 'source-db-ro', 'SELECT note FROM orders WHERE id = 7').catch(() => '')
        ).trim() === 'came back'
          ? true
          : undefined,
      120_000,
      1000,
    );
    await eventually(
      'the backup CronJob',
      () => getJsonIfExists(['get', 'cronjob', 'source-db-backup', '-n', ns]),
      60_000,
    );
    await runCronJobNow(ns, 'source-db-backup', 'dump-now');
    // Dumped from the standby, as the Job's log says.
    expect(kubectl(['logs', 'job/dump-now', '-n', ns]).stdout).toContain('dumped from a standby through source-db-ro');
    const [dump] = await listedBackups('Database', 'source-db');
    expect(dump!.name).toMatch(/^source-db-\d{8}T\d{6}Z\.sql$/);
    // Which claim it is on, as the backup reported it: a restore can name it.
    expect(dump!.claim).toBe('source-db-backup');

    kubectlOk(['delete', 'database', 'source-db', '-n', ns]);
    await gone('Database', 'source-db');

    applied('Database', 'restored-db', { ...postgres, instances: 2, restore: { fromDatabase: 'source-db' } });
    const restored = await awaitCondition('Database', 'restored-db', 'Restored');
    expect(restored.message).toBe('restored from the newest dump in PVC source-db-backup');
    // The dump itself, as the restore Job reported it loaded it.
    expect(resource('Database', 'restored-db').status.restoredFrom).toBe(`source-db-backup/${dump!.name}`);
    await awaitCondition('Database', 'restored-db', 'Available');
    // Its own credentials (a new password, its own database name), the row in it — on its standby too.
    expect((await psql('restored-db', 'SELECT note FROM orders WHERE id = 7')).trim()).toBe('came back');
    const onStandby = await eventually(
      'the restored row on the standby',
      async () => {
        const out = (
          await psqlThrough(
            ns,
            'restored-db',
            'restored-db-ro',
            'SELECT pg_is_in_recovery(), note FROM orders WHERE id = 7',
          ).catch(() => '')
        ).trim();
        return out ? out : undefined;
      },
      180_000,
      1000,
    );
    expect(onStandby).toBe('t|came back');
    // Its finished restore Job pruned once Restored; the Job controller's Event says when it completed.
    await eventually('the restore Job pruned', () => (resource('job', 'restored-db-restore') ? undefined : true));
    const server = getJson(['get', 'pod', 'restored-db-0', '-n', ns]);
    expect(server.status.containerStatuses[0].restartCount).toBe(0);
    // The server's first start came after the dump was loaded: nothing served half-restored.
    expect(Date.parse(server.metadata.creationTimestamp)).toBeGreaterThanOrEqual(
      jobCompletedAt(ns, 'restored-db-restore'),
    );
  });

  test('Database: a dump that does not load is refused with RestoreFailed naming the dump and the error, and no server started', async () => {
    await commandInPod(ns, {
      image: 'postgres:13',
      uid: 999,
      claim: { name: 'source-db-backup', mountPath: '/backup' },
      command: ['sh', '-c', "echo 'THIS IS NOT SQL;' > /backup/source-db-20000101T000000Z.sql"],
    });
    applied('Database', 'broken-db', { ...postgres, restore: { backup: 'source-db-20000101T000000Z.sql' } });
    const degraded = await awaitCondition('Database', 'broken-db', 'Degraded', 'RestoreFailed');
    expect(degraded.status).toBe('True');
    expect(degraded.message).toContain('dump source-db-20000101T000000Z.sql from PVC source-db-backup failed');
    expect(degraded.message).toContain('syntax error');
    expect(warnings('broken-db')).toContain('RestoreFailed');
    expect(resource('statefulset', 'broken-db')).toBeUndefined();
    expect(resource('pod', 'broken-db-0')).toBeUndefined();
    process.stdout.write(`dump that does not load: Degraded ${degraded.reason}: ${degraded.message}\n`);
  });
});
