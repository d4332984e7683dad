import { liveResource } from '../../../command/diff';
import { ClusterCrds } from '../../../command/served-version';
import { traceDot, traceOf, traceTable } from '../../../command/trace';
import { KIT_CONTROLLERS } from '../../../constructs/kit-controllers';
import type { CustomResourceObject, KubeObject } from '../../../constructs/contract';

const NS = 'shop';

function owned(
  kind: string,
  apiVersion: string,
  name: string,
  owner: { kind: string; name: string; uid: string },
  rest: object = {},
): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${kind}-${name}`,
      ownerReferences: [{ apiVersion: 'x/v1', kind: owner.kind, name: owner.name, uid: owner.uid, controller: true }],
    },
    ...rest,
  };
}

const store: CustomResourceObject = {
  apiVersion: 'kv.example.com/v1alpha1',
  kind: 'KeyValueStore',
  metadata: { name: 'orders', namespace: NS, uid: 'uid-store', generation: 2 },
  spec: {},
  status: {
    observedGeneration: 2,
    conditions: [
      { type: 'Available', status: 'False', reason: 'PodFailing', message: 'StatefulSet orders: pod orders-0 fails' },
      {
        type: 'Degraded',
        status: 'True',
        reason: 'PodFailing',
        message: 'StatefulSet orders: pod orders-0: container redis is waiting: CrashLoopBackOff',
      },
    ],
  },
};
const owner = { kind: 'KeyValueStore', name: 'orders', uid: 'uid-store' };

const statefulSet = owned('StatefulSet', 'apps/v1', 'orders', owner, {
  metadata: {
    name: 'orders',
    namespace: NS,
    uid: 'uid-sts',
    generation: 1,
    ownerReferences: [
      { apiVersion: 'x/v1', kind: 'KeyValueStore', name: 'orders', uid: 'uid-store', controller: true },
    ],
  },
  spec: { replicas: 1 },
  status: { observedGeneration: 1, replicas: 1, readyReplicas: 0 },
});
const crashingPod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'orders-0',
    namespace: NS,
    uid: 'uid-pod',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'orders', uid: 'uid-sts', controller: true }],
  },
  spec: {
    nodeName: 'node-a',
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-orders-0' } },
      { name: 'cache', persistentVolumeClaim: { claimName: 'gone' } },
    ],
  },
  status: {
    phase: 'Running',
    containerStatuses: [
      {
        name: 'redis',
        state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
        lastState: { terminated: { exitCode: 1 } },
      },
    ],
  },
};
const dataClaim: KubeObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data-orders-0', namespace: NS, uid: 'uid-claim' },
  status: { phase: 'Bound' },
};
const service = owned('Service', 'v1', 'orders', owner, { spec: { type: 'ClusterIP' } });
const gateway = owned('Deployment', 'apps/v1', 'orders-gateway', owner, {
  spec: { replicas: 1 },
  status: { replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
});
// Not the store's: the same name in the namespace, controlled by someone else.
const foreign = owned('ConfigMap', 'v1', 'orders-config', { kind: 'Other', name: 'x', uid: 'uid-other' });

describe('trace', () => {
  const trace = traceOf(store, [statefulSet, crashingPod, dataClaim, service, gateway, foreign]);

  test('the resource, what it controls, the pods of its workloads and the claims they mount — never an object it does not control', () => {
    const names = (n: { kind: string; name: string; children: readonly any[] }): unknown => [
      `${n.kind}/${n.name}`,
      n.children.map(names),
    ];
    expect(names(trace.resource)).toEqual([
      'KeyValueStore/orders',
      [
        ['Deployment/orders-gateway', []],
        ['Service/orders', []],
        [
          'StatefulSet/orders',
          [
            [
              'Pod/orders-0',
              [
                ['PersistentVolumeClaim/data-orders-0', []],
                ['PersistentVolumeClaim/gone', []],
              ],
            ],
          ],
        ],
      ],
    ]);
  });

  test("each verdict is the runtime's rule: the crash loop named on the pod, the claim that is not there, the resource's by its conditions", () => {
    expect(trace.ready).toBe(false);
    expect(trace.resource).toMatchObject({ readiness: 'Failed', reason: 'PodFailing' });
    const [, svc, sts] = trace.resource.children;
    expect(svc).toMatchObject({ readiness: 'Current' });
    expect(sts).toMatchObject({ readiness: 'InProgress', reason: 'WaitingForPods', message: '0/1 pods ready' });
    const pod = sts!.children[0]!;
    expect(pod).toMatchObject({
      readiness: 'Failed',
      reason: 'PodFailing',
      node: 'node-a',
      message: 'pod orders-0: container redis exited with code 1 and is waiting: CrashLoopBackOff: back-off 10s',
    });
    expect(pod.children.map((c) => [c.name, c.readiness, c.reason])).toEqual([
      ['data-orders-0', 'Current', 'Current'],
      ['gone', 'InProgress', 'NotFound'],
    ]);
  });

  test('a status ahead of the cluster: Ready by its conditions while a child is not is not ready, and says why', () => {
    const saysReady = {
      ...store,
      status: {
        observedGeneration: 2,
        conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'all good' }],
      },
    };
    const ahead = traceOf(saysReady, [statefulSet, crashingPod, dataClaim]);
    expect(ahead.resource.readiness).toBe('Current');
    expect(ahead.ready).toBe(false);
    expect(ahead.note).toBe('its status says it is ready, but StatefulSet orders is not: 0/1 pods ready');
    expect(traceTable(ahead, false)).toContain('Not ready: its status says it is ready, but StatefulSet orders');
    const settled = traceOf(saysReady, [service]);
    expect(settled).toEqual({ ready: true, resource: expect.objectContaining({ readiness: 'Current' }) });
  });

  test('a status of an older generation is not ready, whatever it says', () => {
    const stale = {
      ...store,
      metadata: { ...store.metadata, generation: 3 },
      status: { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] },
    };
    expect(traceOf(stale, [service])).toMatchObject({
      ready: false,
      resource: { readiness: 'InProgress', reason: 'RolloutPending' },
    });
  });

  test('the table draws the tree and cuts long messages; wide adds the node and prints them whole', () => {
    const table = traceTable(trace, false).split('\n');
    expect(table[0]).toMatch(/^NAME +READY +REASON +MESSAGE$/);
    expect(table[1]).toMatch(
      /^KeyValueStore\/orders +Failed +PodFailing +StatefulSet orders: pod orders-0: container redis is waiting: CrashLoopBackOff$/,
    );
    expect(table).toContainEqual(
      expect.stringMatching(/^├─ Deployment\/orders-gateway +Current +Current +1 pod\(s\) updated and available$/),
    );
    expect(table).toContainEqual(expect.stringMatching(/^└─ StatefulSet\/orders +InProgress/));
    // 80 characters at most, the last an ellipsis.
    expect(table).toContainEqual(
      expect.stringMatching(
        /^ {3}└─ Pod\/orders-0 +Failed +PodFailing +pod orders-0: container redis exited with code 1 and is waiting: CrashLoopBackO…$/,
      ),
    );
    expect(table).toContainEqual(expect.stringMatching(/^ {6}├─ PersistentVolumeClaim\/data-orders-0 +Current/));
    const wide = traceTable(trace, true).split('\n');
    expect(wide[0]).toMatch(/^NAME +READY +REASON +NODE +MESSAGE$/);
    expect(wide).toContainEqual(
      expect.stringMatching(
        /^ {3}└─ Pod\/orders-0 +Failed +PodFailing +node-a +pod orders-0: container redis exited with code 1 and is waiting: CrashLoopBackOff: back-off 10s$/,
      ),
    );
  });

  test('dot: a node per object coloured by its verdict, an edge to each it controls, runs or mounts', () => {
    const dot = traceDot(trace);
    expect(dot).toMatch(/^digraph trace \{/);
    expect(dot).toContain('"Pod/orders-0" [label="Pod/orders-0\\nFailed: PodFailing", color=red];');
    expect(dot).toContain('"StatefulSet/orders" -> "Pod/orders-0";');
    expect(dot).toContain('"Pod/orders-0" -> "PersistentVolumeClaim/data-orders-0";');
    expect(dot).not.toContain('orders-config');
  });
});

describe('a kind the controllers do not reconcile', () => {
  test("is refused naming the kinds they do, and how to name a module of the user's own (a scaffolded project's first trace)", async () => {
    // Refused before the cluster is asked anything.
    const never = new ClusterCrds(undefined as never);
    await expect(liveResource(never, KIT_CONTROLLERS, 'website/broken', 'default')).rejects.toThrow(
      /^website\/broken: give <kind>\/<name> of a kind these controllers reconcile \(memcached, .*\); for a kind of your own, name the module that exports its controller: --controllers controllers\.ts$/,
    );
  });
});
