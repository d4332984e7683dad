import { shareEqualParts } from '../../../../operator/runtime/children/shared-parts';

const deployment = (name: string, replicas: number) => ({
  metadata: { name, labels: { app: 'memcached', instance: name } },
  spec: {
    replicas,
    template: {
      spec: { containers: [{ name: 'memcached', args: ['-p', '11211'], ports: [{ containerPort: 11211 }] }] },
    },
  },
});

test('a part equal to the reference at the same path is the reference’s; the rest is the value’s', () => {
  const reference = deployment('a', 1);
  const value = deployment('b', 2);
  const shared = shareEqualParts(value, reference);
  // The same JSON as the value.
  expect(shared).toEqual(value);
  expect(JSON.stringify(shared)).toBe(JSON.stringify(value));
  // The pod template is alike: held once.
  expect(shared.spec.template).toBe(reference.spec.template);
  // What differs is the value's own, with the equal parts inside it shared.
  expect(shared.metadata).not.toBe(reference.metadata);
  expect(shared.metadata.labels).not.toBe(reference.metadata.labels);
  expect(shared.metadata.labels.instance).toBe('b');
  expect(shared.spec).not.toBe(reference.spec);
  expect(shared.spec.replicas).toBe(2);
  // The inputs are not changed.
  expect(value).toEqual(deployment('b', 2));
  expect(reference).toEqual(deployment('a', 1));
});

test('a value equal to its reference is the reference', () => {
  const reference = deployment('a', 1);
  expect(shareEqualParts(deployment('a', 1), reference)).toBe(reference);
});

test('a value sharing nothing is itself, not a copy', () => {
  const value = { a: { b: 1 }, c: [1, 2] };
  expect(shareEqualParts(value, { a: { b: 2 }, c: [1, 3] })).toBe(value);
  expect(shareEqualParts(value, undefined)).toBe(value);
  expect(shareEqualParts(value, 'text')).toBe(value);
});

test('the same JSON only: keys in another order, another length or extra keys are not shared', () => {
  const reference = { order: { a: 1, b: 2 }, list: [1, 2], extra: { a: 1, b: 2 } };
  const value = { order: { b: 2, a: 1 }, list: [1, 2, 3], extra: { a: 1 } };
  const shared = shareEqualParts(value, reference);
  expect(shared.order).not.toBe(reference.order);
  expect(Object.keys(shared.order)).toEqual(['b', 'a']);
  expect(shared.list).not.toBe(reference.list);
  expect(shared.list).toEqual([1, 2, 3]);
  expect(shared.extra).not.toBe(reference.extra);
  expect(shared).toEqual(value);
});

test('arrays share item by item; anything but plain objects and arrays is kept as it is', () => {
  const port = { containerPort: 80 };
  const reference = { items: [{ x: 1 }, port], when: new Date(0), waits: new Map([['a', 1]]) };
  const value = { items: [{ x: 2 }, { containerPort: 80 }], when: new Date(0), waits: new Map([['a', 1]]) };
  const shared = shareEqualParts(value, reference);
  expect(shared.items[1]).toBe(port);
  expect(shared.items[0]).toBe(value.items[0]);
  expect(shared.when).toBe(value.when);
  expect(shared.waits).toBe(value.waits);
});

test('an object without a prototype stays one', () => {
  const value = Object.assign(Object.create(null) as Record<string, unknown>, { a: { b: 1 }, c: 2 });
  const shared = shareEqualParts(value, { a: { b: 1 }, c: 3 });
  expect(Object.getPrototypeOf(shared)).toBeNull();
  expect(shared).toEqual(value);
});
