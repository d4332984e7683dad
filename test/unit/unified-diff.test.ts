import { diffReport, unifiedDiff } from '../../operator/diff-command';

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
