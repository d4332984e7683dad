import { RenderCache } from '../../../../operator/runtime/children/render-cache';

test('an unchanged input returns the earlier render; a changed one renders again', () => {
  const cache = new RenderCache<{ replicas: number }[]>(1 << 20);
  let renders = 0;
  const render = (replicas: number) => () => {
    renders++;
    return [{ replicas }];
  };
  const first = cache.get('ns/a', '{"size":1}', render(1));
  expect(cache.get('ns/a', '{"size":1}', render(1))).toBe(first);
  expect(renders).toBe(1);
  expect(cache.get('ns/a', '{"size":2}', render(2))).toEqual([{ replicas: 2 }]);
  expect(renders).toBe(2);
  // Other resources have renders of their own (an equal one shares the earlier's parts, see below).
  expect(cache.get('ns/b', '{"size":2}', render(2))).toEqual([{ replicas: 2 }]);
  expect(renders).toBe(3);
});

test('renders are frozen: they are shared between reconciles', () => {
  const cache = new RenderCache<{ spec: { replicas: number } }[]>(1 << 20);
  const kept = cache.get('ns/a', 'x', () => [{ spec: { replicas: 1 } }]);
  expect(() => {
    kept[0]!.spec.replicas = 2;
  }).toThrow(TypeError);
  expect(() => {
    kept.push({ spec: { replicas: 3 } });
  }).toThrow(TypeError);
});

test('holds at most its byte budget, dropping the least recently used', () => {
  // Each render counts 100 (and its digest): two fit in 250, not three.
  const cache = new RenderCache<object[]>(250, () => 100 - 44);
  let renders = 0;
  const render = () => {
    renders++;
    return [{}];
  };
  cache.get('a', 'x', render);
  cache.get('b', 'x', render);
  expect(cache.bytes).toBe(200);
  cache.get('a', 'x', render); // a is now the most recent
  cache.get('c', 'x', render); // drops b
  expect(cache.size).toBe(2);
  expect(cache.bytes).toBe(200);
  expect(renders).toBe(3);
  cache.get('a', 'x', render);
  expect(renders).toBe(3);
  cache.get('b', 'x', render);
  expect(renders).toBe(4);
});

test('a render larger than the budget is still returned, and kept alone until the next', () => {
  const cache = new RenderCache<object[]>(10, () => 1000);
  const big = cache.get('a', 'x', () => [{}]);
  expect(cache.get('a', 'x', () => [{ other: true }])).toBe(big);
  cache.get('b', 'x', () => [{}]);
  expect(cache.size).toBe(1);
});

test('keeps the render of every resource of a burst that fits (not a fixed count)', () => {
  const cache = new RenderCache<{ name: string }[]>(10 * 1024 * 1024);
  let renders = 0;
  const keys = Array.from({ length: 1000 }, (_, i) => `ns/r-${i}`);
  for (let pass = 0; pass < 3; pass++)
    for (const key of keys)
      cache.get(key, `{"size":1,"name":"${key}"}`, () => {
        renders++;
        return [{ name: key }];
      });
  expect(renders).toBe(1000);
  expect(cache.size).toBe(1000);
});

test('a deleted resource is forgotten, its bytes with it', () => {
  const cache = new RenderCache<object[]>(1000, () => 56);
  cache.get('a', 'x', () => [{}]);
  cache.delete('a');
  expect(cache.size).toBe(0);
  expect(cache.bytes).toBe(0);
});

test('the status part of the input counts only when the kept render read it', () => {
  const cache = new RenderCache<object[]>(1 << 20);
  let renders = 0;
  const ignoring = () => {
    renders++;
    return [{}];
  };
  const first = cache.get('a', 'spec', ignoring, { phase: 'one' });
  expect(cache.get('a', 'spec', ignoring, { phase: 'two' })).toBe(first);
  expect(renders).toBe(1);
  expect(cache.statusChanged('a', { phase: 'one' }, { phase: 'two' })).toBe(false);
  const reading = (readStatus: () => void) => {
    readStatus();
    renders++;
    return [{}];
  };
  const read = cache.get('b', 'spec', reading, { phase: 'one' });
  expect(cache.get('b', 'spec', reading, { phase: 'one' })).toBe(read);
  // Rendered again (an equal render is the earlier one's parts: the counter tells).
  cache.get('b', 'spec', reading, { phase: 'two' });
  expect(renders).toBe(3);
  expect(cache.statusChanged('b', { phase: 'one' }, { phase: 'two' })).toBe(true);
  // The rest of the input counts either way.
  cache.get('a', 'spec changed', ignoring, { phase: 'two' });
  expect(renders).toBe(4);
});

test('a render that read some status fields is reused while those are the same, whatever the others do', () => {
  const cache = new RenderCache<object[]>(1 << 20);
  let renders = 0;
  const readingDone = (readStatus: (field?: string) => void) => {
    readStatus('done');
    renders++;
    return [{}];
  };
  const first = cache.get('a', 'spec', readingDone, { done: false, conditions: ['x'] });
  expect(cache.get('a', 'spec', readingDone, { done: false, conditions: ['y'], phase: 'p' })).toBe(first);
  expect(renders).toBe(1);
  expect(cache.statusChanged('a', { done: false, conditions: ['x'] }, { done: false, conditions: ['y'] })).toBe(false);
  // A field read that appears, or changes, renders again (and is a reason to reconcile).
  expect(cache.statusChanged('a', undefined, { done: true })).toBe(true);
  expect(cache.statusChanged('a', { done: false }, { done: true })).toBe(true);
  cache.get('a', 'spec', readingDone, { done: true, conditions: ['y'] });
  expect(renders).toBe(2);
  // A render that read a field and then all of it: all of it counts.
  const both = (readStatus: (field?: string) => void) => {
    readStatus('done');
    readStatus();
    return [{}];
  };
  cache.get('b', 'spec', both, { done: false, conditions: ['x'] });
  expect(cache.statusChanged('b', { done: false, conditions: ['x'] }, { done: false, conditions: ['y'] })).toBe(true);
  // Nothing kept: nothing to change.
  expect(cache.statusChanged('c', { done: false }, { done: true })).toBe(false);
});

test('a render shares the parts equal to the last render’s, each render still its own JSON and frozen', () => {
  const cache = new RenderCache<{ name: string; template: { image: string; args: string[] } }[]>(1 << 20);
  const render = (name: string, image: string) => () => [{ name, template: { image, args: ['-p', '11211'] } }];
  const a = cache.get('ns/a', 'a', render('a', 'memcached:1.6'));
  const b = cache.get('ns/b', 'b', render('b', 'memcached:1.6'));
  expect(b).toEqual([{ name: 'b', template: { image: 'memcached:1.6', args: ['-p', '11211'] } }]);
  expect(b[0]!.template).toBe(a[0]!.template);
  expect(Object.isFrozen(b[0])).toBe(true);
  expect(Object.isFrozen(b[0]!.template.args)).toBe(true);
  // A render unlike the last shares what is alike only.
  const c = cache.get('ns/c', 'c', render('c', 'memcached:1.7'));
  expect(c[0]!.template).not.toBe(b[0]!.template);
  expect(c[0]!.template.args).toBe(b[0]!.template.args);
  expect(c[0]!.template.image).toBe('memcached:1.7');
  // Kept renders are unchanged by those after them.
  expect(a).toEqual([{ name: 'a', template: { image: 'memcached:1.6', args: ['-p', '11211'] } }]);
});
