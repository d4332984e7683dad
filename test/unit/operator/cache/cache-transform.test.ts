import { cacheTransform, FieldSetPool } from '../../../../operator/runtime/cache/cache-transform';
import { type ManagedFieldsEntry, needsApply } from '../../../../operator/runtime/client/managed-fields';
import { BuiltinTypes, type KubeObject } from '../../../../constructs';

const managedFields: ManagedFieldsEntry[] = [
  {
    manager: 'opkit',
    operation: 'Apply',
    apiVersion: 'apps/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {} } },
  },
  {
    manager: 'opkit',
    operation: 'Apply',
    apiVersion: 'apps/v1',
    subresource: 'status',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:status': {} },
  },
  {
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'apps/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:status': {} },
  },
];

test("keeps only our own Apply entry and drops kubectl's last-applied copy; the change check still works", () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'd',
      namespace: 'ns',
      managedFields,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"a":1}', keep: 'me' },
    },
    spec: { replicas: 3 },
  };
  const cached = cacheTransform('opkit', BuiltinTypes.Deployment)(deployment);
  expect(cached.metadata.managedFields).toEqual([managedFields[0]]);
  expect(cached.metadata.annotations).toEqual({ keep: 'me' });
  expect(cached.spec).toEqual({ replicas: 3 });
  const desired = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'ns' },
    spec: { replicas: 3 },
  };
  expect(needsApply(desired, cached, 'opkit')).toBe(false);
  expect(needsApply({ ...desired, spec: { replicas: 4 } }, cached, 'opkit')).toBe(true);
});

test("Pods keep what status and failure reporting read: metadata, node, phase, container states, a waiting container's last exit, readiness and why no node takes them", () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' }, deletionTimestamp: 't', managedFields },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'x', env: [{ name: 'A', value: 'B' }] }],
      volumes: [{ name: 'v' }],
    },
    status: {
      phase: 'Running',
      podIP: '10.0.0.1',
      conditions: [
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: 't' },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: 't' },
        { type: 'Initialized', status: 'True' },
      ],
      initContainerStatuses: [
        { name: 'init', image: 'z', ready: true, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
      ],
      containerStatuses: [
        {
          name: 'c',
          image: 'x',
          imageID: 'sha',
          ready: true,
          state: { running: { startedAt: 't' } },
          lastState: { terminated: { exitCode: 0, startedAt: 't0', finishedAt: 't1' } },
        },
        {
          name: 'd',
          image: 'y',
          ready: false,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } },
          lastState: {
            terminated: { exitCode: 1, reason: 'Error', startedAt: 't0', finishedAt: 't1', containerID: 'x' },
          },
        },
      ],
    },
  };
  expect(cacheTransform('opkit', BuiltinTypes.Pod)(pod)).toEqual({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' }, deletionTimestamp: 't' },
    spec: { nodeName: 'n1' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
      initContainerStatuses: [{ name: 'init', state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
      containerStatuses: [
        { name: 'c', state: { running: { startedAt: 't' } } },
        // A waiting container's last exit says why it waits (a crash loop's exit code).
        {
          name: 'd',
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error' } },
        },
      ],
    },
  });
  const unschedulable = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'q' },
    status: {
      phase: 'Pending',
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' },
      ],
    },
  };
  expect(cacheTransform('opkit', BuiltinTypes.Pod)(unschedulable).status).toEqual(unschedulable.status);
});

test('equal field sets are kept once: two children of different owners share their f:spec tree, frozen', () => {
  const child = (owner: string): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: `d-${owner}`,
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: owner }],
      managedFields: [
        {
          manager: 'opkit',
          operation: 'Apply',
          apiVersion: 'apps/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:ownerReferences': {
                [`k:{"uid":"${owner}"}`]: { '.': {}, 'f:apiVersion': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {} },
              },
            },
            'f:spec': {
              'f:replicas': {},
              'f:template': {
                'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
              },
            },
          },
        },
      ],
    },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'x' }] } } },
  });
  const transform = cacheTransform('opkit', BuiltinTypes.Deployment);
  const [a, b] = [transform(child('u1')), transform(child('u2'))];
  const fields = (o: typeof a) => (o.metadata.managedFields as { fieldsV1: Record<string, object> }[])[0]!.fieldsV1;
  expect(fields(a)['f:spec']).toBe(fields(b)['f:spec']);
  expect(fields(a)['f:metadata']).not.toBe(fields(b)['f:metadata']);
  expect(Object.keys((fields(a)['f:metadata'] as Record<string, object>)['f:ownerReferences']!)).toEqual([
    'k:{"uid":"u1"}',
  ]);
  expect(() => {
    (fields(a)['f:spec'] as Record<string, object>)['f:paused'] = {};
  }).toThrow(TypeError);
  // The change check reads the shared set as it read its own.
  const desired = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'd-u2',
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u2' }],
    },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'x' }] } } },
  };
  expect(needsApply(desired, b, 'opkit')).toBe(false);
  expect(needsApply({ ...desired, spec: { ...desired.spec, replicas: 2 } }, b, 'opkit')).toBe(true);
});

test('a field-set pool holds each distinct subtree once', () => {
  const pool = new FieldSetPool();
  pool.share({ 'f:spec': { 'f:a': {} }, 'f:metadata': { 'f:labels': {} } });
  pool.share({ 'f:spec': { 'f:a': {} }, 'f:metadata': { 'f:labels': {} } });
  pool.share({ 'f:spec': { 'f:b': {} } });
  expect(pool.size).toBe(3);
});
