/**
 * The product owner's seed samples (dist/samples/), applied verbatim on the real node with the
 * operators `kubectl apply -f dist/` installs running as Pods: each must do for real what its kind
 * promises, not only what kwok reports.
 */
import * as path from 'node:path';
import { createTestNamespace, eventually, getJson, kubectl, kubectlOk } from '../support/kube';
import { commandInPod, runCronJobNow } from '../support/pod-script';

const ROOT = path.resolve(__dirname, '..', '..');
const skip = process.env.OPKIT_E2E_SKIP;

// Under load an etcd upgrade, one member at a time, takes minutes; each wait below is shorter.
jest.setTimeout(420_000);

if (skip) test.todo(`the seed samples on a real node — skipped: ${skip}`);

(skip ? describe.skip : describe)('the seed samples on a real node', () => {
  let ns: string;

  beforeAll(() => {
    // Idempotent: every operator of dist/, as the memcached file before it installs them.
    kubectlOk(['apply', '--server-side', '-f', path.join(ROOT, 'dist')]);
    ns = createTestNamespace('e2e-seeds');
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  /** etcdctl in a member's container, through the client Service by its name. */
  const etcdctl = (pod: string, ...args: string[]) =>
    kubectlOk(['exec', '-n', ns, pod, '--', 'etcdctl', '--endpoints=http://my-etcd-cluster-client:2379', ...args]);
  /** A merge patch of the sample cluster's spec, as `kubectl patch` makes it. */
  const patchCluster = (spec: object) =>
    kubectlOk(['patch', 'etcdcluster', 'my-etcd-cluster', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec })]);
  /** The cluster settled at n members: every one healthy, Available, no step under way. */
  const settled = (n: number) =>
    eventually(
      `${String(n)} healthy members`,
      () => {
        const c = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
        const members = (c.status?.etcdMembers ?? []) as { healthy: boolean }[];
        const available = c.status?.conditions?.some((x: any) => x.type === 'Available' && x.status === 'True');
        return members.length === n && members.every((m) => m.healthy) && available && !c.status?.step ? c : undefined;
      },
      240_000,
      1000,
    );

  test("CronTab: the seed's sample (busybox, every minute) runs a real Job to completion on the node", async () => {
    kubectlOk(['rollout', 'status', 'deployment/crontab-operator', '-n', 'crontab-system', '--timeout=120s']);
    kubectlOk(['apply', '-n', ns, '-f', path.join(ROOT, 'dist', 'samples', 'crontab-sample.k8s.yaml')]);
    // CronJobs schedule to the minute: the first run starts within a minute of the CronJob.
    const job = await eventually(
      'a Job of the CronTab to complete',
      () =>
        getJson(['get', 'jobs', '-n', ns]).items.find(
          (j: any) =>
            j.metadata.ownerReferences?.some((o: any) => o.kind === 'CronJob' && o.name === 'my-new-cron-object') &&
            j.status?.succeeded >= 1,
        ),
      150_000,
      1000,
    );
    const [pod] = getJson(['get', 'pods', '-n', ns, '-l', `job-name=${job.metadata.name as string}`]).items;
    expect(pod.spec.nodeName).toBe('opkit-node');
    expect(pod.spec.containers[0].image).toBe('busybox');
    // busybox's own command (sh, no script) ran in the container and exited 0.
    expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const crontab = await eventually(
      'the CronTab to record its run',
      () => {
        const ct = getJson(['get', 'ct', 'my-new-cron-object', '-n', ns]);
        return ct.status?.lastScheduleTime ? ct : undefined;
      },
      60_000,
    );
    expect(crontab.status.schedule).toBe('* * * * *');
  });

  test("EtcdCluster: the seed's sample forms one cluster of 3 real etcd members that find each other by cluster DNS", async () => {
    kubectlOk(['rollout', 'status', 'deployment/etcd-operator', '-n', 'etcd-system', '--timeout=120s']);
    kubectlOk(['apply', '-n', ns, '-f', path.join(ROOT, 'dist', 'samples', 'etcd-sample.k8s.yaml')]);
    // Available comes with a quorum; the test waits for every member to report healthy.
    const cluster = await settled(3);
    const members = cluster.status.etcdMembers as { name: string; healthy: boolean; leader: boolean }[];
    expect(members.map((m) => [m.name, m.healthy])).toEqual([
      ['my-etcd-cluster-0', true],
      ['my-etcd-cluster-1', true],
      ['my-etcd-cluster-2', true],
    ]);
    expect(members.filter((m) => m.leader)).toHaveLength(1);
    // etcd itself, from inside a member, through the client Service by its name.
    const health = etcdctl('my-etcd-cluster-0', 'endpoint', 'health', '--cluster');
    expect(health.split('\n').filter((l) => l.includes(' is healthy'))).toHaveLength(3);
    etcdctl('my-etcd-cluster-0', 'put', 'seed', 'kept by the cluster');
    expect(etcdctl('my-etcd-cluster-2', 'get', 'seed', '--print-value-only').trim()).toBe('kept by the cluster');
    // Each member's data on a claim the node's default StorageClass provisioned.
    const claims = getJson(['get', 'pvc', '-n', ns, '-l', 'app.kubernetes.io/instance=my-etcd-cluster']).items;
    expect(claims.map((c: any) => c.status.phase)).toEqual(['Bound', 'Bound', 'Bound']);
    // Ready by etcd's own /readyz and alive by /livez on the plain metrics port: probes the kubelet
    // really ran, no restart.
    // The kubelet probes every 5 s: etcd may call a member healthy a moment before its readiness
    // probe has run.
    const pods = await eventually(
      'the members ready by their probes',
      () => {
        const list = [0, 1, 2].map((i) => getJson(['get', 'pod', `my-etcd-cluster-${i}`, '-n', ns]));
        return list.every((p) => p.status.containerStatuses?.[0]?.ready === true) ? list : undefined;
      },
      60_000,
      1000,
    );
    for (const pod of pods) {
      expect(pod.spec.containers[0].livenessProbe.httpGet).toMatchObject({ path: '/livez', port: 'metrics' });
      expect(pod.status.containerStatuses[0].restartCount).toBe(0);
    }
    // Its NetworkPolicy: the peer port from its members only (this node's network enforces none; see docs/security.md).
    const policy = getJson(['get', 'networkpolicy', 'my-etcd-cluster', '-n', ns]);
    expect(policy.spec.ingress.find((r: any) => r.ports[0].port === 2380).from).toEqual([
      { podSelector: { matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'member' }) } },
    ]);
  });

  test('EtcdCluster: scaled 3 → 5 → 3 through membership, and a deleted member pod replaced, the key kept throughout', async () => {
    kubectlOk(['scale', 'etcdcluster', 'my-etcd-cluster', '-n', ns, '--replicas=5']);
    await settled(5);
    expect(etcdctl('my-etcd-cluster-4', 'member', 'list').trim().split('\n')).toHaveLength(5);
    expect(etcdctl('my-etcd-cluster-4', 'get', 'seed', '--print-value-only').trim()).toBe('kept by the cluster');
    kubectlOk(['scale', 'etcdcluster', 'my-etcd-cluster', '-n', ns, '--replicas=3']);
    await settled(3);
    expect(etcdctl('my-etcd-cluster-0', 'member', 'list').trim().split('\n')).toHaveLength(3);
    // A member's pod lost: the StatefulSet makes it again on its claim, and it rejoins as itself.
    const before = getJson(['get', 'pod', 'my-etcd-cluster-1', '-n', ns]).metadata.uid as string;
    kubectlOk(['delete', 'pod', 'my-etcd-cluster-1', '-n', ns]);
    await eventually(
      'member 1 back',
      () => {
        const pod = getJson(['get', 'pod', 'my-etcd-cluster-1', '-n', ns]);
        const ready = pod.status?.conditions?.some((x: any) => x.type === 'Ready' && x.status === 'True');
        return pod.metadata.uid !== before && ready ? true : undefined;
      },
      120_000,
      1000,
    );
    await settled(3);
    expect(
      etcdctl('my-etcd-cluster-1', 'endpoint', 'health', '--cluster')
        .split('\n')
        .filter((l) => l.includes(' is healthy')),
    ).toHaveLength(3);
    expect(etcdctl('my-etcd-cluster-1', 'get', 'seed', '--print-value-only').trim()).toBe('kept by the cluster');
  });

  test('EtcdCluster: upgraded from 3.5 to 3.6 one member at a time, the key kept', async () => {
    const releases = Object.keys(JSON.parse(process.env.OPKIT_E2E_ETCD_RELEASES ?? '{}') as Record<string, string>);
    const next = releases.find((v) => v.startsWith('3.6.'));
    if (!next) throw new Error(`no etcd 3.6 image on the node (releases: ${releases.join(', ')})`);
    patchCluster({ version: next });
    const upgraded = await eventually(
      `every member on ${next}`,
      () => {
        const c = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]);
        const members = (c.status?.etcdMembers ?? []) as { healthy: boolean; version: string }[];
        return members.length === 3 && members.every((m) => m.healthy && m.version === next) && !c.status?.step
          ? c
          : undefined;
      },
      300_000,
      1000,
    );
    expect(upgraded.status.version).toBe(next);
    const out = kubectlOk([
      'exec',
      '-n',
      ns,
      'my-etcd-cluster-0',
      '--',
      'etcdctl',
      '--endpoints=http://my-etcd-cluster-client:2379',
      'get',
      'seed',
      '--print-value-only',
    ]);
    expect(out.trim()).toBe('kept by the cluster');
  });

  test('EtcdCluster: backups turned on, a Job from the backup CronJob writes a snapshot that etcdutl reads back whole', async () => {
    patchCluster({ backup: { schedule: '0 3 * * *', storage: '1Gi' } });
    await eventually('the backup CronJob', () => getJson(['get', 'cronjob', '-n', ns]).items[0], 120_000, 1000);
    await runCronJobNow(ns, 'my-etcd-cluster-backup', 'snapshot-now');
    const claim = { name: 'my-etcd-cluster-backups', mountPath: '/backups' };
    // The etcd image has no shell: busybox names the snapshot, etcdutl in the etcd image reads it.
    const listed = await commandInPod(ns, { image: 'busybox', command: ['ls', '/backups'], claim });
    const snapshots = listed.split('\n').filter((f) => /^my-etcd-cluster-\d{8}T\d{6}Z\.db$/.test(f));
    expect(snapshots).toHaveLength(1);
    const version = getJson(['get', 'etcdcluster', 'my-etcd-cluster', '-n', ns]).status.version as string;
    const status = await commandInPod(ns, {
      image: `quay.io/coreos/etcd:v${version}`,
      command: ['etcdutl', 'snapshot', 'status', `/backups/${snapshots[0]!}`, '--write-out=json'],
      claim,
    });
    // A whole snapshot: etcdutl opens it as etcd's database (a torn file fails) and counts its keys.
    const summary = JSON.parse(status.trim().split('\n').pop()!) as { revision: number; totalKey: number };
    expect(summary.revision).toBeGreaterThan(0);
    expect(summary.totalKey).toBeGreaterThanOrEqual(1);
  });
});
