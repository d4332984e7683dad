import { ApiObject, Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import {
  assessChildren,
  BuiltinTypes,
  ChildMap,
  constructController,
  ConstructOperator,
  constructStatus,
  CustomResourceKind,
  type KubeObject,
  madeBy,
  type Observed,
  type Pod,
  rulesForControllers,
  t,
} from '../../../constructs';
import { staticSiteController } from '../../../examples/static-site/static-site';

const kind = new CustomResourceKind({
  group: 'x.example.com',
  kind: 'Thing',
  versions: ['v1'],
  description: 'A thing.',
  spec: t.object({ claim: t.boolean() }),
  status: t.object({ ok: t.boolean() }),
});

describe('constructController', () => {
  test('owns what the examples render; prunes all of it but claims', () => {
    const c = constructController({
      kind,
      render: (scope, r, { owner }) => {
        new k8s.KubeConfigMap(scope, 'cm', { metadata: { name: r.metadata.name, ownerReferences: [owner] } });
        if (r.spec.claim)
          new k8s.KubePersistentVolumeClaim(scope, 'pvc', {
            metadata: { name: r.metadata.name },
            spec: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: k8s.Quantity.fromString('1Gi') } },
            },
          });
      },
      examples: [{ claim: false }, { claim: true }],
    });
    expect(c.name).toBe('thing');
    expect(c.owns).toEqual([BuiltinTypes.ConfigMap, BuiltinTypes.PersistentVolumeClaim]);
    expect(c.deletes).toEqual([BuiltinTypes.ConfigMap]);
  });

  test('a rendered type the kit does not know must be declared, and the error says how', () => {
    expect(() =>
      constructController({
        kind,
        render: (scope) =>
          new ApiObject(scope, 'x', {
            apiVersion: 'monitoring.coreos.com/v1',
            kind: 'ServiceMonitor',
            metadata: { name: 'x' },
          }),
        examples: [{}],
      }),
    ).toThrow(/renders monitoring.coreos.com\/v1 ServiceMonitor, a type the kit does not know; declare it in owns/);
    expect(() => constructController({ kind, render: () => undefined, examples: [] })).toThrow(/at least one example/);
  });
});

describe('constructController: types from the kind, examples checked', () => {
  test('the resource type is inferred from the kind: spec fields typed, name a string', () => {
    const seen: string[] = [];
    constructController({
      kind,
      render: (_scope, r) => {
        // Checked by tsc (npm test runs it): no `<Thing>` type argument needed.
        const claim: boolean | undefined = r.spec.claim;
        const name: string = r.metadata.name;
        // @ts-expect-error a field the kind does not have
        seen.push(String(r.spec.bogus));
        seen.push(`${name}:${String(claim)}`);
      },
      examples: [{ claim: true }],
    });
    expect(seen).toEqual(['undefined', 'example:true']);
  });

  test('an example the CRD would refuse throws at synth, naming the field', () => {
    const sized = new CustomResourceKind({
      group: 'x.example.com',
      kind: 'Sized',
      versions: ['v1'],
      description: 'A sized thing.',
      spec: t.object({
        size: t.integer({ required: true, minimum: 1, maximum: 5 }),
        mode: t.enum(['a', 'b'] as const),
      }),
      status: t.object({ ok: t.boolean() }),
    });
    const make = (examples: unknown[]) =>
      constructController({ kind: sized, render: () => undefined, examples: examples as never[] });
    expect(() => make([{ size: 9 }])).toThrow(
      'constructController for Sized: examples[0] would be refused by the CRD: spec.size: Invalid value: 9: should be less than or equal to 5',
    );
    expect(() => make([{ size: 1 }, { mode: 'c' }])).toThrow(
      /examples\[1\] would be refused by the CRD: spec.size: Required value; spec.mode: Unsupported value: "c"/,
    );
    expect(() => make([{ size: 1, bogus: 1 }])).toThrow('spec.bogus: unknown field');
    expect(() => make(['notanobject'])).toThrow('spec: Invalid value: "notanobject": must be of type object');
  });
});

describe('ConstructOperator (the StaticSite example)', () => {
  const app = Testing.app();
  const op = new ConstructOperator(app, 'static-site', {
    controller: staticSiteController,
    image: 'registry.example.com/site',
  });
  const docs = app.charts.flatMap((c) => c.toJson());

  test('synthesizes the CRD, a ClusterRole for exactly the rendered kinds, and the reconciler running its controller', () => {
    expect(docs.find((d) => d.kind === 'CustomResourceDefinition').metadata.name).toBe('staticsites.sites.example.com');
    const role = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'static-site-manager-role');
    expect(role.rules.flatMap((r: any) => r.resources).sort()).toEqual(
      expect.arrayContaining([
        'configmaps',
        'deployments',
        'ingresses',
        'services',
        'staticsites',
        'staticsites/status',
      ]),
    );
    expect(docs.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].args).toContain(
      '--controllers=staticsite',
    );
  });

  test('addSample: a spec the CRD would refuse throws, naming the field; its fields are typed', () => {
    const samples = Testing.chart();
    expect(() => op.addSample(samples, 'bad', { pages: { 'index.html': 'hi' }, replicas: 99 })).toThrow(
      /^sample bad of StaticSite would be refused by the CRD: spec.replicas: Invalid value: 99: should be less than or equal to \d+$/,
    );
    // @ts-expect-error not a field of a StaticSite's spec
    expect(() => op.addSample(samples, 'bogus', { pages: {}, bogus: 1 })).toThrow('spec.bogus: unknown field');
    // @ts-expect-error a spec is an object
    expect(() => op.addSample(samples, 'text', 'notanobject')).toThrow('must be of type object');
    expect(() => op.addSample(samples, 'none', {})).toThrow('spec.pages: Required value');
    expect(Testing.synth(samples)).toEqual([]);
  });

  test("its objects are part of the user's operator, not of the kit (unless said otherwise)", () => {
    const deployment = docs.find((d) => d.kind === 'Deployment');
    expect(deployment.metadata.labels['app.kubernetes.io/part-of']).toBe('static-site');
    const crd = docs.find((d) => d.kind === 'CustomResourceDefinition');
    expect(crd.metadata.labels['app.kubernetes.io/part-of']).toBe('static-site');
    const named = Testing.app();
    new ConstructOperator(named, 'site', {
      controller: staticSiteController,
      image: 'registry.example.com/site',
      partOf: 'web-platform',
    });
    const labels = named.charts.flatMap((c) => c.toJson()).map((d) => d.metadata.labels?.['app.kubernetes.io/part-of']);
    expect(new Set(labels)).toEqual(new Set(['web-platform']));
  });

  test('addSample writes a resource of the kind', () => {
    const samples = Testing.chart();
    op.addSample(samples, 'hello', { pages: { 'index.html': 'hi' } });
    expect(Testing.synth(samples)).toEqual([
      {
        apiVersion: 'sites.example.com/v1alpha1',
        kind: 'StaticSite',
        metadata: { name: 'hello' },
        spec: { pages: { 'index.html': 'hi' } },
      },
    ]);
  });
});

describe('constructStatus: the conditions of any kind, from its children', () => {
  const resource = { apiVersion: 'x.example.com/v1', kind: 'Thing', metadata: { name: 'a', generation: 3 }, spec: {} };
  const ready = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } };
  const rolling = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'a', namespace: 'ns', generation: 1 },
    spec: { replicas: 1 },
    status: { observedGeneration: 1, replicas: 2, updatedReplicas: 1, availableReplicas: 1 },
  };
  const crashLooping = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'a-5d8f-x',
      namespace: 'ns',
      labels: { 'pod-template-hash': '5d8f' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a-5d8f', uid: 'u', controller: true }],
    },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'c', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
    },
  };
  const observe = (children: KubeObject[], pods: Pod[] = []): Observed => {
    const map = new ChildMap(children.map((c) => [`${c.kind}/${c.metadata.name}`, c]));
    return {
      children: map,
      before: new ChildMap(),
      changes: [],
      read: () => [],
      health: assessChildren({ children, podsOf: (c) => pods.filter((p) => madeBy(p, c)) }),
      now: new Date('2026-11-25T00:00:00Z'),
    };
  };
  const conditions = (status: { conditions: { type: string; status: string; reason: string }[] }) =>
    Object.fromEntries(status.conditions.map((c) => [c.type, `${c.status}/${c.reason}`]));

  test('Available only when every child is ready; Progressing names what is not; Degraded names the child and why', () => {
    const settled = constructStatus(resource, observe([ready]));
    expect(settled.observedGeneration).toBe(3);
    expect(conditions(settled)).toEqual({
      Available: 'True/AllReady',
      Progressing: 'False/Complete',
      Degraded: 'False/AsExpected',
    });
    const stuck = constructStatus(resource, observe([ready, rolling], [crashLooping]));
    expect(conditions(stuck)).toEqual({
      Available: 'False/ChildrenNotReady',
      Progressing: 'True/RollingOut',
      Degraded: 'True/PodFailing',
    });
    expect(stuck.conditions.find((c) => c.type === 'Progressing')?.message).toBe(
      'Deployment a (1 old pod(s) still to go)',
    );
    expect(stuck.conditions.find((c) => c.type === 'Degraded')?.message).toBe(
      'Deployment a: pod a-5d8f-x: container c is waiting: CrashLoopBackOff',
    );
  });

  test('a crash loop stands between back-offs while the children are not ready, and clears once they are', () => {
    const failing = constructStatus(resource, observe([rolling], [crashLooping]));
    const between = constructStatus({ ...resource, status: failing }, observe([rolling]));
    expect(conditions(between).Degraded).toBe('True/PodFailing');
    const done = {
      ...rolling,
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    };
    expect(conditions(constructStatus({ ...resource, status: between }, observe([done]))).Degraded).toBe(
      'False/AsExpected',
    );
  });

  test('a refused child is Degraded InvalidChildren', () => {
    const refused = constructStatus(resource, { ...observe([]), applyError: 'spec.replicas: Invalid value: -1' });
    expect(refused.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InvalidChildren',
      message: 'spec.replicas: Invalid value: -1',
    });
  });
});

describe('constructController: what a kind may add', () => {
  const cm = BuiltinTypes.ConfigMap;
  const c = constructController({
    kind,
    render: (scope, r, { owner }) =>
      new k8s.KubeDeployment(scope, 'd', {
        metadata: { name: r.metadata.name, ownerReferences: [owner] },
        spec: { selector: {}, template: { spec: { containers: [{ name: 'c', image: 'x' }] } } },
      }),
    examples: [{}],
    reads: [cm],
    mapReads: { ConfigMap: (o) => o.metadata.labels?.thing },
    events: () => [{ type: 'Normal', reason: 'Seen', message: 'seen' }],
    finalize: async () => ({ done: true }),
    needsFinalizer: (r) => r.spec.claim === true,
  });

  test('reads, watches, Events and a finalize step pass through; the RBAC follows, pods of its workloads included', () => {
    expect(c.reads).toEqual([BuiltinTypes.CoreEvent, cm]);
    expect(c.mapReads?.ConfigMap?.({ metadata: { name: 'x', labels: { thing: 'a' } } })).toBe('a');
    expect(c.events?.({} as never, {} as never, undefined)).toEqual([
      { type: 'Normal', reason: 'Seen', message: 'seen' },
    ]);
    expect(typeof c.finalize).toBe('function');
    expect(c.needsFinalizer?.({ spec: { claim: true } } as never)).toBe(true);
    const rules = rulesForControllers([c]).namespaced.map(
      (r) => `${r.apiGroups.join()}/${r.resources.join()}: ${r.verbs.join()}`,
    );
    // No hand-written read of pods: the Deployment it owns implies them.
    expect(rules).toContain('/configmaps,events,pods: get,list,watch');
    // Its finalizer is put on and taken off with a patch.
    expect(rules).toContain('x.example.com/things: get,list,watch,patch');
  });
});
