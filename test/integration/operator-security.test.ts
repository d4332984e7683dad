/**
 * Least privilege on Secrets (the database and etcd operators' by name only), and /metrics served only to who may read it — checked against the
 * real API server's authorizer, with the RBAC from dist/.
 */
import { createTestNamespace, eventually, installDist, kubectl, kubectlOk } from '../support/kube';
import {
  bindMetricsReader,
  httpGet,
  ReconcilerProcess,
  scrapeMetrics,
  serviceAccountKubeconfig,
} from '../support/reconciler';

const DATABASE_SA = 'system:serviceaccount:database-system:database-operator';
const DATABASE_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:database-system', 'system:authenticated'];

jest.setTimeout(120_000);

beforeAll(() => {
  installDist();
});

const ETCD_SA = 'system:serviceaccount:etcd-system:etcd-operator';
const ETCD_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:etcd-system', 'system:authenticated'];

/** What the API server's authorizer answers for an operator (a SubjectAccessReview): the database operator's by default. */
function allowed(
  verb: string,
  resource: string,
  namespace?: string,
  as = { user: DATABASE_SA, groups: DATABASE_GROUPS },
): boolean {
  const review = JSON.parse(
    kubectlOk(['create', '-o', 'json', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: as.user,
          groups: as.groups,
          resourceAttributes: { namespace, verb, group: '', resource },
        },
      }),
    }),
  );
  return review.status.allowed === true;
}

describe("the database operator reaches Secrets by name only (its Databases' replication role)", () => {
  const namespaces = [undefined, 'default', 'kube-system', 'database-system'];
  test.each(
    ['list', 'watch', 'patch', 'delete'].flatMap((verb) =>
      namespaces.map((ns) => ({ verb, where: ns ?? 'all namespaces', ns })),
    ),
  )('may not $verb secrets in $where', ({ verb, ns }) => {
    expect(allowed(verb, 'secrets', ns)).toBe(false);
  });

  test('may create them (the generated credentials) and get or update one by name (the runtime hands over only those its Database controls), and kubectl auth can-i agrees', () => {
    for (const verb of ['get', 'create', 'update']) expect(allowed(verb, 'secrets', 'default')).toBe(true);
    expect(kubectl(['auth', 'can-i', 'list', 'secrets', '-A', `--as=${DATABASE_SA}`]).stdout.trim()).toBe('no');
    expect(kubectl(['auth', 'can-i', 'create', 'secrets', '-n', 'default', `--as=${DATABASE_SA}`]).stdout.trim()).toBe(
      'yes',
    );
  });
});

describe("the etcd operator reaches Secrets by name only (its clusters' certificates)", () => {
  const etcd = { user: ETCD_SA, groups: ETCD_GROUPS };
  test.each(['list', 'watch', 'patch', 'delete'])('may not %s secrets anywhere', (verb) => {
    for (const ns of [undefined, 'default', 'kube-system']) expect(allowed(verb, 'secrets', ns, etcd)).toBe(false);
  });
  test('may get, create and update one by name (the runtime hands over only those its EtcdCluster controls)', () => {
    for (const verb of ['get', 'create', 'update']) expect(allowed(verb, 'secrets', 'default', etcd)).toBe(true);
  });
});

describe('/metrics over HTTPS, for authorized callers only', () => {
  let reconciler: ReconcilerProcess;
  let ns: string;

  beforeAll(async () => {
    ns = createTestNamespace('metrics');
    reconciler = await ReconcilerProcess.start({
      kubeconfig: serviceAccountKubeconfig(),
      args: ['--controllers=memcached', `--namespace=${ns}`, '--metrics-secure=true'],
      name: 'secure-metrics',
    });
    bindMetricsReader(ns, 'prometheus');
    kubectlOk(['create', 'serviceaccount', 'nosy', '-n', ns]);
  });

  afterAll(async () => {
    kubectl(['delete', 'clusterrolebinding', `metrics-reader-${ns}`]);
    expect((await reconciler?.stop())?.code).toBe(0);
  });

  const scrape = (token?: string) => scrapeMetrics(reconciler.metricsPort, token);

  const token = (sa: string) => kubectlOk(['create', 'token', sa, '-n', ns]).trim();

  test('plain HTTP gets no metrics', async () => {
    expect((await httpGet(`http://127.0.0.1:${reconciler.metricsPort}/metrics`)).body).not.toContain(
      'controller_runtime_reconcile_total',
    );
  });

  test('no token → 401; a bad token → 401', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape('not-a-token')).status).toBe(401);
  });

  test('a valid token without the metrics-reader role → 403', async () => {
    expect((await scrape(token('nosy'))).status).toBe(403);
  });

  test('a token bound to the metrics-reader ClusterRole → 200 with Prometheus text', async () => {
    const r = await eventually('an authorized scrape', async () => {
      const s = await scrape(token('prometheus'));
      return s.status === 200 ? s : undefined;
    });
    expect(r.body).toContain('# TYPE workqueue_adds_total counter');
  });
});
