/**
 * What a team needs to watch an operator, for the Prometheus Operator and Grafana: a
 * ServiceMonitor that scrapes its /metrics with the credentials the endpoint asks for (and the
 * binding that grants them), a PrometheusRule of alerts, and a Grafana dashboard in a ConfigMap
 * its sidecar finds. The ServiceMonitor and PrometheusRule are typed from the Prometheus
 * Operator's own CRDs (imports/monitoring.coreos.com.ts, vendor/prometheus-operator).
 */
import { k8s } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import {
  PrometheusRule,
  PrometheusRuleSpecGroupsRulesExpr,
  ServiceMonitor,
  ServiceMonitorSpecEndpointsScheme,
} from '../../imports/monitoring.coreos.com';
import { operatorDashboard } from './dashboard';

/** A ServiceAccount, by name and namespace. */
export interface ServiceAccountReference {
  readonly name: string;
  readonly namespace: string;
}

/** How an operator is monitored, when `monitoring` is on. */
export interface MonitoringOptions {
  /**
   * The ServiceAccount your Prometheus scrapes with, bound to the operator's metrics-reader
   * ClusterRole so its token may read the secure /metrics (with `metricsSecure: false` nothing
   * is bound).
   * @default { name: 'prometheus-k8s', namespace: 'monitoring' } (kube-prometheus)
   */
  readonly prometheusServiceAccount?: ServiceAccountReference;
  /**
   * Labels your Prometheus selects ServiceMonitors and PrometheusRules by, added to both (for
   * kube-prometheus-stack: `{ release: '<its release name>' }`).
   * @default none
   */
  readonly labels?: Record<string, string>;
  /** How often /metrics is scraped. @default '30s' */
  readonly interval?: string;
  /** How long a resource stays Degraded before its alert fires. @default '15m' */
  readonly degradedFor?: string;
  /**
   * A Grafana dashboard of the operator in a ConfigMap labelled `grafana_dashboard: "1"`, which
   * Grafana's dashboard sidecar (as kube-prometheus-stack runs it) loads.
   * @default true
   */
  readonly dashboard?: boolean;
}

/** The options `monitoring` stands for: its own, every default for `true`, none when off. */
export function monitoringOptions(monitoring: boolean | MonitoringOptions | undefined): MonitoringOptions | undefined {
  return typeof monitoring === 'object' ? monitoring : monitoring ? {} : undefined;
}

/** What the monitoring objects are made from: the operator's names and settings. */
export interface MonitoringTarget {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly selector: Record<string, string>;
  /** The metrics Service's name, its port's name, and whether it serves HTTPS to authorized callers. */
  readonly service: { readonly name: string; readonly port: string; readonly secure: boolean };
  /** The Lease its replicas elect a leader with; none without leader election. */
  readonly leaderLease?: string;
  /** The ClusterRole allowed `get` on /metrics (secure metrics only). */
  readonly metricsReaderRole?: string;
}

export const DEFAULT_PROMETHEUS_SERVICE_ACCOUNT: ServiceAccountReference = {
  name: 'prometheus-k8s',
  namespace: 'monitoring',
};

/** Where a Prometheus pod's own token is mounted. */
const PROMETHEUS_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The ServiceMonitor, PrometheusRule, dashboard and metrics-reader binding of an operator. */
export function addMonitoring(
  scope: Construct,
  clusterScope: Construct,
  target: MonitoringTarget,
  options: MonitoringOptions,
): void {
  const labels = { ...target.labels, ...options.labels };
  const metadata = (suffix: string) => ({ name: `${target.name}-${suffix}`, namespace: target.namespace, labels });
  new ServiceMonitor(scope, 'ServiceMonitor', {
    metadata: metadata('metrics'),
    spec: {
      selector: { matchLabels: target.selector },
      namespaceSelector: { matchNames: [target.namespace] },
      endpoints: [scrapeEndpoint(target, options)],
    },
  });
  new PrometheusRule(scope, 'PrometheusRule', {
    metadata: metadata('alerts'),
    spec: {
      groups: [
        {
          name: `${target.name}-operator`,
          rules: operatorAlerts(target, options).map((a) => ({
            ...a,
            expr: PrometheusRuleSpecGroupsRulesExpr.fromString(a.expr),
          })),
        },
      ],
    },
  });
  if (options.dashboard ?? true) {
    new k8s.KubeConfigMap(scope, 'Dashboard', {
      metadata: { ...metadata('dashboard'), labels: { ...labels, grafana_dashboard: '1' } },
      data: { [`${target.name}-operator.json`]: JSON.stringify(operatorDashboard(target), null, 2) },
    });
  }
  if (target.metricsReaderRole) {
    const prometheus = options.prometheusServiceAccount ?? DEFAULT_PROMETHEUS_SERVICE_ACCOUNT;
    new k8s.KubeClusterRoleBinding(clusterScope, 'MetricsReaderBinding', {
      metadata: { name: `${target.name}-metrics-reader-rolebinding`, labels: target.labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: target.metricsReaderRole },
      subjects: [{ kind: 'ServiceAccount', ...prometheus }],
    });
  }
}

/**
 * How Prometheus scrapes the metrics Service: the secure endpoint with its own ServiceAccount
 * token, which the reconciler reviews (TokenReview) and authorizes (SubjectAccessReview, granted
 * by the metrics-reader binding). The reconciler's serving certificate is self-signed (or
 * cert-manager's), so the scrape is encrypted but not verified, as kubebuilder's scaffold does.
 * `honorLabels` keeps the `namespace` of the condition series (the resource's) rather than
 * renaming it for the target's, as kube-state-metrics' ServiceMonitor does.
 */
function scrapeEndpoint(target: MonitoringTarget, options: MonitoringOptions) {
  const common = {
    port: target.service.port,
    path: '/metrics',
    interval: options.interval ?? '30s',
    honorLabels: true,
  };
  if (!target.service.secure) return { ...common, scheme: ServiceMonitorSpecEndpointsScheme.HTTP };
  return {
    ...common,
    scheme: ServiceMonitorSpecEndpointsScheme.HTTPS,
    bearerTokenFile: PROMETHEUS_TOKEN_FILE,
    tlsConfig: { insecureSkipVerify: true },
  };
}

/** An alerting rule, as Prometheus has it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Record<string, string>;
  readonly annotations: { readonly summary: string; readonly description: string };
}

/**
 * The alerts: each names the operator (label `operator`) and says what to look at. Thresholds
 * are for a controller that is stuck, not for a busy one: a relist of 10,000 resources fills the
 * queue for a minute or two, never for 15.
 */
export function operatorAlerts(target: MonitoringTarget, options: MonitoringOptions): AlertRule[] {
  const job = `job="${target.service.name}"`;
  const alert: Alert = (name, severity, rule) => ({
    alert: name,
    expr: rule.expr,
    for: rule.for,
    labels: { severity, operator: target.name },
    annotations: { summary: rule.summary, description: rule.description },
  });
  return [
    alert('OperatorDown', 'critical', {
      expr: `absent(up{${job}} == 1)`,
      for: '5m',
      summary: `The ${target.name} operator cannot be scraped`,
      description: `No replica of the ${target.name} operator in ${target.namespace} has answered a scrape for 5 minutes: none runs, or Prometheus may not read its /metrics.`,
    }),
    ...reconcileAlerts(job, alert),
    alert('OperatorResourceDegraded', 'warning', {
      expr: `opkit_resource_condition{${job},condition="Degraded",status="True"} == 1`,
      for: options.degradedFor ?? '15m',
      summary: 'A resource is Degraded',
      description:
        '{{ $labels.kind }} {{ $labels.namespace }}/{{ $labels.name }} is Degraded ({{ $labels.reason }}); `kubectl describe` it for the message and Events.',
    }),
    alert('OperatorWatchErrors', 'warning', {
      expr: `sum by (resource) (increase(opkit_watch_restarts_total{${job},reason="error"}[15m])) > 3`,
      for: '0m',
      summary: 'Watches of the API server keep failing',
      description:
        'The watch of {{ $labels.resource }} failed {{ $value }} times in 15 minutes (the API server is unreachable or refuses it); the cache may be stale.',
    }),
    ...(target.leaderLease
      ? [
          alert('OperatorNoLeader', 'critical', {
            expr: `max(leader_election_master_status{${job},name="${target.leaderLease}"}) < 1`,
            for: '5m',
            summary: 'No replica of the operator leads: nothing is reconciled',
            description: `Replicas of the ${target.name} operator run, but none has held the Lease ${target.namespace}/${target.leaderLease} for 5 minutes.`,
          }),
        ]
      : []),
  ];
}

type Alert = (
  name: string,
  severity: 'warning' | 'critical',
  rule: { expr: string; for: string; summary: string; description: string },
) => AlertRule;

/** Reconciles that fail, and a work queue that does not drain or makes resources wait. */
function reconcileAlerts(job: string, alert: Alert): AlertRule[] {
  return [
    alert('OperatorReconcileErrors', 'warning', {
      expr: `sum by (controller) (rate(controller_runtime_reconcile_errors_total{${job}}[5m])) / sum by (controller) (rate(controller_runtime_reconcile_total{${job}}[5m])) > 0.1`,
      for: '15m',
      summary: 'More than 10% of reconciles fail',
      description:
        '{{ $value | humanizePercentage }} of the {{ $labels.controller }} controller\'s reconciles failed over 5 minutes; its log says why ("reconciler error").',
    }),
    alert('OperatorWorkQueueNotDraining', 'warning', {
      expr: `sum by (name) (workqueue_depth{${job}}) > 100`,
      for: '15m',
      summary: 'The work queue has not drained for 15 minutes',
      description:
        '{{ $value }} resources of the {{ $labels.name }} controller wait to be reconciled: it falls behind its events.',
    }),
    alert('OperatorWorkQueueSlow', 'warning', {
      expr: `histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{${job}}[5m]))) > 60`,
      for: '15m',
      summary: 'Resources wait more than a minute to be reconciled',
      description:
        "The 99th percentile wait in the {{ $labels.name }} controller's work queue is {{ $value | humanizeDuration }}.",
    }),
  ];
}
