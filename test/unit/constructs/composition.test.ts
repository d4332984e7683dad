/**
 * Operators compose in a user's own chart, as constructs of a library should: they write into
 * the chart they are placed in (its labels apply), namespaced objects carry the operator's
 * namespace, cluster-scoped ones never a namespace, and a separate chart for the cluster-scoped
 * objects is applied first.
 */
import { App, Chart, Testing } from 'cdk8s';
import { DatabaseOperator, MemcachedOperator } from '../../../constructs';

const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);

describe('two kit operators in one user chart', () => {
  const app = Testing.app();
  const chart = new Chart(app, 'platform', { namespace: 'apps', labels: { team: 'platform' } });
  new MemcachedOperator(chart, 'cache', { replicas: 2 });
  new DatabaseOperator(chart, 'db', { namespace: 'databases', logLevel: 'debug' });
  const objects = Testing.synth(chart);

  test('Testing.synth(userChart) returns every object of both operators, in that one chart', () => {
    expect(app.charts).toEqual([chart]);
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    for (const n of [
      'Deployment/cache-operator',
      'Deployment/db-operator',
      'CustomResourceDefinition/memcacheds.cache.example.com',
      'CustomResourceDefinition/databases.database.example.com',
      'Namespace/cache-system',
      'Namespace/databases',
    ]) {
      expect(names).toContain(n);
    }
  });

  test("the chart's labels are on every object", () => {
    for (const o of objects) expect([o.kind, o.metadata.labels?.team]).toEqual([o.kind, 'platform']);
  });

  test("namespaced objects are in their operator's namespace, cluster-scoped ones in none — though the chart has one", () => {
    for (const o of objects) {
      if (CLUSTER_SCOPED.has(o.kind)) expect([o.kind, o.metadata.namespace]).toEqual([o.kind, undefined]);
      else
        expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([
          o.kind,
          o.metadata.name,
          o.metadata.name.startsWith('cache') ? 'cache-system' : 'databases',
        ]);
    }
  });

  test('overrides apply', () => {
    expect(objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'cache-operator').spec.replicas).toBe(2);
    expect(
      objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'db-operator').spec.template.spec.containers[0]
        .args,
    ).toContain('--log-level=debug');
  });
});

test('clusterScope: cluster-scoped objects go to a chart of their own, synthesized (and applied) first', () => {
  const app = new App({ outdir: '/dev/null' });
  const workloads = new Chart(app, 'workloads');
  const cluster = new Chart(app, 'cluster');
  new MemcachedOperator(workloads, 'cache', { clusterScope: cluster });
  expect(
    Testing.synth(cluster)
      .map((o) => o.kind)
      .sort(),
  ).toEqual([
    'ClusterRole',
    'ClusterRole',
    // The conversion webhook's rights on its CRD.
    'ClusterRole',
    'ClusterRoleBinding',
    'ClusterRoleBinding',
    'CustomResourceDefinition',
    'Namespace',
  ]);
  expect(Testing.synth(workloads).every((o) => !CLUSTER_SCOPED.has(o.kind))).toBe(true);
  expect(workloads.node.dependencies).toContain(cluster);
});

test('placed directly in an App, an operator gets its own two charts, as before', () => {
  const app = Testing.app();
  new MemcachedOperator(app, 'memcached');
  expect(app.charts.map((c) => c.node.id)).toEqual(['memcached-cluster', 'memcached']);
});
