import { RenderCache } from '../../../../operator/runtime/children/render-cache';

test('an unchanged input returns the earlier render; a changed one renders again', () => {
  const cache = new RenderCache<{ replicas: number }[]>(8);
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
  // Other resources have renders of their own.
  expect(cache.get('ns/b', '{"size":2}', render(2))).not.toBe(cache.get('ns/a', '{"size":2}', render(2)));
  expect(renders).toBe(3);
});

test('renders are frozen: they are shared between reconciles', () => {
  const cache = new RenderCache<{ spec: { replicas: number } }[]>(8);
  const kept = cache.get('ns/a', 'x', () => [{ spec: { replicas: 1 } }]);
  expect(() => {
    kept[0]!.spec.replicas = 2;
  }).toThrow(TypeError);
  expect(() => {
    kept.push({ spec: { replicas: 3 } });
  }).toThrow(TypeError);
});

test('holds at most its capacity, dropping the least recently used', () => {
  const cache = new RenderCache<object[]>(2);
  let renders = 0;
  const render = () => {
    renders++;
    return [{}];
  };
  cache.get('a', 'x', render);
  cache.get('b', 'x', render);
  cache.get('a', 'x', render); // a is now the most recent
  cache.get('c', 'x', render); // drops b
  expect(cache.size).toBe(2);
  expect(renders).toBe(3);
  cache.get('a', 'x', render);
  expect(renders).toBe(3);
  cache.get('b', 'x', render);
  expect(renders).toBe(4);
});
