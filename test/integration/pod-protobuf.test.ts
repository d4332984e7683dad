/**
 * Pods read in protobuf (the runtime's watch path for its heaviest objects) against Pods read as
 * JSON and then transformed, from a real API server: the two caches hold the same objects in
 * every state the health model reads (running, crash-looping, an image that cannot be pulled,
 * unschedulable, terminating, init containers), through creates, changes and deletes; and the
 * server's error answers read the same in either encoding (a watch's ERROR event, which the
 * server sends for a compacted resourceVersion, is read by the unit tests and by
 * reconciler-resilience's 410).
 */
import pino from 'pino';
import { BuiltinTypes, type Pod } from '../../constructs/contract';
import { cacheDecoder, cacheTransform, Informer } from '../../operator/runtime/cache';
import {
  ApiError,
  HttpKubeClient,
  type KubeClient,
  loadKubeConfig,
  type ObjectDecoder,
} from '../../operator/runtime/client';
import { CRASH_LOOP_LABEL, IMAGE_PULL_FAILURE_LABEL } from '../../testing';
import { createTestNamespace, eventually, kubectlOk, testKubeconfig, testWithNodes } from '../support/kube';
import { serviceAccountKubeconfig } from '../support/reconciler';

jest.setTimeout(120_000);

const logger = pino({ level: 'silent' });
const FIELD_MANAGER = 'pod-protobuf-test';

const pods = (ns: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {note: "héllo wörld ✓ 😀"}}
    spec:
      initContainers: [{name: init, image: busybox}]
      containers: [{name: main, image: nginx}, {name: side, image: busybox}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: crash, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: crash}}
  template:
    metadata: {labels: {app: crash, ${CRASH_LOOP_LABEL}: "true"}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: unpullable, namespace: ${ns}, labels: {${IMAGE_PULL_FAILURE_LABEL}: "true"}}
spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: nowhere, namespace: ${ns}, finalizers: [example.com/hold]}
spec: {nodeSelector: {no-such-node: "true"}, containers: [{name: main, image: nginx}]}
`;

function client(kubeconfig: string): HttpKubeClient {
  return new HttpKubeClient(loadKubeConfig({ path: kubeconfig }), { fieldManager: FIELD_MANAGER });
}

/** Counts the objects a decoder made, to show the protobuf path was the one taken. */
function counted(decoder: ObjectDecoder): { decoder: ObjectDecoder; readonly count: number } {
  let count = 0;
  return {
    decoder: (r, end) => {
      count++;
      return decoder(r, end);
    },
    get count() {
      return count;
    },
  };
}

function podInformer(kube: KubeClient, ns: string, protobuf?: ObjectDecoder): Informer<Pod> {
  return new Informer<Pod>(kube, BuiltinTypes.Pod, {
    namespace: ns,
    logger,
    transform: cacheTransform(FIELD_MANAGER, BuiltinTypes.Pod),
    protobuf,
  });
}

const byName = (inf: Informer<Pod>): Record<string, Pod> =>
  Object.fromEntries(inf.list().map((p) => [p.metadata.name, p]));

/** Both caches at the same resourceVersion and equal (crash loops keep changing: waits for a moment both caught up). */
async function sameCaches(
  ns: string,
  a: Informer<Pod>,
  b: Informer<Pod>,
  what: string,
  check: (pods: Record<string, Pod>) => boolean,
) {
  return eventually(
    what,
    () => {
      const rv = a.seenResourceVersion(ns);
      if (rv === '' || rv !== b.seenResourceVersion(ns)) return undefined;
      const fromProtobuf = byName(a);
      const fromJson = byName(b);
      if (!check(fromJson)) return undefined;
      expect(fromProtobuf).toEqual(fromJson);
      return fromJson;
    },
    90_000,
  );
}

const waitingReason = (p: Pod | undefined) => p?.status?.containerStatuses?.[0]?.state?.waiting?.reason;

testWithNodes(
  'an informer reading Pods in protobuf caches what one reading JSON caches, through creates, changes and deletes',
  async () => {
    const kubeconfig = testKubeconfig();
    const ns = createTestNamespace('pod-protobuf');
    kubectlOk(['apply', '-f', '-'], { input: pods(ns) });
    // kubectl's client-side apply leaves its last-applied copy on the Pod, which the cache drops.
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"applied"},"spec":{"containers":[{"name":"main","image":"nginx"}]}}`,
    });
    const kube = client(kubeconfig);
    const decoder = counted(cacheDecoder(BuiltinTypes.Pod)!);
    const viaProtobuf = podInformer(kube, ns, decoder.decoder);
    const viaJson = podInformer(kube, ns);
    const stop = new AbortController();
    const running = [viaProtobuf.run(stop.signal), viaJson.run(stop.signal)];
    try {
      await Promise.all([viaProtobuf.waitForSync(), viaJson.waitForSync()]);
      const settled = await sameCaches(ns, viaProtobuf, viaJson, 'every pod in the state it is made for', (p) => {
        const all = Object.values(p);
        const crashing = all.filter((pod) => pod.metadata.labels?.app === 'crash');
        const web = all.filter((pod) => pod.metadata.labels?.app === 'web');
        return (
          all.length === 8 &&
          crashing.every((pod) => waitingReason(pod) === 'CrashLoopBackOff') &&
          web.every((pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) &&
          waitingReason(p.unpullable) !== undefined &&
          !!p.nowhere?.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False')
        );
      });
      // The states compared are the ones the decoder has to get right.
      const crash = Object.values(settled).find((pod) => pod.metadata.labels?.app === 'crash');
      expect(crash?.status?.containerStatuses?.[0]?.lastState?.terminated).toEqual({ exitCode: 1, reason: 'Error' });
      const web = Object.values(settled).find((pod) => pod.metadata.labels?.app === 'web');
      expect(web?.metadata.annotations).toEqual({ note: 'héllo wörld ✓ 😀' });
      expect(web?.status?.initContainerStatuses?.map((c) => c.name)).toEqual(['init']);
      expect(web?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
      expect(settled.applied?.metadata.annotations).toEqual({});
      expect(settled.nowhere?.metadata.finalizers).toEqual(['example.com/hold']);
      expect(decoder.count).toBeGreaterThanOrEqual(8);

      // Changes and deletes: a terminating pod held by its finalizer, web scaled down.
      kubectlOk(['delete', 'pod', 'nowhere', '-n', ns, '--wait=false']);
      kubectlOk(['scale', 'deployment', 'web', '-n', ns, '--replicas=1']);
      const changed = await sameCaches(
        ns,
        viaProtobuf,
        viaJson,
        'the deletes seen',
        (p) =>
          !!p.nowhere?.metadata.deletionTimestamp &&
          Object.values(p).filter((pod) => pod.metadata.labels?.app === 'web').length === 1,
      );
      expect(changed.nowhere?.metadata.deletionGracePeriodSeconds).toBe(0);
      kubectlOk(['patch', 'pod', 'nowhere', '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
      await sameCaches(ns, viaProtobuf, viaJson, 'the finalized pod gone', (p) => !p.nowhere);
    } finally {
      stop.abort();
      await Promise.allSettled(running);
      kube.close();
    }
  },
);

test("the server's error answers read the same in protobuf: a refused watch and a refused list", async () => {
  const kubeconfig = testKubeconfig();
  const ns = createTestNamespace('pod-protobuf-errors');
  const kube = client(kubeconfig);
  const asSeen = (err: unknown) =>
    err instanceof ApiError ? { status: err.status, reason: err.reason, message: err.message } : err;
  try {
    // A field the server cannot select by: 400 to the watch request itself.
    const refusedWatch = async (protobuf?: ObjectDecoder) => {
      const stop = new AbortController();
      try {
        await kube.watch(BuiltinTypes.Pod, {
          namespace: ns,
          query: { fieldSelector: 'spec.noSuchField=1' },
          onEvent: () => undefined,
          signal: stop.signal,
          protobuf,
        });
        return undefined;
      } catch (err) {
        return asSeen(err);
      } finally {
        stop.abort();
      }
    };
    const jsonWatchError = await refusedWatch();
    expect(jsonWatchError).toMatchObject({
      status: 400,
      reason: 'BadRequest',
      message: expect.stringContaining('field label not supported: spec.noSuchField'),
    });
    expect(await refusedWatch(cacheDecoder(BuiltinTypes.Pod))).toEqual(jsonWatchError);

    // A ServiceAccount with no rights: 403, with the server's message either way.
    kubectlOk(['create', 'serviceaccount', 'nobody', '-n', ns]);
    const nobody = serviceAccountKubeconfig({ kubeconfig, namespace: ns, serviceAccount: 'nobody' });
    const refused = async (protobuf?: ObjectDecoder) => {
      const asNobody = client(nobody);
      try {
        await asNobody.list(BuiltinTypes.Pod, ns, {}, { protobuf });
        return undefined;
      } catch (err) {
        return err;
      } finally {
        asNobody.close();
      }
    };
    const jsonError = asSeen(await refused());
    expect(jsonError).toMatchObject({
      status: 403,
      reason: 'Forbidden',
      message: expect.stringContaining('cannot list'),
    });
    expect(asSeen(await refused(cacheDecoder(BuiltinTypes.Pod)))).toEqual(jsonError);
  } finally {
    kube.close();
  }
});
