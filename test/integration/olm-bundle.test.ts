/**
 * OLM bundles (#70): every ready-made operator's bundle, written by the package's command, passes
 * operator-framework/api's validators as `operator-sdk bundle validate` runs them (default,
 * OperatorHub v2, good practices); and
 * each install mode the bundles declare works as OLM runs it: on a control plane of its own, what
 * OLM does with a bundle is done by hand — its CRDs applied, the ServiceAccount made in the
 * namespace OLM picks and bound to the CSV's clusterPermissions and permissions, the CSV's
 * Deployment's reconciler run as that account with that namespace as its pod's and OLM's target
 * namespaces in its arguments — and the operator reconciles its example where OLM targets only.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
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

describe('each install mode, as OLM runs a bundle', () => {
  let plane: ControlPlane;
  let kubectl: (args: string[], input?: string) => string;
  let csv: any;
  let operatorKubeconfig: string;
  const OLM_NAMESPACE = 'operators';

  /**
   * What OLM does with the CronTab bundle, by hand: the namespace it installs into, the account and
   * its rights from the CSV, the CRDs and manifests as they are.
   */
  beforeAll(async () => {
    plane = await startControlPlane({ own: true, verbose: false });
    const kubeconfig = plane.kubeconfig;
    kubectl = (args, input) => kubectlOk(args, { kubeconfig, input });
    csv = csvOf('crontab');
    const strategy = csv.spec.install.spec;
    const account = strategy.deployments[0].spec.template.spec.serviceAccountName;
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
      ...[OLM_NAMESPACE, 'team-a', 'team-b', 'team-c'].map((name) => ({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      })),
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace: OLM_NAMESPACE } },
      ...strategy.clusterPermissions.flatMap((p: any, i: number) => rbac('ClusterRole', p.rules, i)),
      ...strategy.permissions.flatMap((p: any, i: number) => rbac('Role', p.rules, i)),
    ];
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const manifests = path.join(out, 'crontab', 'manifests');
    for (const f of fs.readdirSync(manifests).filter((f) => !f.includes('clusterserviceversion')))
      kubectl(['apply', '--server-side', '-n', OLM_NAMESPACE, '-f', path.join(manifests, f)]);
    kubectl(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/crontabs.stable.example.com']);
    operatorKubeconfig = serviceAccountKubeconfig({ kubeconfig, namespace: OLM_NAMESPACE, serviceAccount: account });
  });

  afterAll(async () => {
    await plane?.stop();
  });

  /**
   * The CSV Deployment's reconciler as OLM runs it for an operator group targeting `targets` (''
   * for AllNamespaces): its own arguments, `$(WATCH_NAMESPACE)` expanded as the kubelet expands it
   * from the annotation OLM writes, the test's ports, the account's token, the namespace OLM
   * installed it into as its pod's.
   */
  async function runAsOlm(targets: string): Promise<{ reconciler: ReconcilerProcess; args: string[] }> {
    const container = csv.spec.install.spec.deployments[0].spec.template.spec.containers[0];
    expect(container.env).toContainEqual(expect.objectContaining({ name: 'WATCH_NAMESPACE' }));
    const args = (container.args as string[])
      .filter((a) => !/^--(metrics|health-probe)-bind-address=/.test(a))
      .map((a) => a.replace('$(WATCH_NAMESPACE)', targets));
    const reconciler = await ReconcilerProcess.start({
      kubeconfig: operatorKubeconfig,
      args,
      env: { POD_NAMESPACE: OLM_NAMESPACE },
      name: `olm-crontab-${targets.replace(/,/g, '-') || 'all'}`,
    });
    return { reconciler, args };
  }

  const example = (): any => JSON.parse(csv.metadata.annotations['alm-examples'])[0];
  const cronJobOf = (name: string, namespace: string) =>
    getJsonIfExists(['get', 'cronjob', name, '-n', namespace], { kubeconfig: plane.kubeconfig });

  /**
   * The example made in `outside` first, then in each of `inside`: each of those is reconciled
   * into a Ready CronJob, and (so seen after it) the one outside has none.
   */
  async function reconciles(mode: string, inside: string[], outside?: string): Promise<void> {
    const name = `${example().metadata.name}-${mode.toLowerCase()}`;
    const resource = { ...example(), metadata: { name } };
    for (const ns of [...(outside ? [outside] : []), ...inside])
      kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(resource));
    for (const ns of inside) {
      const cronJob = await eventually(`${mode}: the example’s CronJob in ${ns}`, () => cronJobOf(name, ns));
      expect(cronJob.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'CronTab', name, controller: true }),
      ]);
      await eventually(`${mode}: the example in ${ns} Ready`, () => {
        const conditions = getJsonIfExists(['get', 'crontab', name, '-n', ns], { kubeconfig: plane.kubeconfig })?.status
          ?.conditions;
        return conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? true : undefined;
      });
    }
    if (outside) expect(cronJobOf(name, outside)).toBeUndefined();
  }

  test.each([
    ['AllNamespaces', '', ['team-a', 'team-c'], undefined],
    ['OwnNamespace', OLM_NAMESPACE, [OLM_NAMESPACE], 'team-a'],
    ['SingleNamespace', 'team-b', ['team-b'], 'team-c'],
    ['MultiNamespace', 'team-a,team-b', ['team-a', 'team-b'], 'team-c'],
  ] as const)(
    '%s: the CronTab reconciler, with only the CSV’s rights, reconciles where OLM targets and nowhere else, and leads in its own namespace',
    async (mode, targets, inside, outside) => {
      expect(csv.spec.installModes).toContainEqual({ type: mode, supported: true });
      const { reconciler, args } = await runAsOlm(targets);
      try {
        expect(args.some((a) => a.startsWith('--leader-election-namespace'))).toBe(false);
        await reconciles(mode, [...inside], outside);
        // Leader election in the namespace OLM installed it into, not one fixed at synth time.
        const leases = JSON.parse(kubectl(['get', 'leases', '-n', OLM_NAMESPACE, '-o', 'json'])).items;
        expect(leases.map((l: any) => l.metadata.name)).toContain(
          args.find((a) => a.startsWith('--leader-election-id='))?.split('=')[1],
        );
      } finally {
        expect((await reconciler.stop()).code).toBe(0);
      }
    },
  );
});
