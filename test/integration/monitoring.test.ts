/**
 * An operator a team can watch, checked with real parts: the monitoring objects an operator
 * synthesizes with `monitoring` are applied to the real API server (with the Prometheus
 * Operator's CRDs), a real Prometheus scrapes the reconciler as its ServiceMonitor says (HTTPS,
 * the token of a ServiceAccount the synthesized binding authorizes), loads its PrometheusRule
 * (`promtool check rules` first), fires the Degraded alert for a Degraded Memcached and clears it
 * when it recovers, and answers every dashboard query; the reconcile's trace arrives at an OTLP
 * endpoint with its steps and requests as children.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { MemcachedOperator } from '../../constructs';
import { dashboardQueries } from '../../constructs/core/dashboard';
import { createTestNamespace, eventually, getJson, installDist, kubectl, kubectlOk } from '../support/kube';
import { attributeOf, type OtlpReceiver, type OtlpSpan, startOtlpReceiver } from '../support/otlp';
import { Prometheus, prometheusBinaries, promtool, ruleFileOf, scrapeJobOf } from '../support/prometheus';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';
import { find, type K8sObject, one } from '../support/synth';

const ROOT = path.resolve(__dirname, '..', '..');
/** The operator as a team would name it; its objects are applied beside the kit's own memcached operator. */
const OPERATOR = 'watched';
const JOB = `${OPERATOR}-metrics`;
const LEASE = `${OPERATOR}-operator-leader`;

jest.setTimeout(180_000);

const { missing } = prometheusBinaries();
if (missing) throw new Error(`${missing} (testing/build-prometheus.sh needs Go >= 1.24)`);

let ns: string;
let objects: K8sObject[];
let reconciler: ReconcilerProcess;
let prometheus: Prometheus;
let otlp: OtlpReceiver;
let ruleFile: string;

/** The operator with monitoring on, its Prometheus being a ServiceAccount of the test's namespace. */
function synthesize(namespace: string): K8sObject[] {
  const chart = Testing.chart();
  new MemcachedOperator(chart, OPERATOR, {
    namespace,
    createNamespace: false,
    monitoring: { prometheusServiceAccount: { name: 'prometheus', namespace }, degradedFor: '2s' },
  });
  return Testing.synth(chart) as K8sObject[];
}

/** A Memcached of one pod in the test's namespace. */
function createMemcached(name: string): void {
  kubectlOk(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name },
      spec: { size: 1 },
    }),
  });
}

beforeAll(async () => {
  installDist();
  kubectlOk(['apply', '--server-side', '-f', path.join(ROOT, 'dist', 'crds', 'monitoring-coreos-com.k8s.yaml')]);
  kubectlOk([
    'wait',
    '--for=condition=established',
    'crd/servicemonitors.monitoring.coreos.com',
    'crd/prometheusrules.monitoring.coreos.com',
  ]);
  ns = createTestNamespace('monitoring');
  objects = synthesize(ns);
  // What monitoring adds, with the ClusterRole it binds: applied as a team applies dist/.
  const monitoringObjects = [
    ...find(objects, 'ServiceMonitor'),
    ...find(objects, 'PrometheusRule'),
    ...find(objects, 'ConfigMap'),
    one(objects, 'ClusterRole', `${OPERATOR}-metrics-reader`),
    one(objects, 'ClusterRoleBinding', `${OPERATOR}-metrics-reader-rolebinding`),
  ];
  kubectlOk(['apply', '--server-side', '-f', '-'], {
    input: monitoringObjects.map((o) => JSON.stringify(o)).join('\n'),
  });
  kubectlOk(['create', 'serviceaccount', 'prometheus', '-n', ns]);

  otlp = await startOtlpReceiver();
  // The kit's memcached operator's own ServiceAccount runs it; its leader Lease is where that
  // account may hold one, under the name the synthesized rules and dashboard expect.
  reconciler = await ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig(),
    args: [
      '--controllers=memcached',
      `--namespace=${ns}`,
      '--metrics-secure=true',
      '--leader-elect',
      `--leader-election-id=${LEASE}`,
      '--leader-election-namespace=memcached-system',
      `--otlp-endpoint=${otlp.endpoint}`,
    ],
    name: 'monitored',
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-prometheus-token-'));
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, kubectlOk(['create', 'token', 'prometheus', '-n', ns, '--duration=1h']).trim(), {
    mode: 0o600,
  });
  ruleFile = path.join(dir, 'rules.yaml');
  fs.writeFileSync(ruleFile, ruleFileOf(one(objects, 'PrometheusRule', `${OPERATOR}-alerts`)));
  prometheus = await Prometheus.start({
    scrapeConfigs: [
      scrapeJobOf(one(objects, 'ServiceMonitor', `${OPERATOR}-metrics`), {
        job: JOB,
        target: `127.0.0.1:${reconciler.metricsPort}`,
        tokenFile,
        // The ServiceMonitor's 30s, shortened so that the test waits seconds, not minutes.
        interval: '1s',
      }),
    ],
    rules: [fs.readFileSync(ruleFile, 'utf8')],
  });
});

afterAll(async () => {
  await prometheus?.stop();
  kubectl(['delete', 'clusterrolebinding', `${OPERATOR}-metrics-reader-rolebinding`]);
  kubectl(['delete', 'clusterrole', `${OPERATOR}-metrics-reader`]);
  expect((await reconciler?.stop())?.code).toBe(0);
  await otlp?.close();
});

test('the synthesized objects are accepted by the API server with the Prometheus Operator CRDs', () => {
  for (const kind of ['servicemonitor', 'prometheusrule', 'configmap']) {
    const names = getJson(['get', kind, '-n', ns, '-o', 'json']).items.map((o: K8sObject) => o.metadata.name);
    expect(names.length).toBeGreaterThan(0);
  }
});

test('promtool accepts the alerting rules', () => {
  const check = promtool(['check', 'rules', ruleFile]);
  expect({ code: check.code, out: check.out }).toEqual({
    code: 0,
    out: expect.stringMatching(/SUCCESS: 7 rules found/),
  });
});

test('Prometheus scrapes the secure endpoint with the token the synthesized binding authorizes', async () => {
  const target = await eventually('the target to be up', async () => {
    const [t] = await prometheus.targets();
    return t?.health === 'up' ? t : undefined;
  });
  expect(target.labels.job).toBe(JOB);
  const reconciles = await eventually('reconcile counters in Prometheus', async () => {
    const r = await prometheus.query(`controller_runtime_reconcile_total{job="${JOB}",controller="memcached"}`);
    return r.length ? r : undefined;
  });
  expect(reconciles.map((s) => s.metric.result).sort()).toEqual(['error', 'requeue_after', 'success']);
});

describe('a Degraded Memcached', () => {
  const name = 'blocked';

  beforeAll(() => {
    // A Deployment of the name the Memcached's would have, made by someone else: the operator
    // never takes it, and reports Degraded (ChildNotOwned).
    kubectlOk(['create', 'deployment', name, '-n', ns, '--image=registry.k8s.io/pause:3.10']);
    createMemcached(name);
  });

  test('fires the Degraded alert, naming the resource in its own namespace', async () => {
    const alert = await eventually(
      'OperatorResourceDegraded to fire',
      async () =>
        (await prometheus.alerts()).find(
          (a) => a.labels.alertname === 'OperatorResourceDegraded' && a.labels.name === name && a.state === 'firing',
        ),
      90_000,
    );
    expect(alert.labels).toMatchObject({
      kind: 'Memcached',
      namespace: ns,
      name,
      reason: 'ChildNotOwned',
      operator: OPERATOR,
      severity: 'warning',
    });
    // Every rule evaluates without error (an expression Prometheus cannot run would show here).
    const rules = await prometheus.rules();
    expect(rules.map((r) => ({ rule: r.name, health: r.health, error: r.lastError ?? '' }))).toEqual(
      rules.map((r) => ({ rule: r.name, health: 'ok', error: '' })),
    );
    expect(rules).toHaveLength(7);
  });

  test('every dashboard panel’s query returns data', async () => {
    const dashboard = JSON.parse(one(objects, 'ConfigMap', `${OPERATOR}-dashboard`).data[`${OPERATOR}-operator.json`]);
    const queries = dashboardQueries(dashboard);
    expect(queries.length).toBeGreaterThanOrEqual(11);
    for (const q of queries) {
      // Grafana's $__rate_interval is at least four scrape intervals; a minute covers it here.
      const expr = q.expr.replaceAll('$__rate_interval', '1m');
      const result = await eventually(`data for "${q.panel}": ${expr}`, async () => {
        const r = await prometheus.query(expr);
        return r.length ? r : undefined;
      });
      expect({ panel: q.panel, series: result.length > 0 }).toEqual({ panel: q.panel, series: true });
    }
  });

  test('clears the alert once the resource recovers', async () => {
    kubectlOk(['delete', 'deployment', name, '-n', ns, '--wait=true']);
    await eventually(
      `${name} to be Degraded=False`,
      () => {
        const conditions = getJson(['get', 'memcached', name, '-n', ns, '-o', 'json']).status?.conditions ?? [];
        return conditions.some((c: { type: string; status: string }) => c.type === 'Degraded' && c.status === 'False')
          ? true
          : undefined;
      },
      60_000,
    );
    await eventually(
      'OperatorResourceDegraded to clear',
      async () =>
        (await prometheus.alerts()).some(
          (a) => a.labels.alertname === 'OperatorResourceDegraded' && a.labels.name === name,
        )
          ? undefined
          : true,
      60_000,
    );
    const gauge = await prometheus.query(
      `opkit_resource_condition{job="${JOB}",kind="Memcached",name="${name}",condition="Degraded"}`,
    );
    expect(gauge.map((s) => s.metric.status)).toEqual(['False']);
  });
});

test('a reconcile is a trace: its steps are children of it, its API requests children of their step', async () => {
  const name = 'traced';
  createMemcached(name);
  // The first reconcile of the resource: it creates the Deployment (an apply) and writes status.
  const trace = await eventually(
    `a trace of ${name}'s first reconcile`,
    () => {
      const spans = otlp.spans();
      const roots = spans.filter(
        (s) => s.name === 'reconcile' && attributeOf(s, 'k8s.object.name')?.stringValue === name,
      );
      for (const root of roots) {
        const inTrace = spans.filter((s) => s.traceId === root.traceId);
        if (inTrace.some((s) => s.name === 'apply') && inTrace.some((s) => s.name === 'write'))
          return { root, inTrace };
      }
      return undefined;
    },
    60_000,
  );
  const { root, inTrace } = trace;
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  const named = (n: string): OtlpSpan => {
    const s = inTrace.find((x) => x.name === n);
    if (!s) throw new Error(`no ${n} span in ${inTrace.map((x) => x.name).join(', ')}`);
    return s;
  };
  expect(root.parentSpanId).toBeUndefined();
  expect(attributeOf(root, 'controller')).toEqual({ stringValue: 'memcached' });
  expect(attributeOf(root, 'k8s.namespace.name')).toEqual({ stringValue: ns });
  for (const step of [
    'observe',
    'finalizer',
    'external',
    'render',
    'claim',
    'apply',
    'prune',
    'prepare',
    'status',
    'events',
    'write',
  ])
    expect({ step, parent: named(step).parentSpanId }).toEqual({ step, parent: root.spanId });
  // The Deployment's server-side apply: an HTTP span under the apply step, answered.
  const patch = inTrace.find(
    (s) =>
      s.kind === 3 &&
      attributeOf(s, 'http.request.method')?.stringValue === 'PATCH' &&
      String(attributeOf(s, 'url.path')?.stringValue).includes('/deployments/'),
  );
  expect(patch && byId.get(patch.parentSpanId ?? '')?.name).toBe('apply');
  expect(attributeOf(patch!, 'http.response.status_code')).toEqual({ intValue: expect.stringMatching(/^20[01]$/) });
  // The status write (paced: the first reconcile after the children settle makes it), under
  // the write step of a reconcile of the same resource.
  const statusWrite = await eventually(`${name}'s status write in a trace`, () =>
    otlp
      .spans()
      .find(
        (s) => s.kind === 3 && String(attributeOf(s, 'url.path')?.stringValue).endsWith(`/memcacheds/${name}/status`),
      ),
  );
  const all = new Map(otlp.spans().map((s) => [s.spanId, s]));
  const writeStep = all.get(statusWrite.parentSpanId ?? '');
  expect(writeStep?.name).toBe('write');
  const itsReconcile = all.get(writeStep?.parentSpanId ?? '');
  expect(itsReconcile?.name).toBe('reconcile');
  expect(itsReconcile && attributeOf(itsReconcile, 'k8s.object.name')).toEqual({ stringValue: name });
  expect(new Set([statusWrite.traceId, writeStep?.traceId, itsReconcile?.traceId]).size).toBe(1);
  // The resource's service and replica.
  const resource = otlp.requests[0]!.body.resourceSpans[0]!.resource.attributes;
  expect(resource.find((a) => a.key === 'service.name')?.value.stringValue).toBe('cdk8s-operator-kit');
  expect(resource.find((a) => a.key === 'service.instance.id')?.value.stringValue).toBe(reconciler.identity);
});
