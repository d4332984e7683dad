import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { ReconcilerFlag } from '../constructs/contract/reconciler-flags';

/** The manager's command line, with controller-runtime's flag names. */
export interface Flags {
  controllers: string[];
  /** The namespaces watched (`--namespace` or `--namespaces`); none: all of them. */
  namespaces?: string[];
  leaderElect: boolean;
  /** How many shards the namespaces are cut into (`--shards`); 1: no sharding. */
  shards: number;
  leaderElectionId: string;
  leaderElectionNamespace?: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** A standby lists and watches before it leads (`--warm-standby`). */
  warmStandby: boolean;
  metricsBindAddress: string;
  metricsSecure: boolean;
  metricsCertPath?: string;
  healthProbeBindAddress: string;
  /** Where admission webhooks are served, when a controller has hooks ("0": not served). */
  webhookBindAddress: string;
  /** A directory with tls.crt and tls.key (e.g. cert-manager's Secret, mounted). */
  webhookCertPath?: string;
  /** The Secret of a self-managed certificate, in the operator's namespace. */
  webhookCertSecret?: string;
  /** The names the self-managed certificate is for. */
  webhookCertHosts: string[];
  /** The Validating/MutatingWebhookConfiguration whose caBundle trusts it. */
  webhookConfiguration?: string;
  /** Out of cluster, against an API server on this machine: webhooks served and registered on 127.0.0.1. */
  webhookLoopback: boolean;
  maxConcurrentReconciles: number;
  /** Changed objects before the initial list's and resyncs' reconciles (false: first in, first out). */
  priorityQueue: boolean;
  kubeconfig?: string;
  logLevel: string;
  logFormat: 'json' | 'text';
  syncPeriodMs: number;
  /** A watch with nothing from the API server this long fails /healthz (half as long: watched again). */
  watchStallTimeoutMs: number;
  /** Requests a second to the API server, on average; 0: no client-side limit. */
  kubeApiQps: number;
  /** Requests at once after a quiet spell, with a QPS limit. */
  kubeApiBurst: number;
  /** OTLP/HTTP endpoint (base URL) traces are sent to; none: tracing off. */
  otlpEndpoint?: string;
  help: boolean;
}

/** The help text, listing the controllers of the image it runs in (a user's image has its own). */
export function usage(controllers: readonly string[]): string {
  return `Usage: reconciler [flags]

  --controllers=a,b                 controllers to run (default: all):
${' '.repeat(36)}${wrap(controllers.join(', '), 36, 100)}
${USAGE_FLAGS}`;
}

/** Breaks a line at ", " so that no line is longer than `width`, continuing at column `indent`. */
function wrap(text: string, indent: number, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

const USAGE_FLAGS = `  --namespace=NS                    watch only this namespace (default: all namespaces)
  --namespaces=A,B                  watch only these namespaces: a list and watch of each, so rights
                                    there suffice (a Role in each); not with --namespace
  --leader-elect                    elect one active replica through a Lease
  --shards=N                        cut the namespaces into N shards by a hash of their name; each
                                    replica reconciles one, held through the Lease
                                    <leader-election-id>-shard-<i>-of-<N> (needs --leader-elect; a
                                    replica without a shard stands by) (default 1: no sharding)
  --leader-election-id=NAME         Lease name (default: cdk8s-operator-kit-leader)
  --leader-election-namespace=NS    Lease namespace (default: the pod's namespace)
  --leader-election-lease-duration  (default 15s)
  --leader-election-renew-deadline  (default 10s)
  --leader-election-retry-period    (default 2s)
  --warm-standby=true|false         with --leader-elect: a replica that does not lead lists and
                                    watches as the leader does, so it takes over with synced caches
                                    (default true; false: it caches nothing until it leads, for
                                    memory, and a takeover waits for every list)
  --metrics-bind-address=ADDR       /metrics (default :8080; 0 disables)
  --metrics-secure=true|false       serve /metrics over HTTPS to callers whose token is allowed
                                    get on /metrics (TokenReview + SubjectAccessReview) (default true)
  --metrics-cert-path=DIR           tls.crt and tls.key for /metrics (default: self-signed, in memory)
  --health-probe-bind-address=ADDR  /healthz and /readyz (default :8081; 0 disables)
  --webhook-bind-address=ADDR       admission webhooks, when a controller has hooks (default :9443, or
                                    127.0.0.1:0 with --webhook-loopback: a free port; 0 disables)
  --webhook-cert-path=DIR           tls.crt and tls.key for the webhooks (e.g. from cert-manager)
  --webhook-cert-secret=NAME        or: a self-managed certificate kept in this Secret of the
                                    operator's namespace, renewed when a third of its life is left
  --webhook-cert-hosts=A,B          the names it is for (the webhook Service's DNS names)
  --webhook-configuration=NAME      the Validating/MutatingWebhookConfiguration whose caBundle it sets
  --webhook-loopback                out of cluster, against the package's local control plane: serve
                                    the webhooks on 127.0.0.1 with an in-memory certificate, and route
                                    the Services the kinds' CRDs (and --webhook-configuration) call
                                    to them; the CRDs keep their Services, and only gain the caBundle
  --max-concurrent-reconciles=N     workers per controller (default 4)
  --priority-queue=true|false       reconcile created and changed objects before the initial list
                                    and resyncs (default true; false: first in, first out)
  --sync-period=DURATION            re-reconcile everything this often (default 10h)
  --watch-stall-timeout=DURATION    /healthz fails when a watch has had nothing from the API server,
                                    not even a bookmark (sent about every minute), this long; one
                                    silent half as long is watched again first (default 3m)
  --kube-api-qps=N                  requests a second to the API server, on average (default 0: no
                                    client-side limit; Lease renewals are never held by it)
  --kube-api-burst=N                requests at once after a quiet spell, with --kube-api-qps
                                    (default: 1.5 × the QPS)
  --otlp-endpoint=URL               send a trace of each reconcile (a span per step and per API request)
                                    over OTLP/HTTP to this base URL, e.g. http://otel-collector:4318
                                    (default: $OTEL_EXPORTER_OTLP_ENDPOINT; none: tracing off)
  --kubeconfig=PATH                 (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  --log-level=debug|info|warn|error (default info)
  --log-format=json|text            JSON lines for log pipelines, or text for a terminal (default json)
`;

/** Parses Go-style durations: 500ms, 15s, 2m, 10h, 1h30m. */
export function parseDuration(text: string): number {
  const units: Readonly<Record<string, number | undefined>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    const [, amount, unit] = m;
    total += Number(amount) * (unit ? (units[unit] ?? 0) : 0);
    consumed += m[0].length;
  }
  if (consumed !== text.length || consumed === 0)
    throw new Error(`invalid duration ${JSON.stringify(text)}; use forms like 500ms, 15s, 2m, 10h`);
  return total;
}

/** `--kube-api-qps` (a number, 0: none) and `--kube-api-burst` (a whole number; 1.5 × the QPS unless given). */
function apiRateLimit(qpsText: string, burstText: string | undefined): { kubeApiQps: number; kubeApiBurst: number } {
  const qps = Number(qpsText);
  if (!/^\d+(\.\d+)?$/.test(qpsText) || !Number.isFinite(qps))
    throw new Error(
      `--kube-api-qps must be a number of requests a second (0: no limit), got ${JSON.stringify(qpsText)}`,
    );
  if (burstText !== undefined && qps === 0) throw new Error('--kube-api-burst needs --kube-api-qps');
  const burst = burstText === undefined ? Math.max(1, Math.ceil(qps * 1.5)) : positiveInt('kube-api-burst', burstText);
  return { kubeApiQps: qps, kubeApiBurst: qps === 0 ? 0 : burst };
}

function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} must be a whole number of at least 1, got ${JSON.stringify(text)}`);
  return n;
}

/** How one flag is parsed: its type, default and short name. */
type FlagOption = NonNullable<ParseArgsConfig['options']>[string];

/** The reconciler's flags: each name's type and default (names: the contract's RECONCILER_FLAGS), which `usage` documents. */
export const FLAG_OPTIONS = {
  controllers: { type: 'string' },
  namespace: { type: 'string' },
  namespaces: { type: 'string' },
  'leader-elect': { type: 'boolean', default: false },
  shards: { type: 'string', default: '1' },
  'leader-election-id': { type: 'string', default: 'cdk8s-operator-kit-leader' },
  'leader-election-namespace': { type: 'string' },
  'leader-election-lease-duration': { type: 'string', default: '15s' },
  'leader-election-renew-deadline': { type: 'string', default: '10s' },
  'leader-election-retry-period': { type: 'string', default: '2s' },
  'warm-standby': { type: 'string', default: 'true' },
  'metrics-bind-address': { type: 'string', default: ':8080' },
  'metrics-secure': { type: 'string', default: 'true' },
  'metrics-cert-path': { type: 'string' },
  'health-probe-bind-address': { type: 'string', default: ':8081' },
  'webhook-bind-address': { type: 'string' },
  'webhook-cert-path': { type: 'string' },
  'webhook-cert-secret': { type: 'string' },
  'webhook-cert-hosts': { type: 'string', default: '' },
  'webhook-configuration': { type: 'string' },
  'webhook-loopback': { type: 'boolean', default: false },
  'max-concurrent-reconciles': { type: 'string', default: '4' },
  'priority-queue': { type: 'string', default: 'true' },
  'sync-period': { type: 'string', default: '10h' },
  'watch-stall-timeout': { type: 'string', default: '3m' },
  'kube-api-qps': { type: 'string', default: '0' },
  'kube-api-burst': { type: 'string' },
  'otlp-endpoint': { type: 'string' },
  kubeconfig: { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  'log-format': { type: 'string', default: 'json' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies Record<ReconcilerFlag, FlagOption>;

type FlagValues = ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; options: typeof FLAG_OPTIONS }>
>['values'];

/** The controllers `--controllers` names (every known one without it); an unknown name is an error. */
function selectedControllers(list: string | undefined, known: string[]): string[] {
  const controllers = list
    ? list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : known;
  const unknown = controllers.filter((c) => !known.includes(c));
  if (unknown.length) throw new Error(`unknown controller(s) ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return controllers;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The namespaces `--namespace` or `--namespaces` name, each a DNS label, in the order given and
 * each once; none (every namespace) for neither, or an empty one (`--namespace=`).
 */
function watchedNamespaces(one: string | undefined, many: string | undefined): string[] | undefined {
  if (one && many) throw new Error('give --namespace or --namespaces, not both');
  const names = (one ?? many ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const invalid = names.filter((n) => !DNS_LABEL.test(n) || n.length > 63);
  if (invalid.length)
    throw new Error(`--namespaces: ${invalid.map((n) => JSON.stringify(n)).join(', ')} is not a namespace name`);
  return names.length ? [...new Set(names)] : undefined;
}

/** Flags with a fixed set of values. */
function checkChoices(values: FlagValues): 'json' | 'text' {
  if (!['debug', 'info', 'warn', 'error'].includes(values['log-level']))
    throw new Error(`--log-level must be debug, info, warn or error`);
  const logFormat = values['log-format'];
  if (logFormat !== 'json' && logFormat !== 'text')
    throw new Error(`--log-format must be json or text, got ${JSON.stringify(logFormat)}`);
  for (const name of ['metrics-secure', 'priority-queue', 'warm-standby'] as const)
    if (!['true', 'false'].includes(values[name]))
      throw new Error(`--${name} must be true or false, got ${JSON.stringify(values[name])}`);
  return logFormat;
}

/** Flags that must go together, or not at all. */
function checkCombinations(flags: Flags): void {
  if (flags.webhookCertSecret && flags.webhookCertHosts.length === 0)
    throw new Error('--webhook-cert-secret needs --webhook-cert-hosts: the names the certificate is for');
  if (flags.webhookLoopback && (flags.webhookCertSecret || flags.webhookCertPath))
    throw new Error(
      '--webhook-loopback makes its own certificate: leave out --webhook-cert-secret and --webhook-cert-path',
    );
  if (flags.shards > 1 && !flags.leaderElect)
    throw new Error('--shards needs --leader-elect: each shard is held through a Lease');
  if (flags.renewDeadlineMs >= flags.leaseDurationMs)
    throw new Error('--leader-election-renew-deadline must be shorter than the lease duration');
  if (flags.watchStallTimeoutMs < 10_000)
    throw new Error(
      '--watch-stall-timeout must be at least 10s: a quiet watch hears from the API server about once a minute',
    );
  if (flags.retryPeriodMs >= flags.renewDeadlineMs)
    throw new Error('--leader-election-retry-period must be shorter than the renew deadline');
}

export function parseFlags(argv: string[], known: string[]): Flags {
  const { values } = parseArgs({ args: argv, strict: true, options: FLAG_OPTIONS });
  const controllers = selectedControllers(values.controllers, known);
  const logFormat = checkChoices(values);
  const flags: Flags = {
    controllers,
    namespaces: watchedNamespaces(values.namespace, values.namespaces),
    leaderElect: values['leader-elect'],
    shards: positiveInt('shards', values.shards),
    leaderElectionId: values['leader-election-id'],
    leaderElectionNamespace: values['leader-election-namespace'],
    leaseDurationMs: parseDuration(values['leader-election-lease-duration']),
    renewDeadlineMs: parseDuration(values['leader-election-renew-deadline']),
    retryPeriodMs: parseDuration(values['leader-election-retry-period']),
    warmStandby: values['warm-standby'] === 'true',
    metricsBindAddress: values['metrics-bind-address'],
    metricsSecure: values['metrics-secure'] === 'true',
    metricsCertPath: values['metrics-cert-path'],
    healthProbeBindAddress: values['health-probe-bind-address'],
    // In a cluster the Service targets the container's 9443; out of cluster a fixed port is one
    // that a second reconciler on the machine (a test beside `npm run operator`) cannot take.
    webhookBindAddress: values['webhook-bind-address'] ?? (values['webhook-loopback'] ? '127.0.0.1:0' : ':9443'),
    webhookCertPath: values['webhook-cert-path'],
    webhookCertSecret: values['webhook-cert-secret'],
    webhookCertHosts: values['webhook-cert-hosts']
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
    webhookConfiguration: values['webhook-configuration'],
    webhookLoopback: values['webhook-loopback'],
    maxConcurrentReconciles: positiveInt('max-concurrent-reconciles', values['max-concurrent-reconciles']),
    priorityQueue: values['priority-queue'] === 'true',
    kubeconfig: values.kubeconfig,
    logLevel: values['log-level'],
    logFormat,
    syncPeriodMs: parseDuration(values['sync-period']),
    watchStallTimeoutMs: parseDuration(values['watch-stall-timeout']),
    ...apiRateLimit(values['kube-api-qps'], values['kube-api-burst']),
    otlpEndpoint: values['otlp-endpoint'] === '' ? undefined : values['otlp-endpoint'],
    help: values.help,
  };
  checkCombinations(flags);
  return flags;
}
