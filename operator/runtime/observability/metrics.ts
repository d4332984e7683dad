import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Condition } from '../../../constructs/contract/conditions';
import type { QueueMetrics } from '../queue';

/** A custom resource as the condition gauges read it from a cache. */
interface WithConditions {
  readonly metadata: { readonly namespace?: string; readonly name?: string };
  readonly status?: { readonly conditions?: readonly Condition[] };
}

/** Why a watch restarted (informer.ts): every series starts at 0 with its informer. */
export const WATCH_RESTART_REASONS = ['closed', 'error', 'expired'] as const;

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

  readonly reconcileWrites = new Counter({
    name: 'opkit_reconcile_writes_total',
    help: "Writes the reconciles of a controller made, by the kind of action of their plan (ApplyChild, GrowClaim, RecreateStatefulSet, PruneChild, LabelPod, DeleteStuckPod, DeleteClaim, RestartPod; External:<system>:<action> for an external step's writes)",
    labelNames: ['controller', 'action'] as const,
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

  /**
   * Per resource, how long its quietest watch has had nothing from the API server — no list page,
   * watch accepted, event or bookmark — read when scraped. The server bookmarks a watch about every
   * minute, so this stays under a minute or so while its watches deliver; `/healthz` fails past the
   * stall window (`--watch-stall-timeout`).
   */
  readonly watchSilence = new Gauge({
    name: 'opkit_watch_last_event_age_seconds',
    help: 'Per resource, seconds since its quietest watch last had anything from the API server (a list page, the watch accepted, an event or a bookmark)',
    labelNames: ['resource'] as const,
    registers: [this.registry],
    collect: () => {
      this.watchSilence.reset();
      for (const [resource, silentMs] of this.watchSilenceSources)
        this.watchSilence.set({ resource }, silentMs() / 1000);
    },
  });

  private readonly watchSilenceSources = new Map<string, () => number>();

  readonly watchEvents = new Counter({
    name: 'opkit_watch_events_total',
    help: 'Objects received from the API server by resource: list items and watch events (what a shard receives; bookmarks aside)',
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests to the API server, partitioned by method and status code',
    labelNames: ['method', 'code'] as const,
    registers: [this.registry],
  });

  readonly apiRetries = new Counter({
    name: 'rest_client_request_retries_total',
    help: 'Requests sent again in place, by what they were answered (429 or 503 with Retry-After; <error>: a connection reset before any answer) and verb',
    labelNames: ['code', 'verb'] as const,
    registers: [this.registry],
  });

  readonly apiThrottle = new Histogram({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'How long requests waited for the client-side rate limit (--kube-api-qps), by verb',
    labelNames: ['verb'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly apiLatency = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds, by verb',
    labelNames: ['verb'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /**
   * The conditions of every custom resource a controller has in its cache, read when scraped:
   * one series per resource and condition, 1, labelled with its current status and reason. A
   * resource has as many series as conditions (3 for the kit's kinds), and reasons are the
   * kinds' fixed vocabulary, so its cardinality is that of the resources. "Degraded Memcacheds"
   * is `opkit_resource_condition{kind="Memcached",condition="Degraded",status="True"}`.
   */
  readonly resourceCondition = new Gauge({
    name: 'opkit_resource_condition',
    help: "1 per condition of each custom resource, labelled with the condition's status and reason",
    labelNames: ['kind', 'namespace', 'name', 'condition', 'status', 'reason'] as const,
    registers: [this.registry],
    collect: () => {
      this.collectConditions();
    },
  });

  readonly conditionTransition = new Gauge({
    name: 'opkit_resource_condition_last_transition_timestamp_seconds',
    help: 'When each condition of each custom resource last changed status (Unix seconds)',
    labelNames: ['kind', 'namespace', 'name', 'condition'] as const,
    registers: [this.registry],
  });

  private readonly conditionSources = new Map<string, { kind: string; list: () => readonly WithConditions[] }>();

  readonly shard = new Gauge({
    name: 'opkit_shard',
    help: '1 for the shard this process holds (index and count as labels); none while it stands by',
    labelNames: ['shard', 'shards'],
    registers: [this.registry],
  });
  readonly shardFilter = new Gauge({
    name: 'opkit_shard_filter',
    help: 'Per resource, 1 for where the shard range is applied: by="server" (sharded list and watch) or by="client" (the API server ignored shardSelector: every object is received, the others dropped)',
    labelNames: ['resource', 'by'],
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

  /**
   * A controller's counters at 0 from its start, as controller-runtime has them: a rate of
   * errors is then 0, not absent, until the first error.
   */
  startController(controller: string): void {
    for (const result of ['success', 'error', 'requeue_after']) this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalReconcileErrors.inc({ controller }, 0);
    this.activeWorkers.set({ controller }, 0);
  }

  /** Reports the conditions of a kind's resources, read from `list` (a cache) at each scrape. */
  watchConditions(kind: { group: string; kind: string }, list: () => readonly WithConditions[]): void {
    this.conditionSources.set(`${kind.group}/${kind.kind}`, { kind: kind.kind, list });
  }

  /**
   * An informer of `resource` was made: its watch restarts count from 0, for every reason, and its
   * watches' silence is read from `silentMs` at each scrape (the quietest of its informers).
   */
  startWatch(resource: string, silentMs?: () => number): void {
    if (silentMs) {
      const before = this.watchSilenceSources.get(resource);
      this.watchSilenceSources.set(resource, before ? () => Math.max(before(), silentMs()) : silentMs);
    }
    for (const reason of WATCH_RESTART_REASONS) this.watchRestarts.inc({ resource, reason }, 0);
    this.watchEvents.inc({ resource }, 0);
  }

  private collectConditions(): void {
    this.resourceCondition.reset();
    this.conditionTransition.reset();
    for (const { kind, list } of this.conditionSources.values()) {
      for (const r of list()) {
        const { namespace = '', name = '' } = r.metadata;
        for (const c of r.status?.conditions ?? []) {
          this.resourceCondition.set(
            { kind, namespace, name, condition: c.type, status: c.status, reason: c.reason },
            1,
          );
          const changed = Date.parse(c.lastTransitionTime);
          if (!Number.isNaN(changed))
            this.conditionTransition.set({ kind, namespace, name, condition: c.type }, changed / 1000);
        }
      }
    }
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
  /** How long a request waited for the client-side rate limit (the client's `onThrottle`). */
  observeThrottle = (verb: string, seconds: number): void => {
    this.apiThrottle.observe({ verb }, seconds);
  };

  /** A request sent again in place (the client's `onRetry`). */
  observeRetry = (verb: string, code: string): void => {
    this.apiRetries.inc({ code, verb });
  };

  observeRequest = (method: string, _path: string, status: number, seconds: number): void => {
    this.apiRequests.inc({ method, code: status === 0 ? '<error>' : String(status) });
    this.apiLatency.observe({ verb: method }, seconds);
  };
}
