import * as path from 'node:path';
import { eventually, getJson, kubectl, kubectlOk, nodesRun, testWithNodes } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';
import type { ReconcilerProcess } from '../support/reconciler';
import { invalidApplicationSpecs, invalidWebAppSpecs } from '../support/web-cases';

const ROOT = path.resolve(__dirname, '..', '..');
const SAMPLES = path.join(ROOT, 'dist', 'samples');
const SEED = path.join(ROOT, 'test', 'fixtures', 'seeds', '001-my-webapp.yaml');

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let get: OperatorUnderTest['get'];

beforeAll(async () => {
  ({ ns, reconciler, get } = await startOperatorUnderTest({
    operator: 'webapp',
    controllers: 'application,webapp',
    crds: ['applications.app.aiops.org', 'webapps.apps.example.com'],
  }));
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe('the application and webapp controllers against a real API server', () => {
  test.each(invalidApplicationSpecs)(
    'the API server rejects an Application with %s, naming the field',
    (_w, spec, field) => {
      const r = kubectl(['create', '-n', ns, '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'app.aiops.org/v1', kind: 'Application', metadata: { name: 'bad' }, spec }),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(field);
    },
  );

  test.each(invalidWebAppSpecs)('the API server rejects a WebApp with %s, naming the field', (_w, spec, field) => {
    const r = kubectl(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps.example.com/v1alpha1',
        kind: 'WebApp',
        metadata: { name: 'bad' },
        spec,
      }),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(field);
  });

  test("seed 002's Application gets a Deployment, a Service and an nginx Ingress, all owned; status has the URL", async () => {
    kubectlOk(['apply', '-n', ns, '-f', path.join(SAMPLES, 'application-sample.k8s.yaml')]);
    const app = get('application', 'application-sample');
    for (const kind of ['deployment', 'service', 'ingress']) {
      const child = await eventually(kind, () => get(kind, 'application-sample'));
      expect(child.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Application', uid: app.metadata.uid, controller: true }),
      ]);
    }
    expect(get('service', 'application-sample').spec.ports[0]).toMatchObject({ port: 8080, targetPort: 'http' });
    expect(get('ingress', 'application-sample').spec).toMatchObject({
      ingressClassName: 'nginx',
      rules: [{ host: 'example.foo.com' }],
    });
    const status = await eventually('status', () =>
      get('application', 'application-sample').status?.url
        ? get('application', 'application-sample').status
        : undefined,
    );
    expect(status.url).toBe('http://example.foo.com/');
  });

  testWithNodes('once its pods run: Available, availableReplicas, Progressing=False', async () => {
    const app = await eventually(
      'Available',
      () => {
        const a = get('application', 'application-sample');
        const available = a?.status?.conditions?.find((c: any) => c.type === 'Available');
        return available?.status === 'True' && a.status.availableReplicas === a.spec.replicas ? a : undefined;
      },
      60_000,
    );
    expect(app.status.conditions.find((c: any) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'Complete',
    });
    expect(app.status.availableReplicas).toBeGreaterThan(0);
  });

  test('spec updates propagate; drift is reverted; dropping the ingress deletes the Ingress', async () => {
    kubectlOk([
      'patch',
      'application',
      'application-sample',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"replicas":3,"image":"nginx:1.27"}}',
    ]);
    await eventually('3 replicas of nginx:1.27', () => {
      const d = get('deployment', 'application-sample');
      return d?.spec.replicas === 3 && d.spec.template.spec.containers[0].image === 'nginx:1.27' ? true : undefined;
    });
    kubectlOk([
      'patch',
      'service',
      'application-sample',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"selector":{"app.kubernetes.io/instance":"someone-else"}}}',
    ]);
    await eventually('the Service selector to be restored', () =>
      get('service', 'application-sample')?.spec.selector['app.kubernetes.io/instance'] === 'application-sample'
        ? true
        : undefined,
    );
    kubectlOk([
      'patch',
      'application',
      'application-sample',
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/ingress"}]',
    ]);
    await eventually('the Ingress to be deleted', () => (get('ingress', 'application-sample') ? undefined : true));
    await eventually('the URL to be the Service', () =>
      get('application', 'application-sample').status?.url === `http://application-sample.${ns}.svc:8080`
        ? true
        : undefined,
    );
  });

  test('deleting the Application deletes its Deployment and Service (seed 002)', async () => {
    kubectlOk(['delete', 'application', 'application-sample', '-n', ns]);
    await eventually(
      'children to be collected',
      () => (get('deployment', 'application-sample') || get('service', 'application-sample') ? undefined : true),
      90_000,
    );
  });

  test("seed 001's WebApp applies verbatim and runs through the same path", async () => {
    kubectlOk(['apply', '-n', ns, '-f', SEED]);
    const dep = await eventually('the Deployment', () => get('deployment', 'my-webapp'));
    expect(dep.spec.replicas).toBe(3);
    expect(dep.metadata.labels['app.kubernetes.io/name']).toBe('webapp');
    const ing = await eventually('the Ingress', () => get('ingress', 'my-webapp'));
    expect(ing.spec.rules[0].host).toBe('example.com');
    expect(get('service', 'my-webapp').spec.ports[0].port).toBe(80);
    kubectlOk(['scale', 'webapp', 'my-webapp', '-n', ns, '--replicas=1']);
    await eventually('scaled through the scale subresource', () =>
      get('deployment', 'my-webapp')?.spec.replicas === 1 ? true : undefined,
    );
    if (nodesRun) {
      await eventually(
        'the WebApp Available with its one pod',
        () => {
          const w = get('webapp', 'my-webapp');
          return w?.status?.availableReplicas === 1 &&
            w.status.conditions.find((c: any) => c.type === 'Available')?.status === 'True'
            ? true
            : undefined;
        },
        60_000,
      );
    }
    const events = getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
      (e: any) => e.regarding?.kind === 'WebApp',
    );
    expect(events.map((e: any) => `${e.regarding.name}/${e.reason}`)).toContain('my-webapp/Created');
    kubectlOk(['delete', 'webapp', 'my-webapp', '-n', ns]);
    await eventually(
      'children to be collected',
      () => (get('deployment', 'my-webapp') || get('ingress', 'my-webapp') ? undefined : true),
      90_000,
    );
  });
});
