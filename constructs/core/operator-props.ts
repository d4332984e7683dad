/** What an Operator construct is given: its props with their defaults, and the ports they come to. */
import type { Construct } from 'constructs';
import type { ControllerDeclaration } from './controller-declaration';
import type { MonitoringOptions } from './monitoring';
import type { CertManagerCertificate } from './webhooks';

/** Reconciles at once per controller, unless set: see `maxConcurrentReconciles`. */
export const DEFAULT_CONCURRENT_RECONCILES = 4;

/**
 * Node options of the reconciler container. V8's young generation grows to 16 MiB semi-spaces
 * (three of them) for allocation throughput; a controller allocates in small bursts (a watch
 * event, a reconcile) and 2 MiB keeps its resident memory down by tens of MiB at 1000
 * resources; 1 MiB saved 1 MiB more for about 0.9 CPU-s of collections more (bench/RESULTS.md).
 * Allowed in NODE_OPTIONS by Node.
 */
export const RECONCILER_NODE_OPTIONS = '--max-semi-space-size=2';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Compute resources of the reconciler container. */
export interface OperatorResources {
  /** @default '10m' */
  readonly cpuRequest?: string;
  /** @default '64Mi' */
  readonly memoryRequest?: string;
  /** @default '500m' */
  readonly cpuLimit?: string;
  /** @default '256Mi' */
  readonly memoryLimit?: string;
}

/** Settings shared by every operator construct. */
export interface OperatorOptions {
  /** Base name of the operator's objects (`<name>-operator`, `<name>-manager-role`, ...). @default the construct id */
  readonly name?: string;
  /** Namespace the reconciler runs in. @default '<name>-system' */
  readonly namespace?: string;
  /** Create that namespace, labelled to enforce the `restricted` Pod Security Standard. @default true */
  readonly createNamespace?: boolean;
  /** Reconciler image, without tag. @default 'cdk8s-operator-kit/reconciler' (built by npm run image) */
  readonly image?: string;
  /** Reconciler image tag. @default the kit's version */
  readonly imageTag?: string;
  /** @default 'IfNotPresent' */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Reconciler pods. More than one needs leader election. @default `shards`, else 1 */
  readonly replicas?: number;
  /**
   * Share the work out over this many reconciler pods: the namespaces are cut into `shards`
   * ranges of a hash of their name (the API server's sharded list and watch, KEP-5866, sends each
   * pod only its range where the `ShardedListAndWatch` gate is on; elsewhere each pod drops what
   * is not its own), and each pod reconciles the range whose Lease it holds, so a resource and
   * its children are always one pod's. `replicas` beyond `shards` stand by and take over the
   * range of a pod that stops renewing. Needs leader election and namespaced kinds, and cannot
   * serve admission webhooks (a hook reads the caches of every namespace).
   * @default 1 (no sharding)
   */
  readonly shards?: number;
  /** Elect one active reconciler through a Lease, so replicas never fight. @default true */
  readonly leaderElection?: boolean;
  /**
   * Watch only this namespace: RBAC becomes a Role there instead of a ClusterRole
   * (`watchNamespaces` with one).
   * @default - all namespaces
   */
  readonly watchNamespace?: string;
  /**
   * Watch only these namespaces: the rights on the kinds and their children become a Role and
   * RoleBinding in each (only what is cluster-scoped stays in a ClusterRole), and the reconciler
   * lists and watches each of them apart (`--namespaces`), so its token can create nothing
   * outside them. Not with `watchNamespace`.
   * @default - all namespaces
   */
  readonly watchNamespaces?: readonly string[];
  /** @default - requests 10m/64Mi, limits 500m/256Mi */
  readonly resources?: OperatorResources;
  /** @default 'info' */
  readonly logLevel?: LogLevel;
  /**
   * Reconciles that may run at once per controller (different objects only; one object is never
   * reconciled twice at once). controller-runtime defaults to 1; the kit's reconciles mostly wait
   * on the API server, and 4 converged 1000 resources in 0.63× the time of 1, for less CPU
   * (bench/RESULTS.md).
   * @default 4
   */
  readonly maxConcurrentReconciles?: number;
  /** Port of `/metrics`. @default 8080 */
  readonly metricsPort?: number;
  /**
   * Serve `/metrics` over HTTPS to callers allowed `get` on it (checked with TokenReview and
   * SubjectAccessReview), as kubebuilder does; bind the `<name>-metrics-reader` ClusterRole to
   * your Prometheus. `false` serves plain HTTP to anyone who reaches the port.
   * @default true
   */
  readonly metricsSecure?: boolean;
  /** Port of `/healthz` and `/readyz`. @default 8081 */
  readonly healthPort?: number;
  /**
   * Monitoring with the Prometheus Operator and Grafana: a ServiceMonitor scraping `/metrics`
   * (with the token the secure endpoint asks for, the metrics-reader ClusterRole bound to your
   * Prometheus's ServiceAccount), a PrometheusRule of alerts (reconcile errors, a queue that does
   * not drain or is slow, resources Degraded for long, no leader, failing watches, the operator
   * down) and a Grafana dashboard in a ConfigMap for its sidecar. `true` takes every default.
   * Off by default: the ServiceMonitor and PrometheusRule kinds exist only where the Prometheus
   * Operator is installed (docs/observability.md).
   * @default false
   */
  readonly monitoring?: boolean | MonitoringOptions;
  /**
   * Send a trace of each reconcile (a span per step and per API request) over OTLP/HTTP to this
   * base URL, e.g. `http://otel-collector.observability:4318` (`--otlp-endpoint`).
   * @default no traces
   */
  readonly otlpEndpoint?: string;
  /**
   * Serve the controllers' admission hooks (`validate`, `default`): a Service in front of the
   * reconciler on port 9443, Validating/MutatingWebhookConfigurations calling it (fail-closed
   * for create and update: while no replica answers, such requests are refused; deletes never
   * are), and a certificate the reconciler makes and renews itself, kept in an empty Secret it
   * alone may read, trusted through the configurations' `caBundle`. Off by default: the API
   * server must be able to reach the reconciler's pods through the Service, and every create and
   * update of the kinds then depends on the operator being up (run 2 replicas).
   *
   * A kind whose versions have schemas of their own (`conversions`) gets the same Service,
   * Secret and certificate for its `/convert` webhook whatever this says: its other versions
   * cannot be served without it (the storage version always can, operator up or not).
   * @default false
   */
  readonly admissionWebhooks?: boolean;
  /**
   * Have cert-manager (installed in the cluster) issue the webhooks' certificate instead of the
   * reconciler: a `Certificate` for the webhook Service (signed by a self-signed `Issuer` made
   * here unless `issuer` names one), its Secret mounted into the reconciler, and the
   * `cert-manager.io/inject-ca-from` annotation on the webhook configurations and converting
   * CRDs, whose `caBundle` cert-manager's cainjector then keeps. The reconciler gets no right to
   * Secrets or to patch those objects. Only for an operator with webhooks (`admissionWebhooks`,
   * or a kind with `conversions`).
   * @default the reconciler makes, renews and trusts its own certificate (nothing to install)
   */
  readonly certManager?: CertManagerCertificate;
  /**
   * `app.kubernetes.io/part-of` of the operator's objects: the larger application it belongs to.
   * @default 'cdk8s-operator-kit' for the kit's own operators, the operator's name for yours
   */
  readonly partOf?: string;
  /**
   * Where the cluster-scoped objects go: the Namespace, CRDs, ClusterRoles and their bindings.
   * Give a chart of their own to have them applied first — the chart holding the operator then
   * depends on it, so `cdk8s synth` writes it first, and `kubectl apply -f dist/` creates the
   * CRDs and the namespace before what needs them. Their `metadata.namespace` is never set, even
   * in a chart that has a namespace.
   * @default the chart the operator is in
   */
  readonly clusterScope?: Construct;
  /**
   * Where the CRDs go, apart from the other cluster-scoped objects: for a Helm chart, whose
   * `crds/` directory Helm installs before anything else and never templates (synthesize with
   * `--format helm`, then move this chart's file from `templates/` to `crds/`).
   * @default clusterScope
   */
  readonly crdScope?: Construct;
}

export interface OperatorProps extends OperatorOptions {
  /** The controllers this reconciler runs; their declarations decide the CRDs and RBAC. */
  readonly controllers: readonly ControllerDeclaration[];
}

/** The reconciler's metrics and health ports. */
export function ports(props: OperatorProps): { metricsPort: number; healthPort: number } {
  return { metricsPort: props.metricsPort ?? 8080, healthPort: props.healthPort ?? 8081 };
}
