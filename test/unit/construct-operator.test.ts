import { ApiObject, Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { BuiltinTypes, constructController, ConstructOperator, CustomResourceKind, t } from '../../constructs';
import { staticSiteController } from '../../examples/static-site/static-site';

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
        if ((r.spec as { claim?: boolean }).claim)
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
