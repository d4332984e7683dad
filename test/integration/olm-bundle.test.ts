/**
 * OLM bundles (#70): every ready-made operator's bundle, written by the package's command, passes
 * operator-framework/api's validators as `operator-sdk bundle validate` runs them (default,
 * OperatorHub v2, good practices); and the one install mode the bundles declare, AllNamespaces,
 * works as OLM runs it: on a control plane of its own, what OLM does with a bundle is done by
 * hand — its CRDs applied, the ServiceAccount made in the namespace OLM picks and bound to the
 * CSV's clusterPermissions and permissions, the CSV's Deployment's reconciler run as that account
 * with that namespace as its pod's — and the operator reconciles its example in another namespace.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { type ControlPlane, startControlPlane } from '../../testing/control-plane';
import { runCommand } from '../support/controllers-module';
import { eventually, getJsonIfExists, kubectlOk } from '../support/kube';
import { validateBundle } from '../support/olm';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');
const OPERATORS = ['memcached', 'etcd', 'crontab', 'webapp', 'database'];
let out: string;

beforeAll(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-olm-'));
  const samples = fs
    .readdirSync(path.join(ROOT, 'dist', 'samples'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => ['--examples', path.join(ROOT, 'dist', 'samples', f)]);
  const r = runCommand(['olm-bundle', '--out', out, '--version', '0.1.0', ...samples]);
  if (r.status !== 0) throw new Error(`olm-bundle failed (${r.status}): ${r.stderr}`);
});

afterAll(() => {
  if (out) fs.rmSync(out, { recursive: true, force: true });
});

const csvOf = (operator: string): any =>
  parse(fs.readFileSync(path.join(out, operator, 'manifests', `${operator}.clusterserviceversion.yaml`), 'utf8'));

describe('every ready-made operator as an OLM bundle', () => {
  test.each(OPERATORS)('%s: passes the default, OperatorHub v2 and good-practices validators', (operator) => {
    const { code, findings, stderr } = validateBundle(path.join(out, operator));
    expect(stderr).toBe('');
    expect(findings.filter((f) => f.level === 'error')).toEqual([]);
    expect(code).toBe(0);
    // What they still warn of, each explained in docs/olm.md; nothing else.
    for (const f of findings)
      expect(f.message).toMatch(/should have an example annotation|permissions to create CRD|channel\(s\)/);
    const csv = csvOf(operator);
    expect(csv.metadata.name).toBe(`${operator}.v0.1.0`);
    expect(JSON.parse(csv.metadata.annotations['alm-examples']).length).toBeGreaterThan(0);
  });
});

describe('AllNamespaces, as OLM runs a bundle', () => {
  let plane: ControlPlane;
  let reconciler: ReconcilerProcess | undefined;
  const OLM_NAMESPACE = 'operators';

  beforeAll(async () => {
    plane = await startControlPlane({ own: true, verbose: false });
  });

  afterAll(async () => {
    await reconciler?.stop();
    await plane?.stop();
  });

  test('the CronTab bundle: its reconciler, with only the CSV’s rights, reconciles an example in another namespace and leads in its own', async () => {
    const kubeconfig = plane.kubeconfig;
    const kubectl = (args: string[], input?: string) => kubectlOk(args, { kubeconfig, input });
    const manifests = path.join(out, 'crontab', 'manifests');
    const csv = csvOf('crontab');
    // What OLM makes from the CSV: the namespace it installs into, the account, its rights.
    const strategy = csv.spec.install.spec;
    const [deployment] = strategy.deployments;
    const account = deployment.spec.template.spec.serviceAccountName;
    const rbac = (kind: 'ClusterRole' | 'Role', rules: any[], i: number) => {
      const name = `olm-${account}-${i}`;
      const namespaced = kind === 'Role' ? { namespace: OLM_NAMESPACE } : {};
      return [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name, ...namespaced }, rules },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: `${kind}Binding`,
          metadata: { name, ...namespaced },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
          subjects: [{ kind: 'ServiceAccount', name: account, namespace: OLM_NAMESPACE }],
        },
      ];
    };
    const items = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OLM_NAMESPACE } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace: OLM_NAMESPACE } },
      ...strategy.clusterPermissions.flatMap((p: any, i: number) => rbac('ClusterRole', p.rules, i)),
      ...strategy.permissions.flatMap((p: any, i: number) => rbac('Role', p.rules, i)),
    ];
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    // What OLM applies as it is: the CRDs and the other manifests, namespaced ones in its namespace.
    for (const f of fs.readdirSync(manifests).filter((f) => !f.includes('clusterserviceversion')))
      kubectl(['apply', '--server-side', '-n', OLM_NAMESPACE, '-f', path.join(manifests, f)]);
    kubectl(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/crontabs.stable.example.com']);
    // The Deployment's reconciler as OLM runs it: its own arguments (the ports are the test's),
    // the account's token, the namespace OLM picked as its pod's.
    const container = deployment.spec.template.spec.containers[0];
    const args = (container.args as string[]).filter((a) => !/^--(metrics|health-probe)-bind-address=/.test(a));
    expect(args.some((a) => a.startsWith('--leader-election-namespace'))).toBe(false);
    reconciler = await ReconcilerProcess.start({
      kubeconfig: serviceAccountKubeconfig({ kubeconfig, namespace: OLM_NAMESPACE, serviceAccount: account }),
      args,
      env: { POD_NAMESPACE: OLM_NAMESPACE },
      name: 'olm-crontab',
    });
    const [example] = JSON.parse(csv.metadata.annotations['alm-examples']);
    kubectl(['apply', '-n', 'team-a', '-f', '-'], JSON.stringify(example));
    const name = example.metadata.name;
    const cronJob = await eventually('the example’s CronJob in team-a', () =>
      getJsonIfExists(['get', 'cronjob', name, '-n', 'team-a'], { kubeconfig }),
    );
    expect(cronJob.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'CronTab', name, controller: true }),
    ]);
    await eventually('the example Ready', () => {
      const ready = getJsonIfExists(['get', 'crontab', name, '-n', 'team-a'], { kubeconfig })?.status?.conditions?.find(
        (c: any) => c.type === 'Ready',
      );
      return ready?.status === 'True' ? true : undefined;
    });
    // Leader election in the namespace OLM installed it into, not one fixed at synth time.
    const leases = parseAllDocuments(kubectl(['get', 'leases', '-n', OLM_NAMESPACE, '-o', 'yaml']))[0]?.toJSON();
    expect(leases.items.map((l: any) => l.metadata.name)).toContain(
      args.find((a) => a.startsWith('--leader-election-id='))?.split('=')[1],
    );
  });
});
