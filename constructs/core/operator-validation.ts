/**
 * The checks an Operator's props pass before anything is synthesized: each failure says what to
 * change, so a broken operator never reaches a cluster.
 */
import { validateControllerDeclaration } from '../contract';
import { DEFAULT_IMAGE } from './kit-image';
import { imageReference } from './image-reference';
import { monitoringOptions } from './monitoring';
import { DNS_SUBDOMAIN_MAX_LENGTH, DNS_SUBDOMAIN_PATTERN } from './formats';
import { DEFAULT_CONCURRENT_RECONCILES, type OperatorProps, ports } from './operator-props';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

type Fail = (msg: string) => never;

/** Throws, with what to change, for props that would synthesize a broken operator. */
export function validateOperatorProps(name: string, namespace: string, props: OperatorProps): void {
  const fail: Fail = (msg) => {
    throw new Error(`Operator ${JSON.stringify(name)}: ${msg}`);
  };
  validateImage(name, props, fail);
  validateNames(name, namespace, props, fail);
  validateControllers(props, fail);
  validateReconcilerSettings(props, fail);
}
/** The kit's image runs only the controllers built into it; any image must be a valid reference. */
function validateImage(name: string, props: OperatorProps, fail: Fail): void {
  if (props.image === undefined) {
    const foreign = props.controllers.filter((c) => c.image !== DEFAULT_IMAGE).map((c) => c.name);
    if (foreign.length) {
      fail(
        `the kit's image runs only its own controllers (those declared with image ${JSON.stringify(DEFAULT_IMAGE)}), not ${foreign.join(', ')}; build an image whose entry point calls runOperator({ controllers: [...] }) with them (npx cdk8s-operator-kit image --entry <file> builds it) and set image`,
      );
    }
  }
  try {
    imageReference({ ...props, name });
  } catch (err) {
    fail((err instanceof Error ? err.message : String(err)).replace(/^Operator "[^"]*": /, ''));
  }
}

function validateNames(name: string, namespace: string, props: OperatorProps, fail: Fail): void {
  if (!DNS_LABEL.test(name) || name.length > 40) {
    fail(
      'name must be a lower-case DNS label of at most 40 characters (suffixes such as "-leader-election-rolebinding" are added), e.g. "memcached"',
    );
  }
  if (props.watchNamespace !== undefined && props.watchNamespaces !== undefined)
    fail('give watchNamespace or watchNamespaces, not both');
  if (props.watchNamespaces?.length === 0)
    fail('watchNamespaces is empty; name at least one namespace, or leave it out to watch every namespace');
  const repeated = props.watchNamespaces?.find((n, i) => props.watchNamespaces?.indexOf(n) !== i);
  if (repeated !== undefined) fail(`watchNamespaces lists ${JSON.stringify(repeated)} twice; list each namespace once`);
  for (const [field, value] of [
    ['namespace', namespace],
    ['watchNamespace', props.watchNamespace],
    ...(props.watchNamespaces ?? []).map((n) => ['watchNamespaces', n] as const),
  ] as const) {
    if (value !== undefined && (!DNS_LABEL.test(value) || value.length > 63)) {
      fail(
        `${field} ${JSON.stringify(value)} must be a lower-case DNS label (letters, digits, dashes; at most 63 characters)`,
      );
    }
  }
}

function validateControllers(props: OperatorProps, fail: Fail): void {
  if (props.controllers.length === 0) fail('give at least one controller in "controllers"');
  const names = props.controllers.map((c) => c.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) fail(`controller ${JSON.stringify(dup)} is listed twice; list each controller once`);
  props.controllers.forEach(validateControllerDeclaration);
}

/** Replicas, concurrency, ports, log level and resources of the reconciler Deployment. */
function validateReconcilerSettings(props: OperatorProps, fail: Fail): void {
  validateReplicas(props, fail);
  const mcr = props.maxConcurrentReconciles ?? DEFAULT_CONCURRENT_RECONCILES;
  if (!Number.isInteger(mcr) || mcr < 1 || mcr > 100)
    fail(`maxConcurrentReconciles must be a whole number from 1 to 100, got ${mcr}`);
  validatePorts(props, fail);
  validateObservability(props, fail);
  if (props.logLevel !== undefined && !['debug', 'info', 'warn', 'error'].includes(props.logLevel)) {
    fail(`logLevel must be one of debug, info, warn, error; got ${JSON.stringify(props.logLevel)}`);
  }
  for (const [field, value] of Object.entries(props.resources ?? {})) {
    if (value !== undefined && !QUANTITY.test(String(value))) {
      fail(
        `resources.${field} ${JSON.stringify(value)} is not a Kubernetes quantity; use forms like "100m", "0.5", "128Mi", "1Gi"`,
      );
    }
  }
}

function validateReplicas(props: OperatorProps, fail: Fail): void {
  const replicas = props.replicas ?? props.shards ?? 1;
  validateShards(props, replicas, fail);
  if (!Number.isInteger(replicas) || replicas < 1)
    fail(`replicas must be a whole number of at least 1, got ${replicas}`);
  if (replicas > 1 && props.leaderElection === false) {
    fail(
      `${replicas} replicas without leader election would reconcile concurrently; set leaderElection: true or replicas: 1`,
    );
  }
}

function validateShards(props: OperatorProps, replicas: number, fail: Fail): void {
  const shards = props.shards ?? 1;
  if (!Number.isInteger(shards) || shards < 1) fail(`shards must be a whole number of at least 1, got ${shards}`);
  if (shards === 1) return;
  if (replicas < shards)
    fail(`replicas (${replicas}) is fewer than shards (${shards}): a range with no pod would never be reconciled`);
  if (props.leaderElection === false) fail('shards need leader election: each shard is held through a Lease');
  if (props.admissionWebhooks)
    fail(
      'shards and admissionWebhooks do not go together: an admission hook reads the caches of every namespace, and a shard caches its own',
    );
  const clusterScoped = props.controllers.filter((c) => !c.for.namespaced).map((c) => c.for.kind);
  if (clusterScoped.length)
    fail(`shards cut namespaces; ${clusterScoped.join(', ')} is cluster-scoped and cannot be shared out`);
}

function validatePorts(props: OperatorProps, fail: Fail): void {
  const { metricsPort, healthPort } = ports(props);
  for (const [field, port] of [
    ['metricsPort', metricsPort],
    ['healthPort', healthPort],
  ] as const) {
    if (!Number.isInteger(port) || port < 1024 || port > 65535) {
      fail(
        `${field} must be a whole number from 1024 to 65535 (the reconciler runs as non-root and cannot bind lower ports), got ${port}`,
      );
    }
  }
  if (metricsPort === healthPort) fail(`metricsPort and healthPort are both ${metricsPort}; give them different ports`);
}

const DNS_SUBDOMAIN = new RegExp(DNS_SUBDOMAIN_PATTERN);

/** A Prometheus duration, as the ServiceMonitor and PrometheusRule schemas accept it. */
const PROMETHEUS_DURATION =
  /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/;

function validateObservability(props: OperatorProps, fail: Fail): void {
  const monitoring = monitoringOptions(props.monitoring) ?? {};
  for (const field of ['interval', 'degradedFor'] as const) {
    const value = monitoring[field];
    if (value !== undefined && (value === '' || !PROMETHEUS_DURATION.test(value)))
      fail(
        `monitoring.${field} ${JSON.stringify(value)} is not a Prometheus duration; use forms like "30s", "15m", "1h30m"`,
      );
  }
  const sa = monitoring.prometheusServiceAccount;
  if (
    sa &&
    (!DNS_LABEL.test(sa.namespace) || !DNS_SUBDOMAIN.test(sa.name) || sa.name.length > DNS_SUBDOMAIN_MAX_LENGTH)
  )
    fail(
      `monitoring.prometheusServiceAccount ${JSON.stringify(sa)} must name a ServiceAccount (a lower-case DNS name) and its namespace`,
    );
  if (props.otlpEndpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(props.otlpEndpoint))
    fail(
      `otlpEndpoint ${JSON.stringify(props.otlpEndpoint)} must be an http:// or https:// base URL, e.g. "http://otel-collector.observability:4318"`,
    );
}
