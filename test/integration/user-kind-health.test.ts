/**
 * A user's kind as well served as the kit's own: a KeyValueStore (examples/key-value-store) —
 * a StatefulSet with volumes, a seed Job, a gateway Deployment — written with
 * `constructController` and no status code, reconciled as its own ServiceAccount. What its
 * children cannot do becomes `Degraded=True` naming the child and the reason, with one Warning;
 * `Available` only when every child is ready; the gateway is made only once the seed Job has
 * completed.
 */
import { keyValueStoreApp } from '../../examples/key-value-store/app';
import { CRASH_LOOP_LABEL, IMAGE_PULL_FAILURE_LABEL } from '../../testing/control-plane';
import { eventually, getJson, getJsonIfExists, kubectl, kubectlOk, testWithNodes } from '../support/kube';
import * as path from 'node:path';
import { controllersModule, runCommand } from '../support/controllers-module';
import { startExampleOperator } from '../support/example-operator';
import type { ReconcilerProcess } from '../support/reconciler';
import {
  applyUnprovisionedStorageClass,
  expectTracedReady,
  runTrace,
  UNPROVISIONED_STORAGE_CLASS,
} from '../support/trace';

const ROOT = path.resolve(__dirname, '..', '..');

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let objects: any[];
const get = (kind: string, name: string) => getJsonIfExists(['get', kind, name, '-n', ns]);
const condition = (name: string, type: string) =>
  get('keyvaluestore', name)?.status?.conditions?.find((c: any) => c.type === type);

beforeAll(async () => {
  ({ ns, reconciler, objects } = await startExampleOperator({
    example: 'key-value-store',
    app: keyValueStoreApp,
    crd: 'keyvaluestores.kv.example.com',
    controller: 'keyvaluestore',
  }));
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

function store(name: string, spec: object = {}): void {
  kubectlOk(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'kv.example.com/v1alpha1', kind: 'KeyValueStore', metadata: { name }, spec }),
  });
}

/** The Warning Events about a store with this reason. */
function warnings(name: string, reason: string): any[] {
  return getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
    (e: any) =>
      e.regarding?.kind === 'KeyValueStore' &&
      e.regarding?.name === name &&
      e.type === 'Warning' &&
      e.reason === reason,
  );
}

/** Waits for `Degraded=True` with this reason, and for its one Warning; returns the condition. */
async function degradedWithOneWarning(name: string, reason: string): Promise<any> {
  const degraded = await eventually(
    `${name}: Degraded=True ${reason}`,
    () => {
      const d = condition(name, 'Degraded');
      if (d?.status === 'True' && d.reason === reason) return d;
      // What it says instead, for the timeout's message.
      throw new Error(`its conditions: ${JSON.stringify(get('keyvaluestore', name)?.status?.conditions)}`);
    },
    90_000,
  );
  await eventually(`${name}: a Warning ${reason}`, () => (warnings(name, reason).length > 0 ? true : undefined));
  expect(warnings(name, reason)).toHaveLength(1);
  expect(condition(name, 'Available')?.status).toBe('False');
  return degraded;
}

async function availableAgain(name: string): Promise<void> {
  await eventually(
    `${name}: Available=True, Degraded=False`,
    () =>
      condition(name, 'Available')?.status === 'True' && condition(name, 'Degraded')?.status === 'False'
        ? true
        : undefined,
    90_000,
  );
}

/** The example's controller as a module of the user's (for diff, plan and trace), written once. */
let exampleModule: string | undefined;
function keyValueStoreModule(): string {
  const example = JSON.stringify(path.join(ROOT, 'examples', 'key-value-store', 'key-value-store'));
  exampleModule ??= controllersModule(
    `import { keyValueStoreController } from ${example};\nexport const controllers = [keyValueStoreController];\n`,
  );
  return exampleModule;
}

/** Another manager puts a kwok failure label on a workload's pod template (not ours to revert), then takes it off. */
function labelPods(kind: string, name: string, label: string, on: boolean): void {
  const patch = on
    ? { type: 'merge', body: { spec: { template: { metadata: { labels: { [label]: 'true' } } } } } }
    : {
        type: 'json',
        body: [{ op: 'remove', path: `/spec/template/metadata/labels/${label.replace(/\//g, '~1')}` }],
      };
  kubectlOk(['patch', kind, name, '-n', ns, `--type=${patch.type}`, '-p', JSON.stringify(patch.body)]);
}

describe('a KeyValueStore, through constructController with no status code', () => {
  test('its RBAC reads the pods of the workloads it makes, though its construct declares no reads, and may delete one its StatefulSet is stuck behind', () => {
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'key-value-store-manager-role');
    const reads = role.rules.find((r: any) => r.apiGroups.includes('') && r.resources.includes('pods'));
    // delete: a pod of an older revision its OrderedReady StatefulSet waits for forever (stuck-rollouts.ts).
    expect(reads.verbs).toEqual(['get', 'list', 'watch', 'delete']);
  });

  testWithNodes(
    'the gateway waits for the seed Job: held (and said so) while its pod cannot be made, made only once the Job completed',
    async () => {
      // Room for Redis's pod only: the seed Job's pod is refused.
      kubectlOk(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'one-pod' },
          spec: { hard: { pods: '1' } },
        }),
      });
      await eventually('the quota to be counted', () =>
        get('resourcequota', 'one-pod')?.status?.hard ? true : undefined,
      );
      store('starved', { seed: { greeting: 'hello' } });
      try {
        const degraded = await degradedWithOneWarning('starved', 'FailedCreate');
        expect(degraded.message).toMatch(/^Job starved-seed-[0-9a-f]{8}: .*exceeded quota: one-pod/);
        const progressing = condition('starved', 'Progressing');
        expect(progressing).toMatchObject({ status: 'True', reason: 'Waiting' });
        expect(progressing.message).toMatch(/^Deployment starved-gateway \(waits for Job starved-seed-[0-9a-f]{8} /);
        expect(get('deployment', 'starved-gateway')).toBeUndefined();
      } finally {
        // The other stores need their pods: the quota goes whatever happened above.
        kubectlOk(['delete', 'resourcequota', 'one-pod', '-n', ns]);
      }
      await availableAgain('starved');
      const [job] = getJson(['get', 'jobs', '-n', ns, '-l', 'app.kubernetes.io/instance=starved']).items;
      const gateway = get('deployment', 'starved-gateway');
      expect(Date.parse(gateway.metadata.creationTimestamp)).toBeGreaterThanOrEqual(
        Date.parse(job.status.completionTime),
      );
      expect(condition('starved', 'Progressing')).toMatchObject({ status: 'False', reason: 'Complete' });
    },
  );

  testWithNodes(
    'a crash-looping Redis pod: Degraded PodFailing naming the StatefulSet and the exit; it clears',
    async () => {
      store('crashing');
      await availableAgain('crashing');
      // trace of the user's kind (cdk8s-plus objects): every object it made, its pods and claims, as asked.
      expectTracedReady(runTrace('keyvaluestore/crashing', ns, ['--controllers', keyValueStoreModule()]), [
        'KeyValueStore/crashing',
        'StatefulSet/crashing',
        'Pod/crashing-0',
        'PersistentVolumeClaim/data-crashing-0',
        'Deployment/crashing-gateway',
      ]);
      labelPods('statefulset', 'crashing', CRASH_LOOP_LABEL, true);
      const degraded = await degradedWithOneWarning('crashing', 'PodFailing');
      expect(degraded.message).toMatch(/^StatefulSet crashing: pod crashing-0: container redis exited with code 1/);
      const broken = runTrace('keyvaluestore/crashing', ns, ['--controllers', keyValueStoreModule()]);
      expect(broken.code).toBe(1);
      expect(broken.rows.find((r) => r.object === 'KeyValueStore/crashing')).toMatchObject({
        ready: 'Failed',
        reason: 'PodFailing',
      });
      expect(broken.rows.find((r) => r.object === 'Pod/crashing-0')).toMatchObject({
        ready: 'Failed',
        reason: 'PodFailing',
        message: expect.stringMatching(/^pod crashing-0: container redis exited with code 1/),
      });
      labelPods('statefulset', 'crashing', CRASH_LOOP_LABEL, false);
      // A StatefulSet waits for its broken pod to be Ready before it rolls it: deleted by hand.
      kubectl(['delete', 'pods', '-n', ns, '-l', `${CRASH_LOOP_LABEL}=true`, '--wait=false']);
      await availableAgain('crashing');
    },
  );

  testWithNodes(
    "the gateway's image cannot be pulled while its old pod still serves: Degraded PodFailing naming the Deployment",
    async () => {
      store('unpullable');
      await availableAgain('unpullable');
      labelPods('deployment', 'unpullable-gateway', IMAGE_PULL_FAILURE_LABEL, true);
      const degraded = await degradedWithOneWarning('unpullable', 'PodFailing');
      expect(degraded.message).toMatch(
        /^Deployment unpullable-gateway: pod unpullable-gateway-[a-z0-9]+-[a-z0-9]+: container webdis is waiting: (ErrImagePull|ImagePullBackOff)/,
      );
      labelPods('deployment', 'unpullable-gateway', IMAGE_PULL_FAILURE_LABEL, false);
      await availableAgain('unpullable');
    },
  );

  testWithNodes(
    'pods no node takes: Degraded PodUnschedulable naming the StatefulSet; what waits on it is held as it is',
    async () => {
      store('nowhere');
      await availableAgain('nowhere');
      const gateway = get('deployment', 'nowhere-gateway');
      // Its volume is bound already: the new pod waits for a node, not for a claim.
      store('nowhere', { nodeSelector: { 'example.com/disk': 'none' } });
      const degraded = await degradedWithOneWarning('nowhere', 'PodUnschedulable');
      expect(degraded.message).toMatch(
        /^StatefulSet nowhere: pod nowhere-0 cannot be scheduled: .*node affinity\/selector/,
      );
      // The seed Job for the new spec is not made, and the gateway keeps its old template.
      const waits = /Deployment nowhere-gateway \(waits for Job (nowhere-seed-[0-9a-f]{8}) \(not made yet\)\)/.exec(
        condition('nowhere', 'Progressing')?.message ?? '',
      );
      expect(waits).not.toBeNull();
      expect(get('job', waits![1]!)).toBeUndefined();
      const after = get('deployment', 'nowhere-gateway');
      expect(after.metadata.generation).toBe(gateway.metadata.generation);
      expect(after.spec.template.spec.nodeSelector).toBeUndefined();

      // diff and plan say the same as the reconciler does: held, and why.
      const module = keyValueStoreModule();
      const diff = runCommand(['diff', 'keyvaluestore/nowhere', '-n', ns, '--controllers', module]);
      expect({ code: diff.status, stderr: diff.stderr }).toEqual({ code: 1, stderr: '' });
      expect(diff.stdout).toContain(
        `held      Deployment ${ns}/nowhere-gateway (waits for Job ${waits![1]} (not made yet))`,
      );
      expect(diff.stdout).toMatch(new RegExp(`held {6}Job ${ns}/${waits![1]} \\(waits for StatefulSet nowhere \\(`));
      const plan = runCommand(['plan', '--kind', 'KeyValueStore', '-n', ns, '-o', 'json', '--controllers', module]);
      expect(JSON.parse(plan.stdout).children.held).toBeGreaterThanOrEqual(2);
    },
  );

  testWithNodes('a claim not provisioned yet: trace says what waits for it, and nothing failed', async () => {
    applyUnprovisionedStorageClass();
    store('pending', { storage: { storageClassName: UNPROVISIONED_STORAGE_CLASS } });
    await eventually('its pod', () => get('pod', 'pending-0'), 60_000);
    // The reconciler's own verdict, not a status it has yet to write.
    await eventually('its status', () =>
      get('keyvaluestore', 'pending')?.status?.observedGeneration === 1 ? true : undefined,
    );
    const waiting = runTrace('keyvaluestore/pending', ns, ['--controllers', keyValueStoreModule()]);
    expect(waiting.code).toBe(1);
    const row = (object: string) => waiting.rows.find((r) => r.object === object);
    expect(row('KeyValueStore/pending')).toMatchObject({ ready: 'InProgress' });
    expect(row('StatefulSet/pending')).toMatchObject({ ready: 'InProgress', reason: 'WaitingForPods' });
    expect(row('Pod/pending-0')).toMatchObject({ ready: 'InProgress', reason: 'WaitingForPods' });
    expect(row('PersistentVolumeClaim/data-pending-0')).toMatchObject({ ready: 'InProgress', reason: 'ClaimPending' });
    expect(waiting.rows.filter((r) => r.ready === 'Failed')).toEqual([]);
  });

  testWithNodes('a claim no volume can be provisioned for: Degraded ProvisioningFailed naming the claim', async () => {
    store('classless', { storage: { storageClassName: 'no-such-class' } });
    const degraded = await degradedWithOneWarning('classless', 'ProvisioningFailed');
    expect(degraded.message).toBe(
      'PersistentVolumeClaim data-classless-0: storageclass.storage.k8s.io "no-such-class" not found',
    );
    // Its claim is kept as it is: user data is never pruned.
    expect(get('persistentvolumeclaim', 'data-classless-0')?.status?.phase).toBe('Pending');
  });
});
