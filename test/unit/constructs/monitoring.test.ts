/**
 * An operator's monitoring objects (`monitoring`): what they select, scrape with, alert on and
 * chart, checked for meaning and against the Prometheus Operator's own CRD schemas (vendored).
 * That Prometheus really scrapes, alerts and answers the dashboard is the integration test's
 * (test/integration/monitoring.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { MemcachedOperator, type OperatorOptions } from '../../../constructs';
import { dashboardQueries } from '../../../constructs/core/dashboard';
import { CrdValidator } from '../../support/crd-validator';
import { KIT_OPERATORS } from '../../support/kit-operators';
import { find, type K8sObject, one, parseYaml } from '../../support/synth';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const vendored = (plural: string) =>
  new CrdValidator(
    parseYaml(
      fs.readFileSync(path.join(ROOT, 'vendor', 'prometheus-operator', `monitoring.coreos.com_${plural}.yaml`), 'utf8'),
    )[0]!,
  );
const serviceMonitors = vendored('servicemonitors');
const prometheusRules = vendored('prometheusrules');

function memcached(options: OperatorOptions = {}): K8sObject[] {
  const chart = Testing.chart();
  new MemcachedOperator(chart, 'memcached', options);
  return Testing.synth(chart) as K8sObject[];
}

const labelsOf = (o: K8sObject) => (o.metadata.labels ?? {}) as Record<string, string>;
const MONITORING_KINDS = ['ServiceMonitor', 'PrometheusRule'];
const dashboardOf = (objects: K8sObject[]) => {
  const cm = one(objects, 'ConfigMap', 'memcached-dashboard');
  return JSON.parse(cm.data['memcached-operator.json']) as {
    uid: string;
    panels: { title: string; targets: { refId: string; expr: string }[] }[];
  };
};

describe('monitoring is off by default', () => {
  test.each(KIT_OPERATORS)('%s: no object of a kind a cluster without the Prometheus Operator lacks', (name, make) => {
    const chart = Testing.chart();
    make(chart, name);
    const kinds = (Testing.synth(chart) as K8sObject[]).map((o) => o.kind);
    expect(kinds.filter((k) => MONITORING_KINDS.includes(k))).toEqual([]);
    expect(kinds).not.toContain('ConfigMap');
  });
});

describe('monitoring: true', () => {
  const objects = memcached({ monitoring: true });
  const service = one(objects, 'Service', 'memcached-metrics');
  const monitor = one(objects, 'ServiceMonitor', 'memcached-metrics');
  const rule = one(objects, 'PrometheusRule', 'memcached-alerts');

  test('the objects are valid for the Prometheus Operator v0.85 CRDs', () => {
    expect(serviceMonitors.validate(monitor)).toEqual([]);
    expect(prometheusRules.validate(rule)).toEqual([]);
  });

  test('the ServiceMonitor selects the metrics Service, and only it, by a port it has', () => {
    const [endpoint] = monitor.spec.endpoints;
    expect(monitor.metadata.namespace).toBe('memcached-system');
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['memcached-system'] });
    const selected = find(objects, 'Service').filter((s) =>
      Object.entries(monitor.spec.selector.matchLabels as Record<string, string>).every(
        ([k, v]) => labelsOf(s)[k] === v,
      ),
    );
    // Both Services carry the operator's labels; only the metrics Service has the scraped port.
    const scraped = selected.filter((s) => s.spec.ports.some((p: { name: string }) => p.name === endpoint.port));
    expect(scraped.map((s) => s.metadata.name)).toEqual(['memcached-metrics']);
    expect(service.spec.ports.map((p: { name: string }) => p.name)).toEqual(['https']);
  });

  test('it scrapes the secure endpoint with its own token, and the token is granted the metrics-reader role', () => {
    expect(monitor.spec.endpoints).toEqual([
      {
        port: 'https',
        scheme: 'https',
        path: '/metrics',
        interval: '30s',
        honorLabels: true,
        bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
        tlsConfig: { insecureSkipVerify: true },
      },
    ]);
    const binding = one(objects, 'ClusterRoleBinding', 'memcached-metrics-reader-rolebinding');
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'memcached-metrics-reader',
    });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }]);
    const role = one(objects, 'ClusterRole', 'memcached-metrics-reader');
    expect(role.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  });

  test('the alerts: each names the operator and a severity, and selects the operator’s scrape job', () => {
    const rules = rule.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules) as {
      alert: string;
      expr: string;
      for: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
    }[];
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'OperatorDown',
      'OperatorNoLeader',
      'OperatorReconcileErrors',
      'OperatorResourceDegraded',
      'OperatorWatchErrors',
      'OperatorWorkQueueNotDraining',
      'OperatorWorkQueueSlow',
    ]);
    for (const r of rules) {
      expect({ alert: r.alert, job: r.expr.includes('job="memcached-metrics"') }).toEqual({
        alert: r.alert,
        job: true,
      });
      expect(r.labels.operator).toBe('memcached');
      expect(['warning', 'critical']).toContain(r.labels.severity);
      expect(r.annotations.summary).toBeTruthy();
      expect(r.annotations.description).toBeTruthy();
    }
    const degraded = rules.find((r) => r.alert === 'OperatorResourceDegraded')!;
    expect(degraded.expr).toBe(
      'opkit_resource_condition{job="memcached-metrics",condition="Degraded",status="True"} == 1',
    );
    expect(degraded.for).toBe('15m');
    expect(rules.find((r) => r.alert === 'OperatorNoLeader')!.expr).toContain('name="memcached-operator-leader"');
  });

  test('the dashboard: a ConfigMap Grafana’s sidecar loads, every query on the operator’s job', () => {
    const cm = one(objects, 'ConfigMap', 'memcached-dashboard');
    expect(labelsOf(cm).grafana_dashboard).toBe('1');
    const dashboard = dashboardOf(objects);
    expect(dashboard.uid.length).toBeLessThanOrEqual(40);
    const queries = dashboardQueries(dashboard);
    expect(queries.length).toBeGreaterThanOrEqual(10);
    for (const q of queries)
      expect({ ...q, job: q.expr.includes('job="memcached-metrics"') }).toEqual({ ...q, job: true });
    expect(dashboard.panels.map((p) => p.title)).toEqual(
      expect.arrayContaining(['Reconciles', 'Reconcile errors', 'Work queue depth', 'Degraded resources', 'Leader']),
    );
  });
});

describe('monitoring options', () => {
  test('labels for the Prometheus to select, its ServiceAccount, the interval and how long Degraded may last', () => {
    const objects = memcached({
      monitoring: {
        labels: { release: 'kube-prometheus-stack' },
        prometheusServiceAccount: { name: 'prometheus', namespace: 'observability' },
        interval: '15s',
        degradedFor: '5m',
        dashboard: false,
      },
    });
    for (const kind of MONITORING_KINDS)
      expect(labelsOf(find(objects, kind)[0]!).release).toBe('kube-prometheus-stack');
    expect(one(objects, 'ServiceMonitor', 'memcached-metrics').spec.endpoints[0].interval).toBe('15s');
    const rules = one(objects, 'PrometheusRule', 'memcached-alerts').spec.groups[0].rules as {
      alert: string;
      for: string;
    }[];
    expect(rules.find((r) => r.alert === 'OperatorResourceDegraded')!.for).toBe('5m');
    expect(one(objects, 'ClusterRoleBinding', 'memcached-metrics-reader-rolebinding').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'prometheus', namespace: 'observability' },
    ]);
    expect(find(objects, 'ConfigMap')).toEqual([]);
  });

  test('plain metrics: scraped over HTTP with no token, and nothing bound', () => {
    const objects = memcached({ monitoring: true, metricsSecure: false });
    const [endpoint] = one(objects, 'ServiceMonitor', 'memcached-metrics').spec.endpoints;
    expect(endpoint).toEqual({ port: 'http', scheme: 'http', path: '/metrics', interval: '30s', honorLabels: true });
    expect(find(objects, 'ClusterRoleBinding', 'memcached-metrics-reader-rolebinding')).toEqual([]);
  });

  test('without leader election there is no leader to alert on or chart', () => {
    const objects = memcached({ monitoring: true, leaderElection: false });
    const rules = one(objects, 'PrometheusRule', 'memcached-alerts').spec.groups[0].rules as { alert: string }[];
    expect(rules.map((r) => r.alert)).not.toContain('OperatorNoLeader');
    expect(dashboardOf(objects).panels.map((p) => p.title)).not.toContain('Leader');
  });

  test.each([
    [{ monitoring: { degradedFor: '15 minutes' } }, /monitoring.degradedFor "15 minutes" is not a Prometheus duration/],
    [{ monitoring: { interval: '' } }, /monitoring.interval "" is not a Prometheus duration/],
    [
      { monitoring: { prometheusServiceAccount: { name: 'Prometheus', namespace: 'monitoring' } } },
      /monitoring.prometheusServiceAccount .* must name a ServiceAccount/,
    ],
    [
      { otlpEndpoint: 'otel-collector:4318' },
      /otlpEndpoint "otel-collector:4318" must be an http:\/\/ or https:\/\/ base URL/,
    ],
  ])('refused with the field named: %j', (options, message) => {
    expect(() => memcached(options as OperatorOptions)).toThrow(message);
  });

  test('otlpEndpoint becomes the reconciler’s --otlp-endpoint', () => {
    const objects = memcached({ otlpEndpoint: 'http://otel-collector.observability:4318' });
    const args = one(objects, 'Deployment', 'memcached-operator').spec.template.spec.containers[0].args as string[];
    expect(args).toContain('--otlp-endpoint=http://otel-collector.observability:4318');
    expect(one(objects, 'Deployment', 'memcached-operator').spec.template.spec.containers[0].args).not.toContain(
      '--otlp-endpoint=',
    );
  });
});
