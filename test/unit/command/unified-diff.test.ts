import { diffReport, unifiedDiff } from '../../../command/diff';
import { fieldChanges } from '../../../command/plan';

test('a unified diff: changed lines with 3 lines of context, runs far apart separated', () => {
  const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'].join('\n');
  const after = ['a', 'B', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'L', 'm'].join('\n');
  expect(unifiedDiff(before, after).split('\n')).toEqual([
    '--- live',
    '+++ after reconcile',
    ' a',
    '-b',
    '+B',
    ' c',
    ' d',
    ' e',
    '@@',
    ' i',
    ' j',
    ' k',
    '-l',
    '+L',
    '+m',
  ]);
  expect(unifiedDiff('same\ntext', 'same\ntext').split('\n')).toEqual(['--- live', '+++ after reconcile']);
});

test("a report: one line per child, the kind's namespace/name", () => {
  const report = diffReport({ kind: 'Memcached', metadata: { name: 'mc', namespace: 'ns' } }, [
    { verb: 'unchanged', kind: 'Deployment', namespace: 'ns', name: 'mc' },
    { verb: 'pruned', kind: 'ConfigMap', namespace: 'ns', name: 'old' },
  ]);
  expect(report).toBe('# Memcached ns/mc\nunchanged Deployment ns/mc\npruned    ConfigMap ns/old\n');
});

test('field changes: leaf paths added, removed and changed; status and bookkeeping left out', () => {
  const before = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'mc', resourceVersion: '1', labels: { a: '1', gone: 'x' } },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'memcached:1.6' }] } } },
    status: { readyReplicas: 1 },
  };
  const after = {
    ...before,
    metadata: { name: 'mc', resourceVersion: '2', labels: { a: '1', team: 'x' } },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'memcached:1.7' }] } } },
    status: { readyReplicas: 0 },
  };
  expect(fieldChanges(before, after)).toEqual([
    { field: 'metadata.labels.team', change: 'added' },
    { field: 'spec.template.spec.containers[0].image', change: 'changed' },
    { field: 'metadata.labels.gone', change: 'removed' },
  ]);
});
