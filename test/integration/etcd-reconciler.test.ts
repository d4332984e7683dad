import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { etcdSpecsRefusedByRules, invalidEtcdSpecs } from '../support/etcd-cases';
import { EtcdMembers, etcdReleases } from '../support/etcd-members';
import {
  autoscalerConditions,
  eventually,
  getJson,
  jobCompletedAt,
  kubectl,
  kubectlOk,
  nodesRun,
  testIf,
  testWithNodes,
} from '../support/kube';
import { kstatusOf } from '../support/kstatus';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';
import type { ReconcilerProcess } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const SEED = path.join(ROOT, 'test', 'fixtures', 'seeds', '000-my-etcd-cluster.yaml');
const NAME = 'my-etcd-cluster';

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let get: OperatorUnderTest['get'];
let members: EtcdMembers | undefined;

const pvcNames = () =>
  getJson(['get', 'pvc', '-n', ns])
    .items.map((p: any) => p.metadata.name)
    .sort();

// The seed's etcd version, run as real processes: the harness knows its binary only for a control
// plane it started (not for OPKIT_KUBECONFIG's cluster).
const membersRun = nodesRun && !!etcdReleases()['3.5.21'];
const testWithMembers = testIf(membersRun, 'needs simulated nodes and the etcd 3.5.21 binary');

beforeAll(async () => {
  // The seed's members run as real etcd processes (see etcd-members.ts), reached through the hosts file.
  const hostsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-hosts-')), 'hosts.json');
  ({ ns, reconciler, get } = await startOperatorUnderTest({
    operator: 'etcd',
    controllers: 'etcdcluster',
    crds: ['etcdclusters.etcd.database.coreos.com'],
    env: { OPKIT_ETCD_HOSTS_FILE: hostsFile },
  }));
  if (membersRun) members = await new EtcdMembers(ns, NAME, hostsFile, 220 + Math.floor(Math.random() * 30)).start();
});

afterAll(async () => {
  await members?.stop();
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe('the etcdcluster controller against a real API server', () => {
  test.each([...invalidEtcdSpecs, ...etcdSpecsRefusedByRules])(
    'the API server rejects %s, naming the field',
    (_what, spec, field) => {
      const r = kubectl(['create', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'etcd.database.coreos.com/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name: 'bad' },
          spec,
        }),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(field);
    },
  );

  test("seed 000's EtcdCluster applies verbatim and gets its Services, StatefulSet and PDB, all owned", async () => {
    kubectlOk(['apply', '-n', ns, '-f', SEED]);
    const cluster = get('etcdcluster', NAME);
    // The seed's fields, and the compaction retention the CRD defaults.
    expect(cluster.spec).toEqual({ replicas: 3, storage: '10Gi', version: '3.5.21', autoCompactionRetention: '1h' });
    for (const [kind, name] of [
      ['service', NAME],
      ['service', `${NAME}-client`],
      ['statefulset', NAME],
      ['poddisruptionbudget', NAME],
    ] as [string, string][]) {
      const child = await eventually(`${kind}/${name}`, () => get(kind, name));
      expect(child.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'EtcdCluster', name: NAME, uid: cluster.metadata.uid, controller: true }),
      ]);
    }
    expect(get('statefulset', NAME).spec.replicas).toBe(3);
    expect(get('poddisruptionbudget', NAME).spec.minAvailable).toBe(2);
    // The StatefulSet controller claims a 10Gi data volume per member.
    await eventually('three PVCs', () => (pvcNames().length === 3 ? true : undefined), 60_000);
    expect(pvcNames()).toEqual([0, 1, 2].map((i) => `data-${NAME}-${i}`));
    expect(get('pvc', `data-${NAME}-0`).spec.resources.requests.storage).toBe('10Gi');
  });

  test('status lists the members and says what is going on', async () => {
    const cluster = await eventually(
      'status',
      () => {
        const c = get('etcdcluster', NAME);
        return c.status?.members?.length === 3 && c.status.observedGeneration === c.metadata.generation ? c : undefined;
      },
      60_000,
    );
    expect(cluster.status.clientService).toBe(`${NAME}-client.${ns}.svc:2379`);
    if (!nodesRun) {
      expect(cluster.status).toMatchObject({ phase: 'Creating', readyReplicas: 0 });
      expect(cluster.status.conditions.find((c: any) => c.type === 'Available')).toMatchObject({
        status: 'False',
        reason: 'Bootstrapping',
      });
    }
  });

  test("a HorizontalPodAutoscaler reads the EtcdCluster's scale: its replicas and its members' selector", async () => {
    const path = `/apis/etcd.database.coreos.com/v1alpha1/namespaces/${ns}/etcdclusters/${NAME}/scale`;
    const scale = await eventually('the scale selector', () => {
      const s = JSON.parse(kubectlOk(['get', '--raw', path]));
      return s.status?.selector ? s : undefined;
    });
    expect(scale.spec.replicas).toBe(3);
    const matchLabels = get('statefulset', NAME).spec.selector.matchLabels as Record<string, string>;
    expect(scale.status.selector.split(',').sort()).toEqual(
      Object.entries(matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .sort(),
    );
    const conditions = await autoscalerConditions(
      ns,
      { apiVersion: 'etcd.database.coreos.com/v1alpha1', kind: 'EtcdCluster', name: NAME },
      { min: 3, max: 5 },
    );
    expect(conditions.find((c: any) => c.type === 'AbleToScale')).toMatchObject({
      status: 'True',
      reason: 'SucceededGetScale',
    });
    expect(conditions.find((c: any) => c.type === 'ScalingActive').reason).not.toBe('InvalidSelector');
    kubectlOk(['delete', 'hpa', NAME, '-n', ns]);
  });

  testWithMembers(
    'once its members run: phase Running, Available with a healthy quorum, claims Bound, the budget allows one disruption',
    async () => {
      const cluster = await eventually(
        'phase Running',
        () => {
          const c = get('etcdcluster', NAME);
          return c.status?.phase === 'Running' && c.status.readyReplicas === 3 ? c : undefined;
        },
        90_000,
      );
      const cond = Object.fromEntries(cluster.status.conditions.map((c: any) => [c.type, c]));
      expect(cond.Available).toMatchObject({ status: 'True', reason: 'QuorumHealthy' });
      expect(cond.Ready).toMatchObject({ status: 'True' });
      expect(kstatusOf('etcdcluster', NAME, ns)).toBe('Current');
      expect(cluster.status.etcdMembers.map((m: any) => `${m.name}:${m.version}`)).toEqual(
        [0, 1, 2].map((i) => `${NAME}-${i}:3.5.21`),
      );
      expect(cond.Progressing).toMatchObject({ status: 'False', reason: 'Complete' });
      expect(cond.Degraded).toMatchObject({ status: 'False' });
      expect(cluster.status.members).toEqual([0, 1, 2].map((i) => `${NAME}-${i}`));
      const claims = getJson(['get', 'pvc', '-n', ns]).items;
      expect(claims.map((c: any) => c.status.phase)).toEqual(['Bound', 'Bound', 'Bound']);
      const pdb = await eventually('the budget to count healthy members', () => {
        const p = get('poddisruptionbudget', NAME);
        return p?.status?.currentHealthy === 3 ? p : undefined;
      });
      // 3 members, quorum 2: one may be disrupted, never two.
      expect(pdb.status).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
    },
  );

  test('an even member count is accepted but warned about in status and by an Event', async () => {
    kubectlOk(['scale', 'etcdcluster', NAME, '-n', ns, '--replicas=4']);
    const cond = await eventually('the OddMembers condition', () => {
      const c = get('etcdcluster', NAME)?.status?.conditions?.find((x: any) => x.type === 'OddMembers');
      return c?.status === 'False' ? c : undefined;
    });
    expect(cond.reason).toBe('EvenMemberCount');
    await eventually('a Warning Event', () =>
      getJson(['get', 'events.events.k8s.io', '-n', ns]).items.some(
        (e: any) => e.type === 'Warning' && e.reason === 'EvenMemberCount',
      )
        ? true
        : undefined,
    );
    kubectlOk(['scale', 'etcdcluster', NAME, '-n', ns, '--replicas=3']);
    if (members)
      await eventually(
        '3 members again',
        () =>
          get('etcdcluster', NAME)?.status?.etcdMembers?.length === 3 && get('statefulset', NAME)?.spec.replicas === 3
            ? true
            : undefined,
        60_000,
      );
  });

  testWithNodes(
    'a member claim Kubernetes refuses (quota) makes it Degraded with the reason and a Warning Event, until it is fixed',
    async () => {
      // Every claim the quota allows is taken, so the StatefulSet controller cannot make the new one.
      // The claim of the member scaled away (4 → 3, above) is deleted by the StatefulSet controller in
      // the background: counted while still there, its going would leave room for the new one.
      const scaledAway = (claim: string) => Number(new RegExp(`^data-${NAME}-(\\d+)$`).exec(claim)?.[1] ?? -1) >= 3;
      await eventually(
        'the claims of members scaled away gone',
        () => (pvcNames().some(scaledAway) ? undefined : true),
        60_000,
      );
      const taken = pvcNames().length;
      kubectlOk(['create', 'quota', 'claims', '-n', ns, `--hard=persistentvolumeclaims=${taken}`]);
      await eventually('the quota counted, and full', () =>
        getJson(['get', 'quota', 'claims', '-n', ns]).status?.used?.persistentvolumeclaims === String(taken)
          ? true
          : undefined,
      );
      kubectlOk(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'etcd.database.coreos.com/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name: 'starved' },
          spec: { replicas: 1 },
        }),
      });
      const degraded = await eventually(
        'Degraded=True FailedCreate',
        () => {
          const d = get('etcdcluster', 'starved')?.status?.conditions?.find((c: any) => c.type === 'Degraded');
          return d?.status === 'True' ? d : undefined;
        },
        60_000,
      );
      expect(degraded.reason).toBe('FailedCreate');
      expect(degraded.message).toMatch(/StatefulSet starved: .*exceeded quota/);
      await eventually('a Warning Event about the EtcdCluster', () =>
        getJson(['get', 'events.events.k8s.io', '-n', ns]).items.some(
          (e: any) =>
            e.type === 'Warning' &&
            e.reason === 'FailedCreate' &&
            e.regarding?.kind === 'EtcdCluster' &&
            e.regarding?.name === 'starved',
        )
          ? true
          : undefined,
      );
      kubectlOk(['delete', 'quota', 'claims', '-n', ns]);
      await eventually(
        'Degraded=False once its member runs',
        () => {
          const c = get('etcdcluster', 'starved');
          return c?.status?.readyReplicas === 1 &&
            c.status.conditions.find((x: any) => x.type === 'Degraded')?.status === 'False'
            ? true
            : undefined;
        },
        120_000,
      );
      kubectlOk(['delete', 'etcdcluster', 'starved', '-n', ns]);
    },
  );

  testWithNodes(
    'with backup.finalSnapshot, deleting waits for one more snapshot Job to succeed; the backup claim stays',
    async () => {
      kubectlOk(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'etcd.database.coreos.com/v1alpha1',
          kind: 'EtcdCluster',
          metadata: { name: 'snap' },
          spec: { replicas: 1, backup: { schedule: '@daily', finalSnapshot: true } },
        }),
      });
      const cluster = await eventually('the finalizer', () =>
        get('etcdcluster', 'snap')?.metadata.finalizers?.includes('etcd.database.coreos.com/finalizer')
          ? get('etcdcluster', 'snap')
          : undefined,
      );
      const cronJob = await eventually('its backup CronJob', () => get('cronjob', 'snap-backup'), 60_000);
      kubectlOk(['delete', 'etcdcluster', 'snap', '-n', ns, '--wait=false']);
      const job = await eventually('the final snapshot Job', () => get('job', 'snap-final-backup'), 60_000);
      expect(job.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'EtcdCluster', uid: cluster.metadata.uid, controller: true }),
      ]);
      // The scheduled snapshot's own pod, once more.
      expect(job.spec.template.spec.initContainers[0].command).toEqual(
        cronJob.spec.jobTemplate.spec.template.spec.initContainers[0].command,
      );
      await eventually('the EtcdCluster to go', () => (get('etcdcluster', 'snap') ? undefined : true), 120_000);
      const reasons = getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=snap']).items.map(
        (e: any) => e.reason,
      );
      expect(reasons).toEqual(expect.arrayContaining(['FinalSnapshotStarted', 'FinalSnapshotTaken']));
      expect(pvcNames()).toContain('snap-backups');
    },
  );

  const restoredCluster = (name: string, restore: object) =>
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'etcd.database.coreos.com/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name },
        spec: { replicas: 3, restore },
      }),
    });
  const conditionOf = (name: string, type: string) =>
    get('etcdcluster', name)?.status?.conditions?.find((c: any) => c.type === type);

  testWithNodes(
    "spec.restore: the members' claims and a restore Job each first, the StatefulSet only once every Job completed, then Restored",
    async () => {
      // kwok completes Job pods without running them: the order and the status are what is tested here
      // (the restore itself runs on the real node, test/e2e/restore.test.ts).
      restoredCluster('seeded', { claim: 'snap-backups', path: 'snap-20261129T020000Z.db' });
      const done = await eventually(
        'Restored=True',
        () => (conditionOf('seeded', 'Restored')?.status === 'True' ? true : undefined),
        90_000,
      );
      expect(done).toBe(true);
      const sts = await eventually('the StatefulSet', () => get('statefulset', 'seeded'), 60_000);
      // Once Restored, the finished restore Jobs are pruned (their pods with them): the restore is
      // over for good, and what it did stays in the status and the Job controller's Events.
      await eventually('the restore Jobs pruned', () =>
        [0, 1, 2].every((i) => get('job', `seeded-restore-${i}`) === undefined) ? true : undefined,
      );
      for (const i of [0, 1, 2]) {
        const completed = jobCompletedAt(ns, `seeded-restore-${i}`);
        // Made no earlier than the last restore Job completed (timestamps are to the second).
        expect(Date.parse(sts.metadata.creationTimestamp)).toBeGreaterThanOrEqual(completed);
        expect(get('pvc', `data-seeded-${i}`).metadata.ownerReferences).toBeUndefined();
      }
      const cluster = get('etcdcluster', 'seeded');
      expect(cluster.status.restoredFrom).toBe('snap-backups/snap-20261129T020000Z.db');
      expect(conditionOf('seeded', 'Restored').message).toBe(
        'restored from snapshot snap-20261129T020000Z.db from PVC snap-backups',
      );
    },
  );

  test('spec.replicas cannot change while the restore is not done (its Jobs seed that many members), naming the field', async () => {
    // A snapshot claim that does not exist: the restore never completes (RestoreFailed), so the
    // member list the Jobs seeded stays the one the cluster must start with.
    restoredCluster('stalled', { claim: 'no-such-claim', path: 'snap.db' });
    await eventually('the restore Jobs', () => get('job', 'stalled-restore-0'), 60_000);
    const scaled = kubectl([
      'patch',
      'etcdcluster',
      'stalled',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"replicas":5}}',
    ]);
    expect(scaled.code).not.toBe(0);
    expect(scaled.stderr).toContain('spec.replicas: Forbidden: replicas cannot change until the restore is done');
    const byScale = kubectl(['scale', 'etcdcluster', 'stalled', '-n', ns, '--replicas=1']);
    expect(byScale.code).not.toBe(0);
    expect(byScale.stderr).toContain('replicas cannot change until the restore is done');
    expect(get('etcdcluster', 'stalled').spec.replicas).toBe(3);
    // Other fields still change.
    kubectlOk(['label', 'etcdcluster', 'stalled', '-n', ns, 'team=a']);
    const resources = { resources: { requests: { cpu: '100m', memory: '128Mi' } } };
    kubectlOk(['patch', 'etcdcluster', 'stalled', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: resources })]);
    kubectlOk(['delete', 'etcdcluster', 'stalled', '-n', ns]);
  });

  testWithNodes('once Restored, spec.replicas changes as for any cluster', async () => {
    await eventually('seeded: Restored=True', () =>
      conditionOf('seeded', 'Restored')?.status === 'True' ? true : undefined,
    );
    kubectlOk(['patch', 'etcdcluster', 'seeded', '-n', ns, '--type=merge', '-p', '{"spec":{"replicas":5}}']);
    expect(get('etcdcluster', 'seeded').spec.replicas).toBe(5);
  });

  testWithNodes('spec.restore cannot be added, changed or removed once the cluster exists, naming the field', () => {
    const patch = (name: string, p: object) =>
      kubectl(['patch', 'etcdcluster', name, '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: p })]);
    for (const r of [
      patch('seeded', { restore: { path: 'other.db' } }),
      patch('seeded', { restore: null }),
      patch(NAME, { restore: { backup: 'snap-20261129T020000Z.db' } }),
    ]) {
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('spec.restore');
      expect(r.stderr).toContain('cannot be added, changed or removed once the cluster exists');
    }
  });

  testWithNodes(
    'spec.restore from a claim that does not exist: Degraded RestoreFailed saying so, and no member started',
    async () => {
      restoredCluster('unseeded', { claim: 'no-such-claim', path: 'x.db' });
      const degraded = await eventually(
        'Degraded=True RestoreFailed',
        () =>
          conditionOf('unseeded', 'Degraded')?.reason === 'RestoreFailed'
            ? conditionOf('unseeded', 'Degraded')
            : undefined,
        90_000,
      );
      expect(degraded.message).toContain('PVC no-such-claim does not exist in this namespace');
      expect(get('etcdcluster', 'unseeded').status.phase).toBe('Failed');
      expect(get('statefulset', 'unseeded')).toBeUndefined();
      const warnings = getJson([
        'get',
        'events',
        '-n',
        ns,
        '--field-selector',
        'involvedObject.name=unseeded,type=Warning',
      ]);
      expect(warnings.items.map((e: any) => e.reason)).toContain('RestoreFailed');
      kubectlOk(['delete', 'etcdcluster', 'unseeded', 'seeded', '-n', ns]);
    },
  );

  test('deleting the EtcdCluster removes its workloads but keeps every PVC', async () => {
    kubectlOk(['delete', 'etcdcluster', NAME, '-n', ns]);
    await eventually('the StatefulSet to be collected', () => (get('statefulset', NAME) ? undefined : true), 90_000);
    await eventually(
      'the Services and PDB to be collected',
      () =>
        get('service', NAME) || get('service', `${NAME}-client`) || get('poddisruptionbudget', NAME) ? undefined : true,
      90_000,
    );
    // The members' claims are kept (a member removed by scaling down takes its claim with it: see etcd-membership.test.ts).
    expect(pvcNames().filter((n: string) => n.includes(NAME))).toEqual([0, 1, 2].map((i) => `data-${NAME}-${i}`));
  });
});
