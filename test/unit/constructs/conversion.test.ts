/**
 * Versions with schemas of their own: the conversion of whole objects through the hub (the
 * storage version), the annotation that keeps what a version cannot hold, the checks a kind's
 * conversions get at synth, and the ConversionReview the reconciler answers.
 */
import { Testing } from 'cdk8s';
import {
  conversionAnnotation,
  convertObject,
  CustomResourceDefinition,
  CustomResourceKind,
  memcachedKind,
  spokeVersion,
  t,
} from '../../../constructs';
import { convertReview } from '../../../operator/runtime/webhooks/conversion-review';

const V1 = 'cache.example.com/v1';
const V1ALPHA1 = 'cache.example.com/v1alpha1';
const KEPT = conversionAnnotation(memcachedKind);

const memcached = (apiVersion: string, spec: object, annotations?: Record<string, string>) => ({
  apiVersion,
  kind: 'Memcached',
  metadata: {
    name: 'cache',
    namespace: 'team',
    uid: 'u-1',
    resourceVersion: '7',
    ...(annotations ? { annotations } : {}),
  },
  spec,
  status: { readyReplicas: 2, nodes: ['a', 'b'] },
});

const v1Spec = { size: 3, image: 'memcached:1.6', containerPort: 11211, memory: '1Gi' };
const v1alpha1Spec = { size: 3, image: 'memcached:1.6', containerPort: 11211, maxMemoryMB: 1024 };

describe('Memcached v1alpha1 ↔ v1', () => {
  test('v1alpha1 maxMemoryMB is v1 memory, and back; metadata and status pass through', () => {
    const up = convertObject(memcachedKind, memcached(V1ALPHA1, v1alpha1Spec), V1);
    expect(up).toEqual(memcached(V1, v1Spec));
    const down = convertObject(memcachedKind, up, V1ALPHA1);
    expect(down).toEqual(memcached(V1ALPHA1, v1alpha1Spec));
  });

  test('a quantity v1alpha1 can only round rides in an annotation, and comes back exactly', () => {
    const exact = { ...v1Spec, memory: '1G' };
    const down = convertObject(memcachedKind, memcached(V1, exact), V1ALPHA1);
    // 10⁹ bytes are 953.7 MiB: memcached gets 954.
    expect(down.spec).toEqual({ ...v1alpha1Spec, maxMemoryMB: 954 });
    expect(JSON.parse(down.metadata.annotations![KEPT]!)).toEqual(exact);
    const back = convertObject(memcachedKind, down, V1);
    expect(back.spec).toEqual(exact);
    expect(back.metadata.annotations).toBeUndefined();
  });

  test('changed as v1alpha1: the fields it changed win, those it left alone keep their exact v1 value', () => {
    const down = convertObject(memcachedKind, memcached(V1, { ...v1Spec, memory: '1G' }), V1ALPHA1);
    const resized = { ...down, spec: { ...down.spec, size: 5 } };
    expect(convertObject(memcachedKind, resized, V1).spec).toEqual({ ...v1Spec, size: 5, memory: '1G' });
    const moreMemory = { ...down, spec: { ...down.spec, maxMemoryMB: 2048 } };
    expect(convertObject(memcachedKind, moreMemory, V1).spec).toEqual({ ...v1Spec, memory: '2Gi' });
  });

  test('other annotations stay; a lossless conversion adds none', () => {
    const down = convertObject(memcachedKind, memcached(V1, v1Spec, { team: 'a' }), V1ALPHA1);
    expect(down.metadata.annotations).toEqual({ team: 'a' });
  });

  test('a version the kind does not serve is refused, naming those it does', () => {
    expect(() => convertObject(memcachedKind, memcached(V1, v1Spec), 'cache.example.com/v2')).toThrow(
      /not served as "cache.example.com\/v2"; it is served as cache.example.com\/v1alpha1, cache.example.com\/v1/,
    );
  });

  test("every sample of the kit's Memcached converts cleanly, and one v1alpha1 cannot hold is reported", () => {
    expect(memcachedKind.conversionProblems(v1Spec)).toEqual([]);
    // 64Gi is v1's maximum, and v1alpha1's 65536 MiB.
    expect(memcachedKind.conversionProblems({ ...v1Spec, memory: '64Gi' })).toEqual([]);
    const bad = { ...v1Spec, memory: '65Gi' };
    expect(memcachedKind.conversionProblems(bad)).toEqual([
      'as v1alpha1: spec.maxMemoryMB: Invalid value: 66560: should be less than or equal to 65536',
    ]);
  });
});

describe('a kind with conversions is checked when defined', () => {
  const hub = t.object({ replicas: t.integer({ required: true }) });
  const old = t.object({ size: t.integer({ required: true }) });
  const status = t.object({});
  const base = {
    group: 'apps.example.com',
    kind: 'Thing',
    versions: ['v1beta1', 'v1'],
    description: 'A thing.',
    spec: hub,
    status,
  };
  const rename = spokeVersion<typeof old, { replicas: number }>({
    spec: old,
    toHub: ({ size }) => ({ replicas: size }),
    fromHub: ({ replicas }) => ({ size: replicas }),
  });

  test('conversions for the storage version, or for a version not served, are refused', () => {
    expect(() => new CustomResourceKind({ ...base, conversions: { v1: rename } })).toThrow(
      /v1 is the storage version, the hub the others convert to; it needs no conversion/,
    );
    expect(() => new CustomResourceKind({ ...base, conversions: { v2: rename } })).toThrow(
      /conversions name "v2", which is not among the versions/,
    );
  });

  test('an example that does not come back unchanged is refused, saying what came back', () => {
    const lossy = spokeVersion<typeof old, { replicas: number }>({
      spec: old,
      toHub: ({ size }) => ({ replicas: size }),
      fromHub: () => ({ size: 1 }),
      examples: [{ size: 3 }],
    });
    expect(() => new CustomResourceKind({ ...base, conversions: { v1beta1: lossy } })).toThrow(
      /the v1beta1 example \{"size":3\} does not convert cleanly: v1beta1 → v1 → v1beta1 gives \{"size":1\}/,
    );
  });

  test('a spec is converted as the API server stores it: a field its schema defaults is there to convert', () => {
    // v1 moved `port` under `network`, an object defaulted whole; a sample that leaves it out is
    // stored with it (the API server defaults before it converts), so it converts cleanly.
    const v1 = t.object({ network: t.object({ port: t.integer({ default: 8080 }) }, { default: {} }) });
    const v1alpha1 = t.object({ port: t.integer({ default: 8080 }) });
    const kind = new CustomResourceKind({
      ...base,
      versions: ['v1alpha1', 'v1'],
      spec: v1,
      conversions: {
        v1alpha1: spokeVersion<typeof v1alpha1, { network: { port: number } }>({
          spec: v1alpha1,
          toHub: ({ port }) => ({ network: { port } }),
          fromHub: ({ network }) => ({ port: network.port }),
        }),
      },
    });
    expect(kind.conversionProblems({})).toEqual([]);
    expect(kind.conversionProblems({ network: { port: 9000 } })).toEqual([]);
  });

  test('each version gets its own schema; the CRD calls the webhook, and cannot be made without one', () => {
    const kind = new CustomResourceKind({ ...base, conversions: { v1beta1: rename } });
    expect(kind.needsConversion).toBe(true);
    expect(() => new CustomResourceDefinition(Testing.chart(), 'crd', { kind })).toThrow(
      /versions v1beta1, v1 have schemas of their own, so the API server needs a conversion webhook/,
    );
    const chart = Testing.chart();
    new CustomResourceDefinition(chart, 'crd', { kind, conversionWebhook: { url: 'https://127.0.0.1:9443/convert' } });
    const [crd] = Testing.synth(chart);
    const specFields = (i: number) =>
      Object.keys(crd.spec.versions[i].schema.openAPIV3Schema.properties.spec.properties);
    expect([specFields(0), specFields(1)]).toEqual([['size'], ['replicas']]);
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { url: 'https://127.0.0.1:9443/convert' }, conversionReviewVersions: ['v1'] },
    });
  });

  test('a kind whose versions share one schema needs no webhook, as before', () => {
    const kind = new CustomResourceKind(base);
    expect(kind.needsConversion).toBe(false);
    const chart = Testing.chart();
    new CustomResourceDefinition(chart, 'crd', { kind });
    expect(Testing.synth(chart)[0].spec.conversion).toBeUndefined();
  });
});

describe('a ConversionReview', () => {
  test('converts every object to the desired version', () => {
    const response = convertReview([memcachedKind], {
      uid: 'r-1',
      desiredAPIVersion: V1ALPHA1,
      objects: [memcached(V1, v1Spec), memcached(V1, { ...v1Spec, size: 1 })],
    });
    expect(response.result).toEqual({ status: 'Success' });
    expect(response.uid).toBe('r-1');
    expect(response.convertedObjects.map((o) => o.spec)).toEqual([v1alpha1Spec, { ...v1alpha1Spec, size: 1 }]);
  });

  test('fails as a whole, naming the object, when one cannot be converted', () => {
    const response = convertReview([memcachedKind], {
      uid: 'r-2',
      desiredAPIVersion: 'cache.example.com/v9',
      objects: [memcached(V1, v1Spec)],
    });
    expect(response.convertedObjects).toEqual([]);
    expect(response.result).toEqual({
      status: 'Failure',
      message: expect.stringMatching(/^Memcached team\/cache: cannot convert to cache.example.com\/v9: /),
    });
    const other = convertReview([memcachedKind], {
      uid: 'r-3',
      desiredAPIVersion: V1,
      objects: [{ apiVersion: 'apps.example.com/v1', kind: 'Thing', metadata: { name: 'x' } }],
    });
    expect(other.result).toEqual({
      status: 'Failure',
      message: 'Thing x: this operator converts no Thing of apps.example.com/v1',
    });
  });
});
