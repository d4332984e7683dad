/**
 * ConstructOperator end to end: a kind the kit does not ship (examples/static-site), written
 * only with the public API, synthesized, installed with kubectl, and reconciled by its own
 * entry point as its own ServiceAccount — no controller code anywhere.
 */
import * as path from 'node:path';
import { staticSiteApp } from '../../examples/static-site/app';
import { eventually, getJson, getJsonIfExists, giveIngressAnAddress, kubectlOk, nodesRun } from '../support/kube';
import { controllersModule, runCommand } from '../support/controllers-module';
import { startExampleOperator } from '../support/example-operator';
import type { ReconcilerProcess } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let objects: any[];
const get = (kind: string, name: string) => getJsonIfExists(['get', kind, name, '-n', ns]);

beforeAll(async () => {
  ({ ns, reconciler, objects } = await startExampleOperator({
    example: 'static-site',
    app: staticSiteApp,
    crd: 'staticsites.sites.example.com',
    controller: 'staticsite',
  }));
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe('a StaticSite, through ConstructOperator', () => {
  test('its RBAC is derived from what the construct renders: those kinds, no Secrets, no claims deleted', () => {
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'static-site-manager-role');
    const grants = role.rules.flatMap((r: any) =>
      r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`),
    );
    expect(grants).toEqual(
      expect.arrayContaining([
        '/configmaps: get,list,watch,create,update,patch,delete',
        '/services: get,list,watch,create,update,patch,delete',
        'apps/deployments: get,list,watch,create,update,patch,delete',
        'networking.k8s.io/ingresses: get,list,watch,create,update,patch,delete',
      ]),
    );
    expect(JSON.stringify(role.rules)).not.toMatch(/secrets|persistentvolumeclaims|\*/);
  });

  test('a site becomes its ConfigMap, Deployment, Service and Ingress, all owned; the status says Available', async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'sites.example.com/v1alpha1',
        kind: 'StaticSite',
        metadata: { name: 'hello' },
        spec: { pages: { 'index.html': '<h1>Hi</h1>' }, host: 'hello.example.com' },
      }),
    });
    const site = get('staticsite', 'hello');
    for (const kind of ['configmap', 'deployment', 'service', 'ingress']) {
      const child = await eventually(kind, () => get(kind, 'hello'));
      expect(child.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'StaticSite', uid: site.metadata.uid, controller: true }),
      ]);
    }
    expect(get('configmap', 'hello').data).toEqual({ 'index.html': '<h1>Hi</h1>' });
    expect(get('ingress', 'hello').spec.rules[0].host).toBe('hello.example.com');
    // An Ingress is ready once an ingress controller gives it an address; the test plays one.
    giveIngressAnAddress(ns, 'hello');
    const status = await eventually(
      'status',
      () => {
        const s = get('staticsite', 'hello').status;
        const available = s?.conditions?.find((c: any) => c.type === 'Available')?.status;
        return s?.observedGeneration === site.metadata.generation && (!nodesRun || available === 'True')
          ? s
          : undefined;
      },
      60_000,
    );
    expect(status.conditions.find((c: any) => c.type === 'Degraded')).toMatchObject({ status: 'False' });
  });

  test('plan: a new version whose construct makes no Ingress would prune it, and the rest stays; nothing written', () => {
    // The new version as a user's module in their project (here, the kit's).
    const module = controllersModule(
      `import { staticSiteController } from ${JSON.stringify(path.join(ROOT, 'examples', 'static-site', 'static-site'))};
export const controllers = [{
  ...staticSiteController,
  render: (scope: any, site: any, context: any) =>
    staticSiteController.render!(scope, { ...site, spec: { ...site.spec, host: undefined } }, context),
}];
`,
    );
    const ingress = get('ingress', 'hello').metadata.resourceVersion;
    const r = runCommand(['plan', '--kind', 'StaticSite', '-n', ns, '-o', 'json', '--controllers', module]);
    expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 1, stderr: '' });
    const plan = JSON.parse(r.stdout) as { children: Record<string, number> };
    expect(plan.children).toMatchObject({ pruned: 1, created: 0, refused: 0 });
    expect((plan.children.unchanged ?? 0) + (plan.children.changed ?? 0)).toBe(3);
    expect(get('ingress', 'hello').metadata.resourceVersion).toBe(ingress);
  });

  test('new pages update the ConfigMap and roll the pods; dropping the host prunes the Ingress', async () => {
    const before = get('deployment', 'hello').spec.template.metadata.annotations['sites.example.com/pages-sha256'];
    kubectlOk([
      'patch',
      'staticsite',
      'hello',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { pages: { 'index.html': '<h1>Bye</h1>' } } }),
    ]);
    await eventually('the new page', () =>
      get('configmap', 'hello').data['index.html'] === '<h1>Bye</h1>' ? true : undefined,
    );
    // The Deployment is applied after the ConfigMap, in the same reconcile: wait for it too.
    await eventually('the pods rolled for the new pages', () =>
      get('deployment', 'hello').spec.template.metadata.annotations['sites.example.com/pages-sha256'] !== before
        ? true
        : undefined,
    );
    kubectlOk(['patch', 'staticsite', 'hello', '-n', ns, '--type=json', '-p', '[{"op":"remove","path":"/spec/host"}]']);
    await eventually('the Ingress to be pruned', () => (get('ingress', 'hello') ? undefined : true));
    expect(get('service', 'hello')).toBeDefined();
  });

  test('deleting the site lets the garbage collector remove what it made', async () => {
    kubectlOk(['delete', 'staticsite', 'hello', '-n', ns]);
    await eventually(
      'children collected',
      () => (get('deployment', 'hello') || get('configmap', 'hello') || get('service', 'hello') ? undefined : true),
      90_000,
    );
    expect(
      getJson(['get', 'events.events.k8s.io', '-n', ns]).items.some(
        (e: any) => e.regarding?.kind === 'StaticSite' && e.reason === 'Created',
      ),
    ).toBe(true);
  });

  test('a site whose pods cannot be made says why, with no code of its own: Degraded, naming the ReplicaSet and the quota', async () => {
    // The namespace allows no pods: the Deployment's ReplicaSet logs FailedCreate.
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'no-pods' },
        spec: { hard: { pods: '0' } },
      }),
    });
    await eventually('the quota to be counted', () =>
      get('resourcequota', 'no-pods')?.status?.hard ? true : undefined,
    );
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'sites.example.com/v1alpha1',
        kind: 'StaticSite',
        metadata: { name: 'starved' },
        spec: { pages: { 'index.html': 'no room' }, host: 'starved.example.com' },
      }),
    });
    const degraded = await eventually(
      'Degraded=True FailedCreate',
      () => {
        const d = get('staticsite', 'starved')?.status?.conditions?.find((c: any) => c.type === 'Degraded');
        return d?.status === 'True' ? d : undefined;
      },
      90_000,
    );
    expect(degraded.reason).toBe('FailedCreate');
    expect(degraded.message).toMatch(/^ReplicaSet starved-[a-z0-9]+: .*exceeded quota: no-pods/);
    // The printer column shows the Available condition.
    const [header, row] = kubectlOk(['get', 'staticsite', 'starved', '-n', ns]).trim().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'HOST', 'AVAILABLE', 'AGE']);
    expect(row!.split(/\s+/).slice(0, 3)).toEqual(['starved', 'starved.example.com', 'False']);
  });
});
