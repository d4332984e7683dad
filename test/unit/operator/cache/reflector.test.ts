import pino from 'pino';
import type { KubeObject } from '../../../../constructs/contract';
import { BuiltinTypes } from '../../../../constructs';
import { InformerDecoder } from '../../../../operator/runtime/cache/decoder';
import { Reflector, type ReflectorSink } from '../../../../operator/runtime/cache/reflector';
import { namespaceInRange, shardRange } from '../../../../operator/runtime/cache/sharding';
import { FakeListWatch, list, obj } from '../support/fake-client';

const logger = pino({ level: 'silent' });

/** A sink that writes down what the reflector hands it. */
function recordingSink() {
  const calls: string[] = [];
  const sink: ReflectorSink<KubeObject> = {
    replace: (namespace, listed, initialList) => {
      calls.push(`replace ${namespace ?? '(all)'} [${[...listed.keys()].join(',')}]${initialList ? ' initial' : ''}`);
    },
    apply: (event, key, o) => {
      calls.push(`${event} ${key}@${o.metadata.resourceVersion}`);
    },
    synced: () => {
      calls.push('synced');
    },
  };
  return { sink, calls };
}

/** Runs the reflector until `done` holds (checked after each turn of the event loop), then stops it. */
async function runUntil(reflector: Reflector<KubeObject>, done: () => boolean): Promise<void> {
  const stop = new AbortController();
  const run = reflector.run(stop.signal);
  while (!done()) await new Promise((r) => setImmediate(r));
  stop.abort();
  await run;
}

const reflectorOver = (
  fake: FakeListWatch,
  sink: ReflectorSink<KubeObject>,
  namespaces: (string | undefined)[] = [undefined],
) =>
  new Reflector(
    fake.asClient(),
    BuiltinTypes.ConfigMap,
    new InformerDecoder(BuiltinTypes.ConfigMap, { logger }),
    sink,
    {
      namespaces,
      logger,
    },
  );

describe('Reflector', () => {
  test('hands the whole paged list to the sink once, typed, then each watched change; bookmarks only move where it resumes', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(
      { metadata: { resourceVersion: '9', continue: 'next' }, items: [obj('a', '5')] },
      list('10', [{ metadata: { name: 'b', namespace: 'ns', resourceVersion: '6' } }]),
    );
    fake.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('c', '11') });
      emit({ type: 'DELETED', object: obj('a', '12') });
      emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
    });
    const { sink, calls } = recordingSink();
    const reflector = reflectorOver(fake, sink);
    expect(reflector.seenResourceVersion(undefined)).toBe('');
    await runUntil(reflector, () => fake.watchQueries.length >= 2);
    expect(calls).toEqual(['replace (all) [ns/a,ns/b] initial', 'synced', 'ADDED ns/c@11', 'DELETED ns/a@12']);
    expect(fake.listQueries.map((q) => q.continue)).toEqual([undefined, 'next']);
    expect(fake.watchQueries.map((q) => q.resourceVersion)).toEqual(['10', '20']);
    expect(reflector.seenResourceVersion('any')).toBe('20');
  });

  test('after a 410 it lists again: the sink replaces with the new list, not as a first list, and is not told synced again', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('a', '5')]), list('30', [obj('b', '25')]));
    fake.watches.push(async (emit) => {
      emit({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } });
    });
    const { sink, calls } = recordingSink();
    await runUntil(reflectorOver(fake, sink), () => fake.watchQueries.length >= 2);
    expect(calls).toEqual(['replace (all) [ns/a] initial', 'synced', 'replace (all) [ns/b]']);
    expect(fake.watchQueries.map((q) => q.resourceVersion)).toEqual(['10', '30']);
  });

  test('given namespaces, one list each; synced once all have listed; each resumes where it was', async () => {
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('a1', '5', 'a')]), list('11', [obj('b1', '6', 'b')]));
    const { sink, calls } = recordingSink();
    const reflector = reflectorOver(fake, sink, ['a', 'b', 'a']);
    await runUntil(reflector, () => fake.watchQueries.length >= 2);
    expect(calls.filter((c) => c.startsWith('replace')).sort()).toEqual([
      'replace a [a/a1] initial',
      'replace b [b/b1] initial',
    ]);
    expect(calls.filter((c) => c === 'synced')).toHaveLength(1);
    expect(calls.indexOf('synced')).toBe(2);
    expect(fake.listCalls).toBe(2);
  });

  test('sharded: asks the server for its range; what comes from outside it is not handed on, and said to be filtered here', async () => {
    const range = shardRange(0, 2);
    const candidates = Array.from({ length: 64 }, (_, i) => `team-${String(i)}`);
    const inside = candidates.find((n) => namespaceInRange(n, range))!;
    const outside = candidates.find((n) => !namespaceInRange(n, range))!;
    const fake = new FakeListWatch();
    fake.lists.push(list('10', [obj('in', '5', inside), obj('out', '6', outside)]));
    const servedBy: string[] = [];
    const { sink, calls } = recordingSink();
    const reflector = reflectorOver(fake, sink);
    reflector.restrictTo({ range, onServedBy: (_resource, by) => servedBy.push(by) });
    await runUntil(reflector, () => fake.watchQueries.length >= 1);
    expect(fake.listQueries[0]?.shardSelector).toBeDefined();
    expect(fake.watchQueries[0]?.shardSelector).toBe(fake.listQueries[0]?.shardSelector);
    expect(calls[0]).toBe(`replace (all) [${inside}/in] initial`);
    expect(servedBy).toEqual(['client']);
  });
});
