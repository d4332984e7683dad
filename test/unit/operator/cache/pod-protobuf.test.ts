import * as fs from 'node:fs';
import * as path from 'node:path';
import { BuiltinTypes, type KubeObject, type Pod } from '../../../../constructs/contract';
import { cacheDecoder, cacheTransform } from '../../../../operator/runtime/cache';
import type { WatchEvent } from '../../../../operator/runtime/client';
import { decodeList, decodeWatchEvent, FrameReader } from '../../../../operator/runtime/client/protobuf';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'fixtures', 'pod-protobuf');
const read = (name: string) => fs.readFileSync(path.join(FIXTURES, name));
const transform = cacheTransform('some-manager', BuiltinTypes.Pod);
const decoder = cacheDecoder(BuiltinTypes.Pod);
const asJson = (items: KubeObject[]) => items.map((p) => transform({ ...p, apiVersion: 'v1', kind: 'Pod' }));

function protobufEvents(): WatchEvent[] {
  if (!decoder) throw new Error('no Pod decoder');
  const events: WatchEvent[] = [];
  new FrameReader((frame) => events.push(decodeWatchEvent(frame, decoder))).push(read('pod-watch.pb'));
  return events;
}

describe('Pods read from protobuf into what the cache keeps', () => {
  test('only Pods have a decoder: other types are read as JSON', () => {
    expect(cacheDecoder(BuiltinTypes.Pod)).toBeDefined();
    expect(cacheDecoder(BuiltinTypes.Deployment)).toBeUndefined();
    expect(cacheDecoder(BuiltinTypes.ConfigMap)).toBeUndefined();
  });

  test("a list's pods equal the JSON list's pods through the cache transform", () => {
    const json = JSON.parse(read('pod-list.json').toString('utf8')) as { metadata: object; items: KubeObject[] };
    const list = decodeList<Pod>(read('pod-list.pb'), decoder!);
    expect(list.metadata).toEqual(json.metadata);
    expect(list.items).toHaveLength(json.items.length);
    expect(list.items).toEqual(asJson(json.items));
  });

  test('the fixture holds every state the health model reads, so the comparison covers them', () => {
    const pods = decodeList<Pod>(read('pod-list.pb'), decoder!).items;
    const crashing = pods.find((p) => p.metadata.labels?.app === 'crash');
    expect(crashing?.status?.containerStatuses?.[0]).toMatchObject({
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error' } },
    });
    const web = pods.find((p) => p.metadata.labels?.app === 'web');
    expect(web?.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0 });
    expect(web?.metadata.annotations?.note).toBe('héllo wörld ✓ 😀');
    expect(web?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
    expect(web?.metadata.managedFields).toBeUndefined();
    expect(
      pods.find((p) => p.metadata.name === 'imgpull')?.status?.containerStatuses?.[0]?.state?.waiting,
    ).toBeDefined();
    const unscheduled = pods.find((p) => p.metadata.name === 'unschedulable');
    expect(unscheduled?.metadata).toMatchObject({ finalizers: ['example.com/hold'] });
    expect(unscheduled?.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(unscheduled?.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }),
    );
    // kubectl's last-applied copy is dropped; the map it was in stays, as the transform leaves it.
    const applied = protobufEvents().find((e) => e.type === 'ADDED' && e.object.metadata.name === 'applied');
    expect(applied?.type === 'ADDED' && applied.object.metadata.annotations).toEqual({});
  });

  test("a watch's events equal the JSON watch's, event by event: adds, changes and deletes", () => {
    const json = read('pod-watch.ndjson')
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; object: KubeObject });
    const events = protobufEvents();
    expect(events.map((e) => e.type)).toEqual(json.map((e) => e.type));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['ADDED', 'MODIFIED', 'DELETED']));
    expect(events.map((e) => e.object)).toEqual(json.map((e) => transform(e.object)));
  });

  test('the watch stream reads the same whatever its chunks', () => {
    const whole = read('pod-watch.pb');
    const expected = protobufEvents();
    for (const size of [1, 3, 4, 5, 100, 4096]) {
      const events: WatchEvent[] = [];
      const frames = new FrameReader((frame) => events.push(decodeWatchEvent(frame, decoder!)));
      for (let at = 0; at < whole.length; at += size) frames.push(whole.subarray(at, at + size));
      expect({ size, events }).toEqual({ size, events: expected });
      expect(frames.buffered).toBe(0);
    }
  });
});
