/**
 * `helm install` of an operator chart made by `writeHelmChart`, into the real API server, with
 * non-default values (two watched namespaces among them); then the reconciler run as the installed Deployment runs it (its args, its
 * ServiceAccount's token, so exactly the RBAC the chart installed) reconciles a Memcached.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { memcachedController, writeHelmChart } from '../../constructs';
import { helm, helmBinary, helmOk } from '../support/helm';
import {
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  kubectl,
  kubectlOk,
  testKubeconfig,
} from '../support/kube';
import { type ReconcilerProcess, startInstalledReconciler } from '../support/reconciler';
import { tempDir } from '../support/temp-dir';

const { missing } = helmBinary();

/** Applies a Memcached `cache` of `size` in `namespace` and waits for its Deployment. */
async function memcachedDeployment(namespace: string, size: number): Promise<any> {
  kubectlOk(['apply', '-n', namespace, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: 'cache' },
      spec: { size },
    }),
  });
  return eventually(
    `the Memcached Deployment in ${namespace}`,
    () => getJsonIfExists(['get', 'deployment', 'cache', '-n', namespace]),
    60_000,
  );
}
// A name of its own: the kit's memcached operator (dist/) is installed in the same cluster by
// other suites, and Helm refuses to take over objects it did not create.
const NAME = 'helm-memcached';
/** The Memcached CRD as dist/ ships it: the one every suite applies (as kubectl) and converts through. */
const SHARED_CRD = parseAllDocuments(
  fs.readFileSync(path.join(__dirname, '..', '..', 'dist', '0000-memcached-cluster.k8s.yaml'), 'utf8'),
)
  .map((d) => d.toJSON())
  .filter((o) => o.kind === 'CustomResourceDefinition')
  .map((o) => stringify(o))
  .join('---\n');

jest.setTimeout(180_000);

if (missing) test.todo(`helm install of an operator chart — skipped: ${missing}`);

(missing ? describe.skip : describe)('helm install of an operator chart', () => {
  const chart = path.join(tempDir('opkit-chart-'), `${NAME}-operator`);
  const release = `rel-${Math.random().toString(36).slice(2, 7)}`;
  const kubeconfig = testKubeconfig();
  let releaseNs: string;
  let watched: string;
  /** The second namespace the release watches (watchNamespaces is a list). */
  let alsoWatched: string;
  let reconciler: ReconcilerProcess | undefined;

  beforeAll(() => {
    writeHelmChart(chart, { operator: { name: NAME, controllers: [memcachedController] } });
    releaseNs = `helm-${release}`;
    watched = createTestNamespace('helm-watched');
    alsoWatched = createTestNamespace('helm-also-watched');
    // The release installs no CRD (crds.install=false): the Memcached CRD is shared with the other
    // suites running meanwhile, so it is applied exactly as they apply it. (The chart's own copy
    // would point its conversion at this release's webhook Service and change what they convert
    // through; Helm would also refuse to take over a CRD it did not create.)
    kubectlOk(['apply', '--server-side', '-f', '-'], { input: SHARED_CRD });
    helmOk(
      [
        'install',
        release,
        chart,
        '-n',
        releaseNs,
        '--create-namespace',
        '--set',
        `watchNamespaces={${watched},${alsoWatched}}`,
        '--set',
        'image.tag=9.9.9',
        '--set',
        'logLevel=debug',
        '--set',
        'replicaCount=2',
        '--set',
        'crds.install=false',
      ],
      { kubeconfig },
    );
  });

  afterAll(async () => {
    if (reconciler) await reconciler.stop();
    helm(['uninstall', release, '-n', releaseNs], { kubeconfig });
    kubectl(['delete', 'namespace', releaseNs, watched, alsoWatched, '--wait=false']);
  });

  test('the CRD shared with the other suites is left as dist/ ships it (they convert through its webhook meanwhile)', () => {
    const crd = kubectl(['diff', '--server-side', '-f', '-'], { input: SHARED_CRD });
    expect({ code: crd.code, diff: crd.stdout }).toEqual({ code: 0, diff: '' });
  });

  test('the release is deployed with the values given', () => {
    const status = JSON.parse(helmOk(['status', release, '-n', releaseNs, '-o', 'json'], { kubeconfig }));
    expect(status.info.status).toBe('deployed');
    const deployment = getJson(['get', 'deployment', `${NAME}-operator`, '-n', releaseNs]);
    expect(deployment.spec.replicas).toBe(2);
    const container = deployment.spec.template.spec.containers[0];
    expect(container.image).toBe('cdk8s-operator-kit/reconciler:9.9.9');
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--log-level=debug',
        `--namespaces=${watched},${alsoWatched}`,
        `--leader-election-namespace=${releaseNs}`,
      ]),
    );
  });

  test('watching its namespaces, the controller rights are a Role in each, not cluster-wide', () => {
    for (const ns of [watched, alsoWatched]) {
      const role = getJson(['get', 'role', `${NAME}-manager-role`, '-n', ns]);
      expect(role.rules.map((r: any) => r.resources).flat()).toEqual(
        expect.arrayContaining(['memcacheds', 'deployments']),
      );
    }
    const sa = `system:serviceaccount:${releaseNs}:${NAME}-operator`;
    const can = (verb: string, resource: string, ns: string) =>
      kubectl(['auth', 'can-i', verb, resource, `--as=${sa}`, '-n', ns]).stdout.trim();
    expect(can('create', 'deployments.apps', watched)).toBe('yes');
    expect(can('create', 'deployments.apps', alsoWatched)).toBe('yes');
    expect(can('create', 'deployments.apps', 'default')).toBe('no');
    expect(can('list', 'memcacheds.cache.example.com', 'default')).toBe('no');
  });

  test('the installed reconciler, run with its args and its ServiceAccount, reconciles a Memcached', async () => {
    reconciler = await startInstalledReconciler(releaseNs, `${NAME}-operator`);
    const child = await memcachedDeployment(watched, 2);
    expect(child.spec.replicas).toBe(2);
    expect(child.metadata.ownerReferences[0]).toMatchObject({ kind: 'Memcached', name: 'cache', controller: true });
    const status = await eventually(
      'the Memcached status',
      () => {
        const m = getJson(['get', 'memcached', 'cache', '-n', watched]);
        return m.status?.observedGeneration === m.metadata.generation ? m.status : undefined;
      },
      60_000,
    );
    expect(status.conditions.map((c: any) => c.type)).toEqual(expect.arrayContaining(['Available', 'Degraded']));
    // The list's second namespace is served too.
    expect((await memcachedDeployment(alsoWatched, 1)).spec.replicas).toBe(1);
    // It leads through the Lease in the release's namespace, as the chart's leader-election Role allows.
    const lease = getJson(['get', 'lease', `${NAME}-operator-leader`, '-n', releaseNs]);
    expect(lease.spec.holderIdentity).toBe(reconciler.identity);
  });

  test('helm upgrade changes what the values say; helm uninstall removes the operator and keeps the CRD', () => {
    helmOk(['upgrade', release, chart, '-n', releaseNs, '--reuse-values', '--set', 'logLevel=warn'], { kubeconfig });
    const args = getJson(['get', 'deployment', `${NAME}-operator`, '-n', releaseNs]).spec.template.spec.containers[0]
      .args;
    expect(args).toContain('--log-level=warn');
    expect(args).toContain(`--namespaces=${watched},${alsoWatched}`);
    helmOk(['uninstall', release, '-n', releaseNs], { kubeconfig });
    expect(kubectl(['get', 'deployment', `${NAME}-operator`, '-n', releaseNs]).code).not.toBe(0);
    expect(kubectl(['get', 'role', `${NAME}-manager-role`, '-n', watched]).code).not.toBe(0);
    expect(kubectl(['get', 'role', `${NAME}-manager-role`, '-n', alsoWatched]).code).not.toBe(0);
    // A CRD the release does not hold is never Helm's to delete (and one it holds is kept).
    expect(kubectl(['get', 'crd', 'memcacheds.cache.example.com']).code).toBe(0);
  });
});
