import type { KubeObject } from '../../../../constructs/contract';
import {
  extractApplied,
  needsApply,
  pruneEmpty,
  pruneEmptyShared,
  sameJson,
} from '../../../../operator/runtime/client/managed-fields';
import { deepFreeze } from '../../../../operator/runtime/client/resource';

const MANAGER = 'cdk8s-operator-kit';

/** What our manager applied: a Deployment with two labels, an owner, resources and a port. */
const desired = (): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'ns',
    labels: { app: 'web', tier: 'cache' },
    ownerReferences: [
      { apiVersion: 'x.io/v1', kind: 'Web', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true },
    ],
  },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'nginx:1',
            ports: [{ containerPort: 80, name: 'http' }],
            resources: { limits: { cpu: '1' } },
            volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
          },
        ],
        volumes: [{ name: 'tmp', emptyDir: {} }],
      },
    },
  },
});

/** The field set the API server records for that apply (fieldsV1, as kube-apiserver writes it). */
const appliedFields = () => ({
  'f:metadata': {
    'f:labels': { 'f:app': {}, 'f:tier': {} },
    'f:ownerReferences': { 'k:{"uid":"u1"}': {} },
  },
  'f:spec': {
    'f:replicas': {},
    'f:selector': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"main"}': {
            '.': {},
            'f:image': {},
            'f:name': {},
            'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {} } },
            'f:resources': { 'f:limits': { 'f:cpu': {} } },
            'f:volumeMounts': { 'k:{"mountPath":"/tmp"}': { '.': {}, 'f:mountPath': {}, 'f:name': {} } },
          },
        },
        'f:volumes': { 'k:{"name":"tmp"}': { '.': {}, 'f:emptyDir': {}, 'f:name': {} } },
      },
    },
  },
});

/** The live object: what was applied, plus server defaults, status and another manager's fields. */
function live(fields = appliedFields(), mutate: (o: any) => void = () => undefined): KubeObject {
  const o: any = desired();
  o.metadata.uid = 'd1';
  o.metadata.resourceVersion = '7';
  o.metadata.labels.extra = 'set-by-someone-else';
  o.metadata.managedFields = [
    { manager: MANAGER, operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: fields },
    {
      manager: 'kubectl-label',
      operation: 'Update',
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:extra': {} } } },
    },
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'apps/v1',
      subresource: 'status',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': {} },
    },
  ];
  o.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
  o.spec.template.spec.containers[0].imagePullPolicy = 'IfNotPresent';
  o.spec.template.spec.containers[0].ports[0].protocol = 'TCP';
  o.spec.template.spec.restartPolicy = 'Always';
  o.status = { replicas: 3 };
  mutate(o);
  return o;
}

describe('needsApply: the change check against what our field manager owns', () => {
  test("a settled object needs no apply, despite defaults, status and other managers' fields", () => {
    expect(needsApply(desired(), live(), MANAGER)).toBe(false);
  });

  test('an answer for a frozen desired object (a kept render) holds while the live object stays at its resourceVersion', () => {
    const frozen = deepFreeze(desired());
    let reads = 0;
    const counted = (rv: string, fields = appliedFields()): KubeObject => {
      const o = live(fields);
      o.metadata.resourceVersion = rv;
      const entries = o.metadata.managedFields;
      Object.defineProperty(o.metadata, 'managedFields', {
        get: () => {
          reads++;
          return entries;
        },
      });
      return o;
    };
    expect(needsApply(frozen, counted('7'), MANAGER)).toBe(false);
    const readsFirst = reads;
    expect(readsFirst).toBeGreaterThan(0);
    // The same state again (another reconcile, or the apply after the hold check): not compared again.
    expect(needsApply(frozen, counted('7'), MANAGER)).toBe(false);
    expect(reads).toBe(readsFirst);
    // A new resourceVersion is compared afresh: here another manager took spec.replicas.
    const fields = appliedFields() as any;
    delete fields['f:spec']['f:replicas'];
    expect(needsApply(frozen, counted('8', fields), MANAGER)).toBe(true);
    expect(reads).toBeGreaterThan(readsFirst);
    // As is another manager's question.
    const readsBefore = reads;
    expect(needsApply(frozen, counted('8', fields), 'someone-else')).toBe(true);
    expect(reads).toBeGreaterThan(readsBefore);
  });

  test('a desired object that is not frozen is compared every time: it may have changed in between', () => {
    const d = desired() as any;
    expect(needsApply(d, live(), MANAGER)).toBe(false);
    d.spec.replicas = 4;
    expect(needsApply(d, live(), MANAGER)).toBe(true);
  });

  test('the same holds for an object from a LIST, which carries no apiVersion/kind', () => {
    const fromList = live();
    delete fromList.apiVersion;
    delete fromList.kind;
    expect(needsApply(desired(), fromList, MANAGER)).toBe(false);
  });

  test('a field removed from the desired object is a change (the case a subset check misses)', () => {
    const d = desired() as any;
    delete d.spec.template.spec.containers[0].resources;
    expect(needsApply(d, live(), MANAGER)).toBe(true);
    const noOwner = desired() as any;
    delete noOwner.metadata.ownerReferences;
    expect(needsApply(noOwner, live(), MANAGER)).toBe(true);
    const oneLabel = desired() as any;
    delete oneLabel.metadata.labels.tier;
    expect(needsApply(oneLabel, live(), MANAGER)).toBe(true);
  });

  test('a changed value, an added field or a list element added or reordered is a change', () => {
    const d = desired() as any;
    d.spec.replicas = 4;
    expect(needsApply(d, live(), MANAGER)).toBe(true);
    const added = desired() as any;
    added.spec.template.spec.containers[0].args = ['-v'];
    expect(needsApply(added, live(), MANAGER)).toBe(true);
    const twoPorts = desired() as any;
    twoPorts.spec.template.spec.containers[0].ports.push({ containerPort: 81, name: 'alt' });
    expect(needsApply(twoPorts, live(), MANAGER)).toBe(true);
  });

  test('a value another manager changed, taking the field from us, is a change', () => {
    const fields = appliedFields() as any;
    delete fields['f:spec']['f:replicas'];
    expect(
      needsApply(
        desired(),
        live(fields, (o) => {
          o.spec.replicas = 7;
        }),
        MANAGER,
      ),
    ).toBe(true);
  });

  test('an object we never applied, or applied at another version, needs an apply', () => {
    expect(needsApply(desired(), undefined, MANAGER)).toBe(true);
    expect(needsApply(desired(), live(), 'someone-else')).toBe(true);
    const older = live();
    (older.metadata.managedFields as any[])[0].apiVersion = 'apps/v1beta2';
    expect(needsApply(desired(), older, MANAGER)).toBe(true);
  });

  test('an atomic value (owned whole) may carry server defaults, but not lose or change what we applied', () => {
    const sts = (claim: object): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'ns' },
      spec: { volumeClaimTemplates: [claim] },
    });
    const applied = {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
    // What the API server returns for the atomic list: defaults and a status added.
    const defaulted = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      ...applied,
      spec: { ...applied.spec, volumeMode: 'Filesystem' },
      status: { phase: 'Pending' },
    };
    const live = sts(defaulted);
    live.metadata.managedFields = [
      {
        manager: MANAGER,
        operation: 'Apply',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:volumeClaimTemplates': {} } },
      },
    ];
    expect(needsApply(sts(applied), live, MANAGER)).toBe(false);
    expect(
      needsApply(
        sts({ ...applied, spec: { ...applied.spec, resources: { requests: { storage: '2Gi' } } } }),
        live,
        MANAGER,
      ),
    ).toBe(true);
  });

  test('a field set of an unknown form is not trusted', () => {
    const fields = appliedFields() as any;
    fields['f:spec']['z:odd'] = {};
    expect(needsApply(desired(), live(fields), MANAGER)).toBe(true);
  });
});

describe('needsApply: values the API server normalizes', () => {
  /** desired() with other resource spellings, against a live object holding the canonical ones. */
  const withResources = (desiredLimits: Record<string, unknown>, liveLimits: Record<string, unknown>) => {
    const d: any = desired();
    d.spec.template.spec.containers[0].resources = { limits: desiredLimits };
    const fields: any = appliedFields();
    fields['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"main"}']['f:resources'] = {
      'f:limits': Object.fromEntries(Object.keys(liveLimits).map((k) => [`f:${k}`, {}])),
    };
    const l = live(fields, (o) => {
      o.spec.template.spec.containers[0].resources = { limits: liveLimits };
    });
    return { d, l };
  };

  test.each([
    ['2048Mi', '2Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5', '500m'],
    [1, '1'],
    ['1000M', '1G'],
    ['1e3', '1k'],
    ['0.1', '100m'],
  ])('a quantity spelled %p, stored as %p, is unchanged', (spelled, stored) => {
    const { d, l } = withResources({ cpu: spelled }, { cpu: stored });
    expect(needsApply(d, l, MANAGER)).toBe(false);
  });

  test('a quantity of another value is a change', () => {
    const { d, l } = withResources({ memory: '2049Mi' }, { memory: '2Gi' });
    expect(needsApply(d, l, MANAGER)).toBe(true);
  });

  test("quantities inside an atomic value (a StatefulSet's volumeClaimTemplates) compare by value too", () => {
    const template = (storage: string) => [
      { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } },
    ];
    const d: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 's', namespace: 'ns' },
      spec: { volumeClaimTemplates: template('1.5Gi') },
    };
    const l: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {
        name: 's',
        namespace: 'ns',
        managedFields: [
          {
            manager: MANAGER,
            operation: 'Apply',
            apiVersion: 'apps/v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:volumeClaimTemplates': {} } },
          },
        ],
      },
      // Stored canonically, with the server's defaults added.
      spec: {
        volumeClaimTemplates: [
          {
            ...template('1536Mi')[0],
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            spec: { ...template('1536Mi')[0]!.spec, volumeMode: 'Filesystem' },
          },
        ],
      },
    };
    expect(needsApply(d, l, MANAGER)).toBe(false);
    expect(needsApply({ ...d, spec: { volumeClaimTemplates: template('2Gi') } }, l, MANAGER)).toBe(true);
  });

  test.each([['averageValue'], ['value']])(
    "an autoscaler's metric target %s spelled otherwise than stored is unchanged (found by conformanceTest's quantities check: re-applied once a second)",
    (field) => {
      const hpa = (quantity: string): KubeObject => ({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h', namespace: 'ns' },
        spec: {
          metrics: [
            { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', [field]: quantity } } },
          ],
        },
      });
      const l: KubeObject = {
        ...hpa('64Mi'),
        metadata: {
          name: 'h',
          namespace: 'ns',
          managedFields: [
            {
              manager: MANAGER,
              operation: 'Apply',
              apiVersion: 'autoscaling/v2',
              fieldsType: 'FieldsV1',
              fieldsV1: { 'f:spec': { 'f:metrics': {} } },
            },
          ],
        },
      };
      expect(needsApply(hpa('65536Ki'), l, MANAGER)).toBe(false);
      expect(needsApply(hpa('65Mi'), l, MANAGER)).toBe(true);
    },
  );

  test('strings that only look like quantities outside resource fields still compare as written', () => {
    const d: any = desired();
    d.metadata.labels.tier = '1k';
    const l = live(appliedFields(), (o) => {
      o.metadata.labels.tier = '1000';
    });
    expect(needsApply(d, l, MANAGER)).toBe(true);
  });

  test('int-or-string values keep their type (the API server stores "8080" and 8080 apart): equal only as given', () => {
    const service = (targetPort: string | number): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'ns' },
      spec: { ports: [{ port: 80, targetPort }] },
    });
    const fields = {
      'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:targetPort': {} } } },
    };
    const stored = (targetPort: string | number): KubeObject => ({
      ...service(targetPort),
      metadata: {
        name: 's',
        namespace: 'ns',
        managedFields: [
          { manager: MANAGER, operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: fields },
        ],
      },
      spec: { ports: [{ port: 80, protocol: 'TCP', targetPort }] },
    });
    expect(needsApply(service('8080'), stored('8080'), MANAGER)).toBe(false);
    expect(needsApply(service('http'), stored('http'), MANAGER)).toBe(false);
    expect(needsApply(service(8080), stored('8080'), MANAGER)).toBe(true);
  });

  test('an owned field the server dropped as empty ("", false, 0) equals its zero value', () => {
    const d: any = desired();
    d.spec.template.spec.containers[0].workingDir = '';
    d.spec.template.spec.hostNetwork = false;
    const fields: any = appliedFields();
    fields['f:spec']['f:template']['f:spec']['f:hostNetwork'] = {};
    fields['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"main"}']['f:workingDir'] = {};
    expect(needsApply(d, live(fields), MANAGER)).toBe(false);
    // …and one no longer desired is absent either way…
    delete d.spec.template.spec.hostNetwork;
    expect(needsApply(d, live(fields), MANAGER)).toBe(false);
    // …but a non-empty value is a change.
    d.spec.template.spec.hostNetwork = true;
    expect(needsApply(d, live(fields), MANAGER)).toBe(true);
  });
});

describe('sameJson: equal as JSON, whatever the order of keys', () => {
  test('objects at any depth compare by their keys, not their order; lists by position', () => {
    expect(sameJson({ a: { x: 1, y: [{ p: 1, q: 2 }] }, b: 2 }, { b: 2, a: { y: [{ q: 2, p: 1 }], x: 1 } })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: [1, 2] }, { a: [1, 2, 3] })).toBe(false);
  });

  test('a key set to undefined is absent, as in JSON, on either side and at any depth; in a list it is null', () => {
    expect(sameJson({ a: { b: undefined, c: 1 } }, { a: { c: 1 } })).toBe(true);
    expect(sameJson({ a: { c: 1 } }, { a: { c: 1, d: undefined } })).toBe(true);
    expect(sameJson({ a: { c: 1 } }, { a: { c: 1, d: 2 } })).toBe(false);
    expect(sameJson({ a: { c: 1, d: 2 } }, { a: { c: 1 } })).toBe(false);
    expect(sameJson([undefined, 1], [null, 1])).toBe(true);
  });

  test('values of different JSON types differ', () => {
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson({ a: null }, { a: {} })).toBe(false);
    expect(sameJson({ a: [] }, { a: {} })).toBe(false);
    expect(sameJson({}, [])).toBe(false);
    expect(sameJson({ a: false }, { a: 0 })).toBe(false);
    expect(sameJson(undefined, undefined)).toBe(true);
    expect(sameJson({}, undefined)).toBe(false);
  });
});

describe('extractApplied', () => {
  test('returns exactly the owned fields with their live values, lists in live order', () => {
    const fields = appliedFields() as any;
    fields['f:metadata']['f:finalizers'] = { 'v:"a.io/x"': {} };
    const out = extractApplied(
      live(fields, (o) => {
        o.metadata.finalizers = ['other.io/y', 'a.io/x'];
      }),
      MANAGER,
    ) as any;
    expect(out.metadata).toEqual({
      labels: { app: 'web', tier: 'cache' },
      ownerReferences: [
        { apiVersion: 'x.io/v1', kind: 'Web', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true },
      ],
      finalizers: ['a.io/x'],
    });
    expect(out.spec.strategy).toBeUndefined();
    expect(out.spec.template.spec.containers[0]).toEqual({
      name: 'main',
      image: 'nginx:1',
      ports: [{ containerPort: 80, name: 'http' }],
      resources: { limits: { cpu: '1' } },
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
    });
    expect(out.status).toBeUndefined();
  });
});

test('pruneEmpty drops what the server drops (null, undefined, empty maps and lists), nothing else', () => {
  expect(pruneEmpty({ a: {}, b: [], c: null, d: undefined, e: 0, f: '', g: false, h: { i: {} }, j: [{}] })).toEqual({
    e: 0,
    f: '',
    g: false,
    j: [{}],
  });
});

describe('pruneEmptyShared', () => {
  const cases: unknown[] = [
    { a: {}, b: [], c: null, d: undefined, e: 0, f: '', g: false, h: { i: {} }, j: [{}] },
    {
      spec: {
        replicas: 1,
        template: { spec: { containers: [{ name: 'c', args: [], env: [{ name: 'X', value: '' }] }] } },
      },
    },
    { metadata: { labels: { a: 'b' }, annotations: {} }, list: [null, undefined, 1, [], [[]]] },
    [],
    {},
    'text',
    7,
  ];

  test.each(cases.map((c) => [JSON.stringify(c) ?? String(c), c]))('prunes %s as pruneEmpty does', (_, value) => {
    expect(pruneEmptyShared(value)).toEqual(pruneEmpty(value));
  });

  test('keeps the very object when there is nothing to prune: a render and its comparable are one tree', () => {
    const desired = {
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', ports: [{ port: 80 }] }] } } },
    };
    expect(pruneEmptyShared(desired)).toBe(desired);
  });

  test('copies only the path to what it prunes, sharing every subtree left as it was', () => {
    const containers = [{ name: 'c', ports: [{ port: 80 }] }];
    const labels = { app: 'x' };
    const desired = { metadata: { labels, annotations: {} }, spec: { template: { spec: { containers } } } };
    const pruned = pruneEmptyShared(desired) as typeof desired;
    expect(pruned).not.toBe(desired);
    expect(pruned.metadata).toEqual({ labels });
    expect(pruned.metadata.labels).toBe(labels);
    expect(pruned.spec).toBe(desired.spec);
    expect(desired.metadata.annotations).toEqual({});
  });
});
