import pino from 'pino';
import type { KubeClient, KubeList, WatchOptions } from '../../../../operator/runtime/client/client';
import { ApiError } from '../../../../operator/runtime/client/errors';
import { Informer } from '../../../../operator/runtime/cache/informer';
import { BuiltinTypes } from '../../../../constructs';
import { FakeListWatch, list, obj, type WatchScript } from '../support/fake-client';
import { VirtualClock } from '../support/virtual-clock';

const logger = pino({ level: 'silent' });

function recorder(inf: Informer) {
  const events: string[] = [];
  inf.addHandler({
    onAdd: (o) => events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onUpdate: (_old, o) => events.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onDelete: (o) => events.push(`delete ${o.metadata.name}`),
  });
  return events;
}

/** Runs `inf` until it has synced and opened `watches` watches (its scripted ones done), then stops it. */
async function runUntil(inf: Informer, fake: FakeListWatch, watches = 0, timeoutMs = 5000): Promise<void> {
  const stop = new AbortController();
  const run = inf.run(stop.signal);
  await inf.waitForSync();
  await until(() => fake.watchQueries.length >= watches, timeoutMs).finally(() => {
    stop.abort();
  });
  stop.abort();
  await run;
}

/** An informer over `fake` that has listed once and stopped: its cache, for assertions. */
async function syncedOnce(fake: FakeListWatch, type: typeof BuiltinTypes.ConfigMap) {
  const inf = new Informer(fake.asClient(), type, { logger });
  await runUntil(inf, fake);
  return inf;
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('Informer', () => {
  test('lists, then watches from the list resourceVersion; bookmarks move it on', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('a', '5')]));
    fake.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('b', '11') });
      emit({ type: 'MODIFIED', object: obj('a', '12') });
      emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
    });
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger });
    const events = recorder(inf);
    await runUntil(inf, fake, 2);
    expect(events).toEqual(['add a@5', 'add b@11', 'update a@12']);
    expect(fake.watchQueries.map((q) => q.resourceVersion)).toEqual(['10', '20']);
    expect(fake.listCalls).toBe(1);
    expect(
      inf
        .list('ns')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  test('an ERROR 410 event makes it list again, and it reports what changed meanwhile', async () => {
    const fake = new FakeListWatch();
    const restarts: string[] = [];
    fake.lists.push(list('10', [obj('a', '5'), obj('b', '6')]));
    fake.watches.push(async (emit) => {
      emit({
        type: 'ERROR',
        object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
      });
    });
    // While it was not watching: a deleted, b changed, c created.
    fake.lists.push(list('30', [obj('b', '25'), obj('c', '26')]));
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, {
      logger,
      onWatchRestart: (r) => restarts.push(r),
    });
    const events = recorder(inf);
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await until(() => fake.watchQueries.length === 2);
    stop.abort();
    await run;
    expect(events).toEqual(['add a@5', 'add b@6', 'delete a', 'update b@25', 'add c@26']);
    expect(restarts).toEqual(['expired']);
    expect(fake.watchQueries.map((q) => q.resourceVersion)).toEqual(['10', '30']);
  });

  test('adds say whether they came with the first list: a watched add and a relist after 410 are changes', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('a', '5')]));
    fake.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('b', '11') });
      emit({
        type: 'ERROR',
        object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
      });
    });
    fake.lists.push(list('30', [obj('a', '5'), obj('b', '11'), obj('c', '26')]));
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger });
    const adds: string[] = [];
    inf.addHandler({
      onAdd: (o, initialList) => adds.push(`${o.metadata.name}${initialList ? ' (initial list)' : ''}`),
    });
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await until(() => fake.watchQueries.length === 2);
    stop.abort();
    await run;
    expect(adds).toEqual(['a (initial list)', 'b', 'c']);
  });

  test('a 410 answer to the watch request also makes it list again', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', []), list('40', [obj('x', '39')]));
    fake.watches.push(async () => {
      throw new ApiError(410, 'Gone', 'too old');
    });
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger });
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await until(() => fake.watchQueries.length === 2);
    stop.abort();
    await run;
    expect(fake.listCalls).toBe(2);
    expect(inf.get('ns/x')?.metadata.resourceVersion).toBe('39');
  });

  test('any other error (connection reset, 500, 403) backs off and re-watches without stopping', async () => {
    const fake = new FakeListWatch();
    const restarts: string[] = [];
    fake.lists.push(new Error('ECONNREFUSED'), list('10', []));
    fake.watches.push(
      async () => {
        throw new Error('socket hang up');
      },
      async (emit) => {
        emit({ type: 'ADDED', object: obj('late', '11') });
      },
    );
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, {
      logger,
      onWatchRestart: (r) => restarts.push(r),
      // Its real backoff (0.8 s, then 1.6 s) on a clock that only counts it.
      clock: new VirtualClock(),
    });
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await until(() => inf.get('ns/late') !== undefined, 10_000);
    stop.abort();
    await run;
    expect(inf.hasSynced()).toBe(true);
    expect(restarts.slice(0, 2)).toEqual(['error', 'error']);
    // After a plain error it resumes from where it was, not with a new list.
    expect(fake.listCalls).toBe(2);
    expect(fake.watchQueries.map((q) => q.resourceVersion)).toEqual(['10', '10', '11']);
  }, 15_000);

  test('a watch that stayed up resets the backoff: every isolated cut re-watches within about a second', async () => {
    // client-go's reflector rule: backoff is for a server that keeps failing, not for a healthy
    // watch that was cut once. Four cuts, each after the watch ran for a while. Time is virtual:
    // the delays are the ones the informer asked for, not what a busy machine made of them.
    const clock = new VirtualClock();
    const fake = new FakeListWatch();
    fake.lists.push(list('10', []));
    const cut = () => {
      clock.advance(60);
      return Promise.reject(new Error('connection reset'));
    };
    fake.watches.push(cut, cut, cut, cut);
    // A base delay of 200 ms (client-go's is 800 ms) keeps the test short.
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, {
      logger,
      healthyWatchMs: 50,
      retryBaseMs: 200,
      clock,
    });
    await runUntil(inf, fake, 5);
    const delays = clock.sleeps;
    // The base delay (200 ms, ±20 % jitter) after each cut; no doubling (200, 400, 800, 1600 ms).
    expect(delays).toHaveLength(4);
    for (const d of delays) expect(d).toBeLessThan(330);
  });

  test('a stream with nothing from the server past the stall window is stalled; a bookmark is something; a silent watch is ended at half the window', async () => {
    const clock = new VirtualClock();
    const fake = new FakeListWatch();
    fake.lists.push(list('10', []));
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger, clock, stallTimeoutMs: 180_000 });
    const seen: { at: string; stalled: number; silentS: number }[] = [];
    const look = (at: string) =>
      seen.push({ at, stalled: inf.stalledStreams().length, silentS: inf.silentMs() / 1000 });
    fake.watches.push(async (emit) => {
      clock.advance(170_000);
      look('170 s into a quiet watch');
      emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '11' } } });
      look('a bookmark');
      clock.advance(181_000);
      look('181 s after it');
      return Promise.resolve();
    });
    fake.watches.push(() => {
      look('the next watch accepted');
      return Promise.resolve();
    });
    // Before it runs nothing is awaited (a sharded standby caches nothing).
    clock.advance(600_000);
    expect(inf.stalledStreams()).toEqual([]);
    await runUntil(inf, fake, 3);
    expect(seen).toEqual([
      { at: '170 s into a quiet watch', stalled: 0, silentS: 170 },
      { at: 'a bookmark', stalled: 0, silentS: 0 },
      { at: '181 s after it', stalled: 1, silentS: 181 },
      // The watch ended and a new one was accepted: something from the server again.
      { at: 'the next watch accepted', stalled: 0, silentS: 0 },
    ]);
    // Each watch is ended by the client after half the window without a byte, before /healthz would fail.
    expect(fake.watchIdleTimeouts).toEqual([90_000, 90_000, 90_000]);
  });

  test('watches that fail before they stayed up back off exponentially', async () => {
    const clock = new VirtualClock();
    const fake = new FakeListWatch();
    fake.lists.push(list('10', []));
    const broken = () => Promise.reject(new Error('connection reset'));
    fake.watches.push(broken, broken, broken);
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, {
      logger,
      healthyWatchMs: 50,
      retryBaseMs: 200,
      clock,
    });
    await runUntil(inf, fake, 4);
    const delays = clock.sleeps;
    // 200, 400, 800 ms, each ±20 %.
    expect(delays).toHaveLength(3);
    expect(delays[0]).toBeLessThan(330);
    expect(delays[1]).toBeGreaterThan(300);
    expect(delays[2]).toBeGreaterThan(620);
  });

  test('a type not served yet (404: its CRD not installed) is looked for again every 2 s at most, not on a growing backoff', async () => {
    // client-go's doubling from 800 ms reached 25.6 s by the sixth 404: an operator started before
    // its CRD took that long to see it arrive.
    const clock = new VirtualClock();
    const fake = new FakeListWatch();
    const missing = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    fake.lists.push(missing(), missing(), missing(), missing(), missing(), missing(), list('10', []));
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger, clock });
    await runUntil(inf, fake, 1);
    expect(clock.sleeps).toHaveLength(6);
    for (const d of clock.sleeps) expect(d).toBeLessThanOrEqual(2000 * 1.2);
    expect(clock.sleeps[0]).toBeLessThan(1000);
  });

  test('a throwing handler neither stops the informer nor the other handlers', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('1', [obj('a', '1'), obj('b', '1')]));
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger });
    inf.addHandler({
      onAdd: () => {
        throw new Error('boom');
      },
    });
    const events = recorder(inf);
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await inf.waitForSync();
    stop.abort();
    await run;
    expect(events).toEqual(['add a@1', 'add b@1']);
  });

  test('resync re-delivers every cached object as an update', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('1', [obj('a', '1')]));
    const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger, resyncPeriodMs: 20 });
    const events = recorder(inf);
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await until(() => events.filter((e) => e.startsWith('update')).length >= 2);
    stop.abort();
    await run;
    expect(events[0]).toBe('add a@1');
    expect(events.slice(1, 3)).toEqual(['update a@1', 'update a@1']);
  });

  test('list filters by namespace and labels', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(
      list('1', [
        obj('a', '1', 'x', { metadata: { name: 'a', namespace: 'x', labels: { app: 'm' } } }),
        obj('b', '1', 'x', { metadata: { name: 'b', namespace: 'x', labels: { app: 'n' } } }),
        obj('c', '1', 'y', { metadata: { name: 'c', namespace: 'y', labels: { app: 'm' } } }),
      ]),
    );
    const inf = await syncedOnce(fake, BuiltinTypes.ConfigMap);
    expect(inf.list('x', { app: 'm' }).map((o) => o.metadata.name)).toEqual(['a']);
    expect(
      inf
        .list(undefined, { app: 'm' })
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(inf.list('x').length).toBe(2);
  });
});

test('objects from a LIST are cached with their apiVersion and kind, as watch events carry them', async () => {
  const fake = new FakeListWatch();
  const bare = obj('a', '5');
  delete bare.apiVersion;
  delete bare.kind;
  fake.lists.push(list('10', [bare]));
  const inf = await syncedOnce(fake, BuiltinTypes.Deployment);
  expect(inf.get('ns/a')).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a' } });
});

test('list by labels uses the label index, and the index follows updates and deletes', async () => {
  const fake = new FakeListWatch();
  const labelled = (name: string, rv: string, ns: string, labels: Record<string, string>) =>
    obj(name, rv, ns, { metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}`, labels } });
  fake.lists.push(
    list('10', [
      labelled('a', '1', 'x', { app: 'web', tier: '1' }),
      labelled('b', '2', 'x', { app: 'web' }),
      labelled('c', '3', 'y', { app: 'web' }),
    ]),
  );
  fake.watches.push(async (emit) => {
    emit({ type: 'MODIFIED', object: labelled('b', '4', 'x', { app: 'db' }) });
    emit({ type: 'DELETED', object: labelled('a', '5', 'x', { app: 'web', tier: '1' }) });
  });
  const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger });
  const names = (ns: string | undefined, labels: Record<string, string>) =>
    inf
      .list(ns, labels)
      .map((o) => o.metadata.name)
      .sort();
  await runUntil(inf, fake, 2);
  expect(names('x', { app: 'web' })).toEqual([]);
  expect(names('x', { app: 'db' })).toEqual(['b']);
  expect(names(undefined, { app: 'web' })).toEqual(['c']);
  expect(names('y', { app: 'web', tier: '1' })).toEqual([]);
  expect(names('x', {})).toEqual(['b']);
});

test('a label index built by a first list follows the updates, adds and deletes after it', async () => {
  const fake = new FakeListWatch();
  const labelled = (name: string, rv: string, ns: string, labels: Record<string, string>) =>
    obj(name, rv, ns, { metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}`, labels } });
  fake.lists.push(list('10', [labelled('a', '1', 'x', { app: 'web' }), labelled('b', '2', 'x', { app: 'web' })]));
  let indexBuilt!: () => void;
  const afterIndex = new Promise<void>((r) => (indexBuilt = r));
  fake.watches.push(async (emit) => {
    await afterIndex;
    emit({ type: 'MODIFIED', object: labelled('b', '4', 'x', { app: 'db' }) });
    emit({ type: 'DELETED', object: labelled('a', '5', 'x', { app: 'web' }) });
    emit({ type: 'ADDED', object: labelled('d', '6', 'x', { app: 'web' }) });
  });
  const inf = new Informer(fake.asClient(), BuiltinTypes.ConfigMap, { logger });
  const names = (ns: string | undefined, labels: Record<string, string>) =>
    inf
      .list(ns, labels)
      .map((o) => o.metadata.name)
      .sort();
  const stop = new AbortController();
  const run = inf.run(stop.signal);
  await inf.waitForSync();
  expect(names('x', { app: 'web' })).toEqual(['a', 'b']);
  indexBuilt();
  await until(() => inf.get('x/d') !== undefined);
  expect(names('x', { app: 'web' })).toEqual(['d']);
  expect(names(undefined, { app: 'db' })).toEqual(['b']);
  stop.abort();
  await run;
});

describe('Informer over some namespaces', () => {
  /** A client answering each namespace's lists and watches from its own script; no cluster-wide call allowed. */
  function perNamespace(scripts: Record<string, { lists: (() => Promise<KubeList>)[]; watches: WatchScript[] }>) {
    const calls: string[] = [];
    const client = {
      list: async (_t: unknown, namespace?: string) => {
        calls.push(`list ${namespace ?? '(all)'}`);
        const next = namespace === undefined ? undefined : scripts[namespace]?.lists.shift();
        if (!next) throw new Error(`no scripted list for ${namespace ?? 'all namespaces'}`);
        return next();
      },
      watch: async (_t: unknown, { namespace, query, onEvent, signal, onOpen }: WatchOptions) => {
        calls.push(`watch ${namespace ?? '(all)'}@${query.resourceVersion}`);
        onOpen?.();
        const next = namespace === undefined ? undefined : scripts[namespace]?.watches.shift();
        if (next) return next(onEvent, query);
        await new Promise<void>((r) => {
          if (signal.aborted) r();
          signal.addEventListener(
            'abort',
            () => {
              r();
            },
            { once: true },
          );
        });
      },
    } as unknown as KubeClient;
    return { client, calls };
  }

  test('lists and watches each namespace into one cache; a relist of one leaves the others alone', async () => {
    const { client, calls } = perNamespace({
      a: {
        lists: [async () => list('10', [obj('a1', '5', 'a')]), async () => list('15', [])],
        watches: [
          async (emit) => {
            emit({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
          },
        ],
      },
      b: {
        lists: [async () => list('20', [obj('b1', '6', 'b')])],
        watches: [
          async (emit) => {
            emit({ type: 'ADDED', object: obj('b2', '21', 'b') });
          },
        ],
      },
    });
    const inf = new Informer(client, BuiltinTypes.ConfigMap, { logger, namespaces: ['a', 'b'] });
    const events = recorder(inf);
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await inf.waitForSync();
    await until(() => calls.filter((c) => c.startsWith('watch')).length >= 4);
    stop.abort();
    await run;
    // Never a list or watch of every namespace: the rights it needs are in a and b alone.
    expect(calls.filter((c) => c.includes('(all)'))).toEqual([]);
    expect(calls.filter((c) => c.startsWith('list')).sort()).toEqual(['list a', 'list a', 'list b']);
    expect(calls.filter((c) => c.startsWith('watch a')).sort()).toEqual(['watch a@10', 'watch a@15']);
    expect(calls.filter((c) => c.startsWith('watch b')).sort()).toEqual(['watch b@20', 'watch b@21']);
    expect(events.sort()).toEqual(['add a1@5', 'add b1@6', 'add b2@21', 'delete a1'].sort());
    expect(
      inf
        .list()
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
        .sort(),
    ).toEqual(['b/b1', 'b/b2']);
  });

  test('synced only once every namespace has listed', async () => {
    let releaseB!: () => void;
    const bListed = new Promise<void>((r) => (releaseB = r));
    const { client } = perNamespace({
      a: { lists: [async () => list('1', [obj('a1', '1', 'a')])], watches: [] },
      b: {
        lists: [
          async () => {
            await bListed;
            return list('2', [obj('b1', '2', 'b')]);
          },
        ],
        watches: [],
      },
    });
    const inf = new Informer(client, BuiltinTypes.ConfigMap, { logger, namespaces: ['a', 'b'] });
    const adds: boolean[] = [];
    inf.addHandler({ onAdd: (_o, initialList) => adds.push(initialList) });
    const stop = new AbortController();
    const run = inf.run(stop.signal);
    await until(() => inf.size === 1);
    expect(inf.hasSynced()).toBe(false);
    releaseB();
    await inf.waitForSync();
    expect(inf.size).toBe(2);
    // Both came with their namespace's first list.
    expect(adds).toEqual([true, true]);
    stop.abort();
    await run;
  });
});
