import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueMetrics } from './workqueue';

/**
 * The manager's Prometheus metrics, named as controller-runtime and client-go name theirs, so
 * existing dashboards and alerts work unchanged.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });

  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });

  readonly terminalReconcileErrors = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller (not retried until the spec changes)',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });

  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  readonly queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  readonly queueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  readonly queueLatency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60],
    registers: [this.registry],
  });

  readonly watchRestarts = new Counter({
    name: 'opkit_watch_restarts_total',
    help: 'Watch restarts per resource and reason (closed, error, expired)',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });

  readonly apiRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests to the API server, partitioned by method and status code',
    labelNames: ['method', 'code'] as const,
    registers: [this.registry],
  });

  readonly apiLatency = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds, by verb',
    labelNames: ['verb'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly leader = new Gauge({
    name: 'leader_election_master_status',
    help: '1 while this process holds the leader lease, else 0',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  forQueue(name: string): QueueMetrics {
    return {
      depth: (n) => {
        this.queueDepth.set({ name }, n);
      },
      added: () => {
        this.queueAdds.inc({ name });
      },
      retried: () => {
        this.queueRetries.inc({ name });
      },
      latency: (s) => {
        this.queueLatency.observe({ name }, s);
      },
    };
  }

  /** Observer for KubeClient, counting every API request. */
  observeRequest = (method: string, _path: string, status: number, seconds: number): void => {
    this.apiRequests.inc({ method, code: status === 0 ? '<error>' : String(status) });
    this.apiLatency.observe({ verb: method }, seconds);
  };
}
