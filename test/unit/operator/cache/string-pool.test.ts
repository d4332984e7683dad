import { StringPool } from '../../../../operator/runtime/cache/string-pool';

const deployment = (name: string) => ({
  metadata: { name, namespace: 'bench', labels: { app: 'memcached' } },
  spec: { template: { spec: { containers: [{ image: 'memcached:1.6', args: ['-p', '11211'] }] } } },
  status: { conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }] },
});

test('an object pooled keeps every value as it was', () => {
  const pool = new StringPool();
  const objects = [deployment('a'), deployment('b')];
  const before = structuredClone(objects);
  for (const o of objects) pool.internIn(o);
  expect(objects).toEqual(before);
  // Its strings are the pool's now: an equal one is found, not added.
  const held = pool.size;
  expect(held).toBeGreaterThan(0);
  pool.internIn(deployment('a'));
  expect(pool.size).toBe(held);
});

test('frozen parts are left as they are (shared already), the rest pooled', () => {
  const pool = new StringPool();
  const fieldsV1 = Object.freeze({ 'f:spec': Object.freeze({ 'f:replicas': Object.freeze({}) }) });
  const obj = { metadata: { name: 'a', managedFields: [{ manager: 'm', fieldsV1 }] } };
  expect(() => {
    pool.internIn(obj);
  }).not.toThrow();
  expect(obj.metadata.managedFields[0]!.fieldsV1).toBe(fieldsV1);
  expect(pool.size).toBe(2); // 'a' and 'm'
});

test('holds two generations at most: strings seen once fall out, strings seen again stay', () => {
  const pool = new StringPool(100);
  for (let i = 0; i < 10_000; i++) {
    pool.intern(`uid-${i}`);
    // Seen in every generation: carried into the next one each time.
    pool.intern('RuntimeDefault');
  }
  expect(pool.size).toBeLessThanOrEqual(200);
  const held = pool.size;
  pool.intern('RuntimeDefault');
  expect(pool.size).toBe(held);
});

test('long strings are never pooled', () => {
  const pool = new StringPool(100, 8);
  pool.intern('x'.repeat(9));
  expect(pool.size).toBe(0);
  pool.intern('x'.repeat(8));
  expect(pool.size).toBe(1);
});
