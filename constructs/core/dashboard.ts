/**
 * The Grafana dashboard of an operator: its reconciles, work queue, API requests, watches,
 * leader, memory, and the conditions of the resources it serves. Every query selects the
 * operator's scrape job (its metrics Service's name, the job the Prometheus Operator gives a
 * ServiceMonitor's targets); `$datasource` picks the Prometheus.
 */
import type { MonitoringTarget } from './monitoring';

/** A dashboard panel, as Grafana's JSON model has it (the fields the kit sets). */
interface Panel {
  readonly id: number;
  readonly title: string;
  readonly type: 'timeseries' | 'table' | 'stat';
  readonly description: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly datasource: { type: 'prometheus'; uid: '${datasource}' };
  readonly targets: { refId: string; expr: string; legendFormat?: string; instant?: boolean; format?: string }[];
  readonly fieldConfig: { defaults: { unit?: string }; overrides: [] };
}

interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly type?: Panel['type'];
  readonly unit?: string;
  readonly queries: readonly { expr: string; legend?: string }[];
}

/** Every query of a dashboard, in panel order (for tests and docs). */
export function dashboardQueries(dashboard: { panels: readonly Pick<Panel, 'title' | 'targets'>[] }) {
  return dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
}

/** `rate(metric{job}[$__rate_interval])` for the operator's job. */
type Rate = (metric: string) => string;

function panelSpecs(target: MonitoringTarget): PanelSpec[] {
  const job = `job="${target.service.name}"`;
  const rate: Rate = (metric) => `rate(${metric}{${job}}[$__rate_interval])`;
  return [
    ...reconcilePanels(rate),
    ...queuePanels(job, rate),
    ...resourcePanels(job),
    ...processPanels(job, rate),
    ...(target.leaderLease ? [leaderPanel(job, target.leaderLease)] : []),
  ];
}

/** How many reconciles, how many fail, how long they take. */
function reconcilePanels(rate: Rate): PanelSpec[] {
  return [
    {
      title: 'Reconciles',
      description: 'Reconciles per second, by controller and result.',
      unit: 'ops',
      queries: [
        {
          expr: `sum by (controller, result) (${rate('controller_runtime_reconcile_total')})`,
          legend: '{{controller}} {{result}}',
        },
      ],
    },
    {
      title: 'Reconcile errors',
      description: 'Failed reconciles per second, by controller (the log says why: "reconciler error").',
      unit: 'ops',
      queries: [
        {
          expr: `sum by (controller) (${rate('controller_runtime_reconcile_errors_total')})`,
          legend: '{{controller}}',
        },
      ],
    },
    {
      title: 'Reconcile time',
      description: 'How long a reconcile takes: median and 99th percentile, by controller.',
      unit: 's',
      queries: [0.5, 0.99].map((q) => ({
        expr: `histogram_quantile(${q}, sum by (controller, le) (${rate('controller_runtime_reconcile_time_seconds_bucket')}))`,
        legend: `{{controller}} p${q * 100}`,
      })),
    },
  ];
}

/** What waits to be reconciled, and for how long. */
function queuePanels(job: string, rate: Rate): PanelSpec[] {
  return [
    {
      title: 'Work queue depth',
      description: 'Resources waiting to be reconciled, by controller.',
      queries: [{ expr: `sum by (name) (workqueue_depth{${job}})`, legend: '{{name}}' }],
    },
    {
      title: 'Work queue wait',
      description: 'How long a resource waits in the queue before a worker takes it (99th percentile).',
      unit: 's',
      queries: [
        {
          expr: `histogram_quantile(0.99, sum by (name, le) (${rate('workqueue_queue_duration_seconds_bucket')}))`,
          legend: '{{name}}',
        },
      ],
    },
  ];
}

/** The resources served, by condition; the Degraded ones and since when. */
function resourcePanels(job: string): PanelSpec[] {
  return [
    {
      title: 'Resources by condition',
      description: 'The resources the operator serves, by kind, condition and status.',
      type: 'stat',
      queries: [
        {
          expr: `count by (kind, condition, status) (opkit_resource_condition{${job}})`,
          legend: '{{kind}} {{condition}}={{status}}',
        },
      ],
    },
    {
      title: 'Degraded resources',
      description: 'Each Degraded resource, its reason, and for how long it has been Degraded.',
      type: 'table',
      unit: 's',
      queries: [
        {
          expr: `(time() - opkit_resource_condition_last_transition_timestamp_seconds{${job},condition="Degraded"}) and on (kind, namespace, name) (opkit_resource_condition{${job},condition="Degraded",status="True"} == 1)`,
          legend: '{{kind}} {{namespace}}/{{name}}',
        },
      ],
    },
  ];
}

/** The process: its API requests, watches, memory and CPU. */
function processPanels(job: string, rate: Rate): PanelSpec[] {
  return [
    {
      title: 'API requests',
      description: 'Requests to the API server per second, by method and status code.',
      unit: 'reqps',
      queries: [
        { expr: `sum by (method, code) (${rate('rest_client_requests_total')})`, legend: '{{method}} {{code}}' },
      ],
    },
    {
      title: 'Watch restarts',
      description:
        'Watches restarted, by resource and reason: "closed" is the API server ending one (normal), "error" and "expired" are not.',
      queries: [
        {
          expr: `sum by (resource, reason) (increase(opkit_watch_restarts_total{${job}}[$__rate_interval]))`,
          legend: '{{resource}} {{reason}}',
        },
      ],
    },
    {
      title: 'Memory and CPU',
      description: 'Resident memory of each replica, and the CPU it uses.',
      unit: 'bytes',
      queries: [
        { expr: `process_resident_memory_bytes{${job}}`, legend: '{{pod}} {{instance}} memory' },
        { expr: rate('process_cpu_seconds_total'), legend: '{{pod}} {{instance}} CPU (cores)' },
      ],
    },
  ];
}

/** Which replica leads. */
function leaderPanel(job: string, lease: string): PanelSpec {
  return {
    title: 'Leader',
    description: 'Which replica holds the leader Lease (1): the one that reconciles.',
    queries: [
      {
        expr: `max by (pod, instance) (leader_election_master_status{${job},name="${lease}"})`,
        legend: '{{pod}} {{instance}}',
      },
    ],
  };
}

/** The dashboard's JSON model (Grafana 10 and later). */
export function operatorDashboard(target: MonitoringTarget) {
  const panels: Panel[] = panelSpecs(target).map((spec, i) => ({
    id: i + 1,
    title: spec.title,
    type: spec.type ?? 'timeseries',
    description: spec.description,
    // Two panels a row, 8 high.
    gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
    datasource: { type: 'prometheus', uid: '${datasource}' },
    targets: spec.queries.map((q, j) => ({
      refId: String.fromCharCode(65 + j),
      expr: q.expr,
      ...(q.legend ? { legendFormat: q.legend } : {}),
      ...(spec.type === 'table' ? { instant: true, format: 'table' } : {}),
    })),
    fieldConfig: { defaults: spec.unit ? { unit: spec.unit } : {}, overrides: [] },
  }));
  return {
    uid: `opkit-${target.name}`.slice(0, 40),
    title: `${target.name} operator`,
    tags: ['cdk8s-operator-kit', 'operator'],
    timezone: 'browser',
    schemaVersion: 39,
    editable: true,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    templating: {
      list: [{ name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', current: {} }],
    },
    panels,
  };
}
