import { cacheTransform } from '../../../operator/runtime/cache-transform';
import { needsApply } from '../../../operator/runtime/managed-fields';
import { BuiltinTypes } from '../../../constructs';

const managedFields = [
  { manager: 'opkit', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
  { manager: 'opkit', operation: 'Apply', apiVersion: 'apps/v1', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } },
  { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } },
];

test('keeps only our own Apply entry and drops kubectl\'s last-applied copy; the change check still works', () => {
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'd', namespace: 'ns', managedFields, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"a":1}', keep: 'me' } },
    spec: { replicas: 3 },
  };
  const cached = cacheTransform('opkit', BuiltinTypes.Deployment)(deployment);
  expect(cached.metadata.managedFields).toEqual([managedFields[0]]);
  expect(cached.metadata.annotations).toEqual({ keep: 'me' });
  expect(cached.spec).toEqual({ replicas: 3 });
  const desired = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { replicas: 3 } };
  expect(needsApply(desired, cached, 'opkit')).toBe(false);
  expect(needsApply({ ...desired, spec: { replicas: 4 } }, cached, 'opkit')).toBe(true);
});

test('Pods keep what status and failure reporting read: metadata, node, phase, container states', () => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' }, deletionTimestamp: 't', managedFields },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', env: [{ name: 'A', value: 'B' }] }], volumes: [{ name: 'v' }] },
    status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready' }], containerStatuses: [{ name: 'c', image: 'x', imageID: 'sha', ready: true, state: { running: { startedAt: 't' } } }] },
  };
  expect(cacheTransform('opkit', BuiltinTypes.Pod)(pod)).toEqual({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' }, deletionTimestamp: 't' },
    spec: { nodeName: 'n1' },
    status: { phase: 'Running', containerStatuses: [{ name: 'c', state: { running: { startedAt: 't' } } }] },
  });
});
