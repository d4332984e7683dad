import type { KubeObject } from '../../../../constructs/contract';
import type { InformerHandler } from '../../../../operator/runtime/cache/informer';
import { atOrAfter, WrittenChildren } from '../../../../operator/runtime/children/written-children';

const child = (resourceVersion: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'ns', resourceVersion },
});

describe('resourceVersions compared', () => {
  test.each([
    ['10', '9', true],
    ['9', '10', false],
    ['10', '10', true],
    ['123', '1230', false],
    ['', '1', undefined],
    ['abc', '1', undefined],
  ])('%j at or after %j: %s', (a, b, result) => {
    expect(atOrAfter(a, b)).toBe(result);
  });
});

describe('children written and not yet in the cache', () => {
  test('stand for the stale cache until it has seen up to them, then the cache is read again', () => {
    const w = new WrittenChildren();
    w.note('ns/r', 'ConfigMap/c', child('6'));
    // Not in the cache yet (created), the cache's stream at 5: ours stands for it.
    expect(w.current('ns/r', 'ConfigMap/c', undefined, '5')?.metadata.resourceVersion).toBe('6');
    // The cache still shows the version before ours: ours again.
    expect(w.current('ns/r', 'ConfigMap/c', child('4'), '5')?.metadata.resourceVersion).toBe('6');
    // The stream has moved past ours: the cache is read as it is (here: deleted since), and ours forgotten.
    expect(w.current('ns/r', 'ConfigMap/c', undefined, '7')).toBeUndefined();
    expect(w.size).toBe(0);
  });

  test('a cached copy at or after ours wins at once, even before the stream says so', () => {
    const w = new WrittenChildren();
    w.note('ns/r', 'ConfigMap/c', child('6'));
    expect(w.current('ns/r', 'ConfigMap/c', child('8'), '5')?.metadata.resourceVersion).toBe('8');
    expect(w.size).toBe(0);
  });

  test('without comparable resourceVersions nothing is remembered: the cache is read as it is', () => {
    const w = new WrittenChildren();
    w.note('ns/r', 'ConfigMap/c', child('opaque'));
    expect(w.size).toBe(0);
    w.note('ns/r', 'ConfigMap/c', child('6'));
    // A stream that has not listed yet: its version says nothing, the cache is read.
    expect(w.current('ns/r', 'ConfigMap/c', undefined, '')).toBeUndefined();
  });

  test("a resource that is gone forgets its children's writes", () => {
    const w = new WrittenChildren();
    w.note('ns/r', 'ConfigMap/c', child('6'));
    w.note('ns/other', 'ConfigMap/c', child('7'));
    w.forget('ns/r');
    expect(w.size).toBe(1);
    expect(w.current('ns/r', 'ConfigMap/c', undefined, '5')).toBeUndefined();
  });

  test('forgotten as soon as the cache shows the child at or after the write, without another reconcile', () => {
    // An informer's handlers, driven as its watch would drive them.
    const handlers: InformerHandler<KubeObject>[] = [];
    const informer = { addHandler: (h: InformerHandler<KubeObject>) => handlers.push(h) };
    const w = new WrittenChildren();
    w.follow('ConfigMap', informer);
    w.note('ns/r', 'ConfigMap/c', child('6'));
    w.note('ns/s', 'ConfigMap/d', { ...child('9'), metadata: { name: 'd', namespace: 'ns', resourceVersion: '9' } });
    // The cache shows a version before ours, or another object of the same name elsewhere: kept.
    for (const h of handlers) h.onUpdate?.(child('4'), child('5'));
    for (const h of handlers)
      h.onAdd?.({ ...child('7'), metadata: { name: 'c', namespace: 'other', resourceVersion: '7' } }, false);
    expect(w.size).toBe(2);
    // The watch brings ours (or one after it): forgotten, the other child's write kept.
    for (const h of handlers) h.onAdd?.(child('6'), false);
    expect(w.size).toBe(1);
    expect(w.current('ns/r', 'ConfigMap/c', undefined, '5')).toBeUndefined();
    // Deleted after our write: forgotten too.
    for (const h of handlers)
      h.onDelete?.({ ...child('10'), metadata: { name: 'd', namespace: 'ns', resourceVersion: '10' } });
    expect(w.size).toBe(0);
  });
});
