import { createHash } from 'node:crypto';
import pino from 'pino';
import { BuiltinTypes } from '../../../../constructs';
import { type KubeList } from '../../../../operator/runtime/client/client';
import { Informer } from '../../../../operator/runtime/cache/informer';
import {
  fnv1a64,
  HASH_SPACE_END,
  namespaceInRange,
  rangesOverlap,
  shardRange,
  shardSelector,
} from '../../../../operator/runtime/cache/sharding';
import { FakeListWatch, list, obj } from '../support/fake-client';

const logger = pino({ level: 'silent' });

describe('the namespace hash space', () => {
  test("FNV-1a 64 of a namespace is the API server's (vectors the v1.36.3 server sorted into shards)", () => {
    // The published FNV-1a 64 vectors, and what a v1.36.3 API server put in its first half.
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('kube-node-lease')).toBe(0x021fb6dd71b80174n);
    expect(fnv1a64('default')).toBe(0xebada5168620c5fen);
  });

  test.each([1, 2, 3, 4, 7, 16])('%i shards cover the whole space, in order, with no gap or overlap', (count) => {
    const ranges = Array.from({ length: count }, (_, i) => shardRange(i, count));
    expect(ranges[0]?.start).toBe(0n);
    expect(ranges.at(-1)?.end).toBe(HASH_SPACE_END);
    for (let i = 1; i < count; i++) expect(ranges[i]?.start).toBe(ranges[i - 1]?.end);
    for (let i = 0; i < count; i++)
      for (let j = 0; j < count; j++) expect(rangesOverlap(ranges[i]!, ranges[j]!)).toBe(i === j);
  });

  test('every namespace falls in exactly one shard, however many there are', () => {
    const namespaces = Array.from({ length: 200 }, (_, i) => `team-${i}`).concat(['', 'default', 'kube-system']);
    for (const count of [2, 3, 4])
      for (const ns of namespaces) {
        const owners = Array.from({ length: count }, (_, i) => i).filter((i) =>
          namespaceInRange(ns, shardRange(i, count)),
        );
        expect(owners).toHaveLength(1);
      }
  });

  test('varied names spread over the shards; names differing in a short suffix may not (the hash has no final mix)', () => {
    const spread = (names: string[], count: number) =>
      Array.from({ length: count }, (_, s) => names.filter((n) => namespaceInRange(n, shardRange(s, count))).length);
    const varied = Array.from(
      { length: 200 },
      (_, i) => `team-${createHash('sha256').update(String(i)).digest('hex').slice(0, 8)}`,
    );
    for (const c of spread(varied, 4)) expect(c).toBeGreaterThan(25);
    // What docs/sharding.md warns of: bench-0 … bench-199 all hash into the first half.
    const numbered = Array.from({ length: 200 }, (_, i) => `bench-${i}`);
    expect(spread(numbered, 2)).toEqual([200, 0]);
  });

  test('a shard of a new count overlaps the old shards that shared its namespaces', () => {
    // 2 → 4: new shards 0 and 1 take old shard 0's range; 2 and 3, old shard 1's.
    expect(rangesOverlap(shardRange(1, 4), shardRange(0, 2))).toBe(true);
    expect(rangesOverlap(shardRange(1, 4), shardRange(1, 2))).toBe(false);
    // 2 → 3: the middle third straddles both halves.
    expect(rangesOverlap(shardRange(1, 3), shardRange(0, 2))).toBe(true);
    expect(rangesOverlap(shardRange(1, 3), shardRange(1, 2))).toBe(true);
  });

  test('the selector is the API server syntax: 16 hex digits a bound, 2^64 the one 17-digit end', () => {
    expect(shardSelector(shardRange(0, 4))).toBe(
      "shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000')",
    );
    expect(shardSelector(shardRange(3, 4))).toBe(
      "shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')",
    );
  });

  test('refuses a shard that does not exist', () => {
    expect(() => shardRange(2, 2)).toThrow(/0\.\.1/);
    expect(() => shardRange(0, 0)).toThrow(/≥ 1/);
  });
});

describe('an informer restricted to a shard', () => {
  // Two namespaces, one in each half of the space.
  const low = 'kube-node-lease';
  const high = 'default';
  const firstHalf = shardRange(0, 2);

  async function run(fake: FakeListWatch, serverFilters = false) {
    let received = 0;
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, {
      logger,
      onReceived: (n) => {
        received += n;
      },
    });
    const servedBy: string[] = [];
    inf.restrictTo({
      range: firstHalf,
      serverFilters,
      onServedBy: (resource, by) => servedBy.push(`${resource}:${by}`),
    });
    const stop = new AbortController();
    const running = inf.run(stop.signal);
    await inf.waitForSync();
    // Let the scripted watch deliver its events.
    while (fake.watches.length) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    stop.abort();
    await running;
    return { inf, servedBy, received };
  }

  test('an API server that ignores shardSelector: it keeps only its range, from the list and the watch, and says so', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('in', '1', low), obj('out', '2', high)]));
    fake.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('in-2', '11', low) });
      emit({ type: 'ADDED', object: obj('out-2', '12', high) });
    });
    const { inf, servedBy, received } = await run(fake);
    expect(
      inf
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['in', 'in-2']);
    // Received is what came over the wire, the dropped objects too: what sharding on the server saves.
    expect(received).toBe(4);
    expect(servedBy).toEqual(['configmaps:client']);
    // It asked for its range on the list and on the watch.
    expect(fake.listQueries[0]?.shardSelector).toBe(shardSelector(firstHalf));
    expect(fake.watchQueries[0]?.shardSelector).toBe(shardSelector(firstHalf));
  });

  test('a list without shardInfo (custom resources on v1.36) counts as served where the probe found a sharding server; a stray watch event turns it to client', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('in', '1', low)]));
    fake.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('out', '11', high) });
    });
    const { inf, servedBy } = await run(fake, true);
    expect(inf.list().map((o) => o.metadata.name)).toEqual(['in']);
    expect(servedBy).toEqual(['configmaps:server', 'configmaps:client']);
  });

  test('a list without shardInfo, where the probe found no sharding server: client, even before anything stray arrived', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', []));
    const { servedBy } = await run(fake, false);
    expect(servedBy).toEqual(['configmaps:client']);
  });

  test('an API server that applied it (shardInfo on the list): served by the server', async () => {
    const fake = new FakeListWatch();
    const served: KubeList = {
      metadata: { resourceVersion: '10', shardInfo: { selector: shardSelector(firstHalf) } },
      items: [obj('in', '1', low)],
    };
    fake.lists.push(served);
    const { inf, servedBy } = await run(fake);
    expect(inf.list().map((o) => o.metadata.name)).toEqual(['in']);
    expect(servedBy).toEqual(['configmaps:server']);
  });
});
