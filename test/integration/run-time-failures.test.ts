/**
 * What only run time can tell becomes `Degraded` with a Warning Event, for every kit kind whose
 * children run pods (Memcached has its own test): pods whose containers cannot run, and an
 * Ingress host and path that an older Ingress already routes.
 */
import { eventually, getJson, kubectl, kubectlOk, testWithNodes } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';
import { CRASH_LOOP_LABEL, IMAGE_PULL_FAILURE_LABEL } from '../../testing/control-plane';
import {
  applyUnprovisionedStorageClass,
  expectTracedReady,
  runTrace,
  UNPROVISIONED_STORAGE_CLASS,
} from '../support/trace';

jest.setTimeout(240_000);

// The three operators start together (each in a namespace of its own); the webapp one serves
// both the pod and the Ingress tests.
let etcd: Promise<OperatorUnderTest>;
let database: Promise<OperatorUnderTest>;
let webapp: Promise<OperatorUnderTest>;
beforeAll(() => {
  etcd = startOperatorUnderTest({
    operator: 'etcd',
    controllers: 'etcdcluster',
    crds: ['etcdclusters.etcd.database.coreos.com'],
  });
  database = startOperatorUnderTest({
    operator: 'database',
    controllers: 'database',
    crds: ['databases.database.example.com'],
  });
  webapp = startOperatorUnderTest({
    operator: 'webapp',
    controllers: 'application,webapp',
    crds: ['applications.app.aiops.org', 'webapps.apps.example.com'],
  });
});
afterAll(async () => {
  for (const o of await Promise.all([etcd, database, webapp])) expect((await o.reconciler.stop()).code).toBe(0);
});

function degraded(o: OperatorUnderTest, kind: string, name: string): any {
  return o.get(kind, name)?.status?.conditions?.find((c: any) => c.type === 'Degraded');
}

function warnings(ns: string, kind: string, name: string, reason: string): any[] {
  return getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
    (e: any) => e.regarding?.name === name && e.regarding?.kind === kind && e.type === 'Warning' && e.reason === reason,
  );
}

/** How a test makes a workload's pods fail: a kwok stage's label, and what the status then says. */
interface PodFailureMode {
  readonly label: string;
  readonly message: RegExp;
}

/** A container that keeps exiting (or, before Kubernetes 1.30, a failed StatefulSet member recreated). */
const CRASH_LOOP: PodFailureMode = { label: CRASH_LOOP_LABEL, message: /exited with code 1|recreating failed Pod/ };

/** An image the kubelet cannot pull. */
const IMAGE_PULL: PodFailureMode = {
  label: IMAGE_PULL_FAILURE_LABEL,
  message: /waiting: (ErrImagePull|ImagePullBackOff)/,
};

/**
 * Another manager adds a failure label to the workload's pod template (not ours to revert), so its
 * new pods fail as a kubelet shows it — by default a crash loop (Running, never Ready,
 * CrashLoopBackOff); the resource must say so, then recover once the label goes. (kwok's own chaos
 * label made the pod Failed instead, which a StatefulSet replaces at once: the failure was there
 * only for a moment.)
 */
async function failingPods(
  o: OperatorUnderTest,
  kind: string,
  resourceKind: string,
  name: string,
  workload: string,
  mode: PodFailureMode = CRASH_LOOP,
  /** What the test checks while the pods fail, before the label goes. */
  whileFailing?: () => void,
): Promise<void> {
  const patch = { spec: { template: { metadata: { labels: { [mode.label]: 'true' } } } } };
  kubectlOk(['patch', workload, name, '-n', o.ns, '--type=merge', '-p', JSON.stringify(patch)]);
  // The crash-looping pod (PodFailing), or — before Kubernetes 1.30, for a pod that became Failed —
  // the StatefulSet controller's Warning that it recreates it.
  const d = await eventually(
    `${kind} ${name}: Degraded=True PodFailing or RecreatingFailedPod`,
    () => {
      const c = degraded(o, kind, name);
      return c?.status === 'True' && ['PodFailing', 'RecreatingFailedPod'].includes(c.reason) ? c : undefined;
    },
    90_000,
  );
  expect(d.message).toMatch(mode.message);
  await eventually(`a Warning Event ${d.reason}`, () =>
    warnings(o.ns, resourceKind, name, d.reason).length ? true : undefined,
  );
  // While the pods keep failing it stays so (it once came and went with each replacement).
  expect(degraded(o, kind, name)).toMatchObject({ status: 'True', reason: d.reason });
  whileFailing?.();
  kubectlOk([
    'patch',
    workload,
    name,
    '-n',
    o.ns,
    '--type=json',
    '-p',
    JSON.stringify([{ op: 'remove', path: `/spec/template/metadata/labels/${mode.label.replace(/\//g, '~1')}` }]),
  ]);
  // A StatefulSet of OrderedReady pods waits for its broken pod to be Ready before it rolls it,
  // forever (Kubernetes' documented "forced rollback" deletes it by hand): the operator deletes
  // it, and says so. (Parallel pods are rolled whatever their health.)
  const orderedReady =
    workload === 'statefulset' && getJson(['get', workload, name, '-n', o.ns]).spec.podManagementPolicy !== 'Parallel';
  await eventually(
    `${kind} ${name}: Degraded=False again`,
    () => (degraded(o, kind, name)?.status === 'False' ? true : undefined),
    90_000,
  );
  if (orderedReady) {
    const [event] = getJson(['get', 'events.events.k8s.io', '-n', o.ns]).items.filter(
      (e: any) => e.regarding?.name === name && e.reason === 'StuckPodReplaced',
    );
    expect(event?.type).toBe('Normal');
    expect(event?.note).toMatch(new RegExp(`^Deleted pod ${name}-0, stuck on revision ${name}-[a-z0-9]+ \\(`));
  }
}

/** An Application that serves, then whose new pods fail as `mode` makes them (see failingPods). */
async function servingApplicationThatFails(name: string, mode: PodFailureMode): Promise<void> {
  const o = await webapp;
  kubectlOk(['apply', '-n', o.ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'app.aiops.org/v1',
      kind: 'Application',
      metadata: { name },
      spec: { image: 'nginx:1.27' },
    }),
  });
  await eventually(
    'available',
    () => (o.get('application', name)?.status?.availableReplicas === 1 ? true : undefined),
    90_000,
  );
  await failingPods(o, 'application', 'Application', name, 'deployment', mode);
}

describe('pods that cannot run', () => {
  testWithNodes('an EtcdCluster whose member cannot run is Degraded PodFailing, with a Warning Event', async () => {
    const o = await etcd;
    kubectlOk(['apply', '-n', o.ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'etcd.database.coreos.com/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: 'kv' },
        spec: { replicas: 1 },
      }),
    });
    await eventually('its StatefulSet', () => o.get('statefulset', 'kv'), 60_000);
    await failingPods(o, 'etcdcluster', 'EtcdCluster', 'kv', 'statefulset');
  });

  testWithNodes('a Database whose server cannot run is Degraded PodFailing, with a Warning Event', async () => {
    const o = await database;
    kubectlOk(['apply', '-n', o.ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: 'db' },
        spec: { type: 'postgresql', version: '16', storage: { size: '1Gi' } },
      }),
    });
    await eventually('ready', () => (o.get('database', 'db')?.status?.readyReplicas === 1 ? true : undefined), 90_000);
    await eventually('Available', () =>
      o.get('database', 'db')?.status?.conditions?.some((c: any) => c.type === 'Available' && c.status === 'True')
        ? true
        : undefined,
    );
    // trace: the Database, its children, its server's pod and the claim the pod mounts, all as asked.
    expectTracedReady(runTrace('database/db', o.ns), [
      'Database/db',
      'ConfigMap/db-config',
      'Service/db',
      'StatefulSet/db',
      'Pod/db-0',
      'PersistentVolumeClaim/data-db-0',
    ]);
    await failingPods(o, 'database', 'Database', 'db', 'statefulset', CRASH_LOOP, () => {
      // trace while the server crash-loops: the pod named as the reason, as the status says.
      const broken = runTrace('database/db', o.ns, ['-o', 'wide']);
      process.stdout.write(
        `[trace] a Database whose server crash-loops (-o wide), exit ${broken.code}:\n${broken.stdout}`,
      );
      expect(broken.code).toBe(1);
      expect(broken.rows.find((r) => r.object === 'Database/db')).toMatchObject({
        ready: 'Failed',
        reason: 'PodFailing',
      });
      expect(broken.rows.find((r) => r.object === 'StatefulSet/db')).toMatchObject({ ready: 'InProgress' });
      const pod = broken.rows.find((r) => r.object === 'Pod/db-0');
      expect(pod).toMatchObject({ ready: 'Failed', reason: 'PodFailing' });
      // -o wide: the pod's node, then the message whole.
      expect(pod?.message).toMatch(/^kwok-node-\d+ +pod db-0: container postgresql exited with code 1/);
      const json = JSON.parse(runTrace('database/db', o.ns, ['-o', 'json']).stdout);
      expect(json.ready).toBe(false);
      const sts = json.resource.children.find((c: any) => c.kind === 'StatefulSet');
      expect(sts.children[0]).toMatchObject({ kind: 'Pod', name: 'db-0', readiness: 'Failed', reason: 'PodFailing' });
      expect(runTrace('database/db', o.ns, ['-o', 'dot']).stdout).toMatch(/"Pod\/db-0" \[label=.*color=red\];/);
    });
    expect(runTrace('database/db', o.ns).code).toBe(0);
  });

  testWithNodes(
    'a Database whose volume is not provisioned yet: trace says what it waits for, and nothing failed',
    async () => {
      const o = await database;
      applyUnprovisionedStorageClass();
      kubectlOk(['apply', '-n', o.ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'database.example.com/v1alpha1',
          kind: 'Database',
          metadata: { name: 'waiting' },
          spec: {
            type: 'postgresql',
            version: '16',
            storage: { size: '1Gi', storageClassName: UNPROVISIONED_STORAGE_CLASS },
          },
        }),
      });
      try {
        await eventually('its pod', () => o.get('pod', 'waiting-0'), 60_000);
        // The reconciler's own verdict, not a status it has yet to write.
        await eventually('its status', () =>
          o.get('database', 'waiting')?.status?.observedGeneration === 1 ? true : undefined,
        );
        const waiting = runTrace('database/waiting', o.ns);
        process.stdout.write(
          `[trace] a Database whose claim is not provisioned, exit ${waiting.code}:\n${waiting.stdout}`,
        );
        expect(waiting.code).toBe(1);
        const row = (object: string) => waiting.rows.find((r) => r.object === object);
        // Its own verdict is its Ready condition's, as kstatus reads it.
        const ready = o.get('database', 'waiting').status.conditions.find((c: any) => c.type === 'Ready');
        expect(ready).toMatchObject({ status: 'False' });
        expect(row('Database/waiting')).toMatchObject({ ready: 'InProgress', reason: ready.reason });
        expect(row('StatefulSet/waiting')).toMatchObject({ ready: 'InProgress', reason: 'WaitingForPods' });
        expect(row('Pod/waiting-0')).toMatchObject({ ready: 'InProgress', reason: 'WaitingForPods' });
        expect(row('PersistentVolumeClaim/data-waiting-0')).toMatchObject({
          ready: 'InProgress',
          reason: 'ClaimPending',
        });
        expect(waiting.rows.filter((r) => r.ready === 'Failed')).toEqual([]);
      } finally {
        kubectlOk(['delete', 'database', 'waiting', '-n', o.ns, '--wait=false']);
        kubectl(['delete', 'pvc', 'data-waiting-0', '-n', o.ns, '--wait=false']);
      }
    },
  );

  testWithNodes('an Application whose pods cannot run is Degraded PodFailing, with a Warning Event', async () => {
    await servingApplicationThatFails('web', CRASH_LOOP);
  });

  testWithNodes(
    'an Application whose image cannot be pulled is Degraded PodFailing, saying so, with a Warning Event',
    async () => {
      await servingApplicationThatFails('unpullable', IMAGE_PULL);
    },
  );
});

describe('an Ingress host and path another resource already has', () => {
  test('the second Application to claim it is Degraded HostConflict naming the first; the first is not', async () => {
    const o = await webapp;
    const app = (name: string) => ({
      apiVersion: 'app.aiops.org/v1',
      kind: 'Application',
      metadata: { name },
      spec: { image: 'nginx:1.27', ingress: { host: 'shop.example.com' } },
    });
    kubectlOk(['apply', '-n', o.ns, '-f', '-'], { input: JSON.stringify(app('first')) });
    await eventually('the first Ingress', () => o.get('ingress', 'first'));
    kubectlOk(['apply', '-n', o.ns, '-f', '-'], { input: JSON.stringify(app('second')) });
    const d = await eventually('Degraded=True HostConflict', () => {
      const c = degraded(o, 'application', 'second');
      return c?.status === 'True' && c.reason === 'HostConflict' ? c : undefined;
    });
    expect(d.message).toContain(`Ingress ${o.ns}/first`);
    expect(d.message).toContain('shop.example.com');
    await eventually('one Warning Event', () =>
      warnings(o.ns, 'Application', 'second', 'HostConflict').length === 1 ? true : undefined,
    );
    await eventually('the first settled', () =>
      degraded(o, 'application', 'first')?.status === 'False' ? true : undefined,
    );
    expect(degraded(o, 'application', 'first').status).toBe('False');
  });
});
