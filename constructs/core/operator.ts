import { ApiObject, Chart, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { validateControllerDeclaration } from '../contract';
import type { ControllerDeclaration } from './controller-declaration';
import { CONVERSION_PATH, WEBHOOK_PORT_NAME } from '../contract/webhook-paths';
import { reconcilerFlag } from '../contract/reconciler-flags';
import { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG } from './kit-image';
import { CustomResourceDefinition } from './crd';
import { type CustomResourceKind } from './kind';
import { PART_OF, selectorLabels, standardLabels } from './labels';
import { leaderElectionRules, metricsAuthRules, type PolicyRule, rulesForControllers } from './rbac';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security';
import { claimUnique } from './unique';
import { addMonitoring, type MonitoringOptions, monitoringOptions } from './monitoring';
import { DNS_SUBDOMAIN_MAX_LENGTH, DNS_SUBDOMAIN_PATTERN } from './formats';
import {
  addWebhookObjects,
  type CertManagerCertificate,
  MOUNTED_CERTIFICATE_DIR,
  WEBHOOK_PORT,
  type WebhookPlan,
  webhookPlan,
} from './webhooks';

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

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

/**
 * A complete operator: CRDs, least-privilege RBAC, and the reconciler Deployment with its
 * metrics Service — a construct that writes into the chart it is placed in, so that chart's
 * labels apply. Its namespaced objects carry the operator's namespace (not the chart's);
 * cluster-scoped ones go to `clusterScope` (by default the same chart).
 *
 * @example
 * const app = new App();
 * const cluster = new Chart(app, 'cluster');                  // CRDs, ClusterRoles: applied first
 * const chart = new Chart(app, 'operators', { labels: { team: 'a' } });
 * new MemcachedOperator(chart, 'memcached', { clusterScope: cluster });
 */
export class Operator extends Construct {
  /** The props it was made with (a Helm chart of it makes it again with other settings). */
  readonly props: OperatorProps;
  readonly operatorName: string;
  readonly operatorNamespace: string;
  /** Where the cluster-scoped objects are. */
  readonly clusterScope: Construct;
  readonly crds: CustomResourceDefinition[];
  readonly serviceAccount: k8s.KubeServiceAccount;
  readonly deployment: k8s.KubeDeployment;
  readonly metricsService: k8s.KubeService;
  /** The rules granted to the reconciler for its controllers (cluster-wide or in the watched namespace). */
  readonly rules: { namespaced: PolicyRule[]; clusterScoped: PolicyRule[] };

  constructor(scope: Construct, id: string, props: OperatorProps) {
    const placed = placement(scope, id, props);
    super(placed.scope, id);
    props = { ...props, clusterScope: placed.clusterScope };
    const name = props.name ?? id;
    const namespace = props.namespace ?? `${name}-system`;
    validateOperatorProps(name, namespace, props);
    claimUnique(
      this,
      `operator:${name}`,
      (first) =>
        `Operator ${JSON.stringify(name)}: another operator (${first}) already has this name, and their objects would collide; give one of them another name`,
    );
    this.props = props;
    this.operatorName = name;
    this.operatorNamespace = namespace;
    this.clusterScope = this.holder(props.clusterScope, props.clusterScope ? `${name}-cluster` : 'Cluster');
    const parts = operatorParts(props, name, namespace, this.clusterScope);

    if (props.createNamespace ?? true) addNamespace(parts);
    const crdHolder = props.crdScope ? this.holder(props.crdScope, `${name}-crds`) : this.clusterScope;
    const webhooks = planWebhooks(props, name, namespace);
    this.crds = addCrds(crdHolder, parts, webhooks);
    this.serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: parts.metadata('operator'),
      // The reconciler talks to the API server, so it needs its token (cdk8s-plus turns it off).
      automountServiceAccountToken: true,
    });
    const subject = { kind: 'ServiceAccount', name: this.serviceAccount.name, namespace };
    this.rules = rulesForControllers(props.controllers);
    this.addManagerRbac(parts, subject);
    if (parts.leaderElection) this.addLeaderElectionRbac(parts, subject);
    this.deployment = this.addDeployment(parts, webhooks);
    this.metricsService = this.addMetricsService(parts);
    this.addMonitoring(parts);
    if (webhooks) {
      addWebhookObjects(this, this.clusterScope, {
        plan: webhooks,
        namespace,
        labels: parts.labels,
        selector: parts.selector,
        watchNamespaces: parts.watched,
        serviceAccount: this.serviceAccount.name,
      });
    }
    for (const holder of new Set([this.clusterScope, crdHolder])) withoutNamespaces(holder);
  }

  /**
   * Where objects of another scope go: a construct under `scope` (or under this operator), whose
   * chart this operator's chart depends on, so that it is applied first.
   */
  private holder(scope: Construct | undefined, id: string): Construct {
    const holder = new Construct(scope ?? this, id);
    const ownChart = Chart.of(this);
    if (Chart.of(holder) !== ownChart) ownChart.addDependency(Chart.of(holder));
    return holder;
  }

  /** The controllers' rights: cluster-wide, or a Role in the one namespace they watch; and who may scrape. */
  private addManagerRbac(parts: OperatorParts, subject: RbacSubject): void {
    const { clusterHolder, metadata, clusterMetadata, metricsSecure, watched } = parts;
    for (const ns of watched ?? []) {
      // One namespace keeps the ids it always had; each of several gets its own.
      const id = watched?.length === 1 ? '' : `-${ns}`;
      const role = new k8s.KubeRole(this, `ManagerRole${id}`, {
        metadata: { ...metadata('manager-role'), namespace: ns },
        rules: this.rules.namespaced,
      });
      new k8s.KubeRoleBinding(this, `ManagerRoleBinding${id}`, {
        metadata: { ...metadata('manager-rolebinding'), namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
        subjects: [subject],
      });
    }
    const clusterRules = [
      ...(watched ? this.rules.clusterScoped : [...this.rules.namespaced, ...this.rules.clusterScoped]),
      // Checking who scrapes /metrics: review their token, then their right to the URL.
      ...(metricsSecure ? metricsAuthRules() : []),
    ];
    if (clusterRules.length > 0) {
      const clusterRole = new k8s.KubeClusterRole(clusterHolder, 'ManagerClusterRole', {
        metadata: clusterMetadata('manager-role'),
        rules: clusterRules,
      });
      new k8s.KubeClusterRoleBinding(clusterHolder, 'ManagerClusterRoleBinding', {
        metadata: clusterMetadata('manager-rolebinding'),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole.name },
        subjects: [subject],
      });
    }
    if (metricsSecure) {
      // What a Prometheus (or a person) needs to scrape the secure endpoint: bind it to them.
      new k8s.KubeClusterRole(clusterHolder, 'MetricsReaderClusterRole', {
        metadata: clusterMetadata('metrics-reader'),
        rules: [{ nonResourceUrLs: ['/metrics'], verbs: ['get'] }],
      });
    }
  }

  private addLeaderElectionRbac(parts: OperatorParts, subject: RbacSubject): void {
    const role = new k8s.KubeRole(this, 'LeaderElectionRole', {
      metadata: parts.metadata('leader-election-role'),
      rules: leaderElectionRules({ sharded: (parts.props.shards ?? 1) > 1 }),
    });
    new k8s.KubeRoleBinding(this, 'LeaderElectionRoleBinding', {
      metadata: parts.metadata('leader-election-rolebinding'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
      subjects: [subject],
    });
  }

  /** The reconciler: restricted, probed, with the flags its props say. */
  private addDeployment(parts: OperatorParts, webhooks: WebhookPlan | undefined): k8s.KubeDeployment {
    const { props, labels, selector } = parts;
    const { metricsPort, healthPort } = ports(props);
    return new k8s.KubeDeployment(this, 'Deployment', {
      metadata: parts.metadata('operator'),
      spec: {
        replicas: props.replicas ?? props.shards ?? 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels, annotations: { 'kubectl.kubernetes.io/default-container': 'manager' } },
          spec: {
            serviceAccountName: this.serviceAccount.name,
            automountServiceAccountToken: true,
            securityContext: restrictedPodSecurityContext(),
            // Graceful shutdown finishes in-flight reconciles and releases the lease.
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'manager',
                image: imageReference(props),
                imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
                args: [...reconcilerArgs(parts), ...(webhooks?.args ?? [])],
                env: [
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                  { name: 'NODE_OPTIONS', value: RECONCILER_NODE_OPTIONS },
                ],
                ports: [
                  { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
                  { name: 'health', containerPort: healthPort, protocol: 'TCP' },
                  ...(webhooks ? [{ name: WEBHOOK_PORT_NAME, containerPort: WEBHOOK_PORT, protocol: 'TCP' }] : []),
                ],
                livenessProbe: {
                  httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('health') },
                  initialDelaySeconds: 15,
                  periodSeconds: 20,
                },
                readinessProbe: {
                  httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('health') },
                  initialDelaySeconds: 5,
                  periodSeconds: 10,
                },
                resources: reconcilerResources(props.resources ?? {}),
                securityContext: restrictedContainerSecurityContext(),
                volumeMounts: [
                  { name: 'tmp', mountPath: '/tmp' },
                  ...(webhooks?.certManager
                    ? [{ name: 'webhook-cert', mountPath: MOUNTED_CERTIFICATE_DIR, readOnly: true }]
                    : []),
                ],
              },
            ],
            volumes: [
              // The root filesystem is read-only; Node and its libraries may still want a scratch dir.
              { name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } },
              // cert-manager's Secret, updated in place when it renews the certificate.
              ...(webhooks?.certManager ? [{ name: 'webhook-cert', secret: { secretName: webhooks.secret } }] : []),
            ],
          },
        },
      },
    });
  }

  /** The ServiceMonitor, alerts and dashboard, when `monitoring` asks for them. */
  private addMonitoring(parts: OperatorParts): void {
    const { props, name, namespace } = parts;
    const options = monitoringOptions(props.monitoring);
    if (!options) return;
    const target = {
      name,
      namespace,
      labels: parts.labels,
      selector: parts.selector,
      service: { name: this.metricsService.name, port: metricsPortName(parts), secure: parts.metricsSecure },
      leaderLease: parts.leaderElection ? leaderLeaseName(name) : undefined,
      metricsReaderRole: parts.metricsSecure ? parts.clusterMetadata('metrics-reader').name : undefined,
    };
    addMonitoring(this, this.clusterScope, target, options);
  }

  private addMetricsService(parts: OperatorParts): k8s.KubeService {
    return new k8s.KubeService(this, 'MetricsService', {
      metadata: parts.metadata('metrics'),
      spec: {
        type: 'ClusterIP',
        selector: parts.selector,
        ports: [
          {
            name: metricsPortName(parts),
            port: ports(parts.props).metricsPort,
            targetPort: k8s.IntOrString.fromString('metrics'),
            protocol: 'TCP',
          },
        ],
      },
    });
  }
}

/** What the parts of one Operator share: its names, labels and where its cluster-scoped objects go. */
interface OperatorParts {
  readonly props: OperatorProps;
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /** The `app.kubernetes.io/part-of` label of its objects and CRDs. */
  readonly partOf: string;
  readonly selector: Record<string, string>;
  readonly clusterHolder: Construct;
  readonly metricsSecure: boolean;
  readonly leaderElection: boolean;
  /** The namespaces watched (`watchNamespace` or `watchNamespaces`); none: every namespace. */
  readonly watched?: readonly string[];
  readonly metadata: (suffix: string) => { name: string; namespace: string; labels: Record<string, string> };
  readonly clusterMetadata: (suffix: string) => { name: string; labels: Record<string, string> };
}

interface RbacSubject {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}

/** The operator's namespace, enforcing the restricted Pod Security level. */
function addNamespace(parts: OperatorParts): void {
  new k8s.KubeNamespace(parts.clusterHolder, 'Namespace', {
    metadata: {
      name: parts.namespace,
      labels: {
        ...parts.labels,
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'latest',
      },
    },
  });
}

/** The metrics Service's port: `https` when only authorized callers are served, else `http`. */
function metricsPortName(parts: OperatorParts): string {
  return parts.metricsSecure ? 'https' : 'http';
}

/** `--namespace` for one watched namespace (as before there were several), `--namespaces` for more. */
export function watchArgs(watched: readonly string[] | undefined): string[] {
  if (!watched) return [];
  return watched.length === 1
    ? [reconcilerFlag('namespace', watched[0])]
    : [reconcilerFlag('namespaces', watched.join(','))];
}

/** The Lease the operator's replicas elect their leader with. */
function leaderLeaseName(name: string): string {
  return `${name}-operator-leader`;
}

function ports(props: OperatorProps): { metricsPort: number; healthPort: number } {
  return { metricsPort: props.metricsPort ?? 8080, healthPort: props.healthPort ?? 8081 };
}

/** The reconciler's command line, as controller-runtime's flags. */
function reconcilerArgs(parts: OperatorParts): string[] {
  const { props, name, namespace } = parts;
  const { metricsPort, healthPort } = ports(props);
  return [
    reconcilerFlag('controllers', props.controllers.map((c) => c.name).join(',')),
    reconcilerFlag('metrics-bind-address', `:${metricsPort}`),
    ...(parts.metricsSecure ? [] : [reconcilerFlag('metrics-secure', 'false')]),
    reconcilerFlag('health-probe-bind-address', `:${healthPort}`),
    reconcilerFlag('max-concurrent-reconciles', props.maxConcurrentReconciles ?? DEFAULT_CONCURRENT_RECONCILES),
    reconcilerFlag('log-level', props.logLevel ?? 'info'),
    ...(parts.leaderElection
      ? [
          reconcilerFlag('leader-elect'),
          reconcilerFlag('leader-election-id', leaderLeaseName(name)),
          reconcilerFlag('leader-election-namespace', namespace),
        ]
      : []),
    ...watchArgs(parts.watched),
    ...((props.shards ?? 1) > 1 ? [reconcilerFlag('shards', props.shards ?? 1)] : []),
    ...(props.otlpEndpoint ? [reconcilerFlag('otlp-endpoint', props.otlpEndpoint)] : []),
  ];
}

function reconcilerResources(r: OperatorResources) {
  return {
    requests: {
      cpu: k8s.Quantity.fromString(r.cpuRequest ?? '10m'),
      memory: k8s.Quantity.fromString(r.memoryRequest ?? '64Mi'),
    },
    limits: {
      cpu: k8s.Quantity.fromString(r.cpuLimit ?? '500m'),
      memory: k8s.Quantity.fromString(r.memoryLimit ?? '256Mi'),
    },
  };
}

function uniqueKinds(kinds: readonly CustomResourceKind[]): CustomResourceKind[] {
  const seen = new Map<string, CustomResourceKind>();
  for (const k of kinds) seen.set(k.crdName, k);
  return [...seen.values()];
}

/** What every part of an operator is made with: its names, labels and settings. */
function operatorParts(props: OperatorProps, name: string, namespace: string, clusterHolder: Construct): OperatorParts {
  const partOf = props.partOf ?? (runsInKitImage(props.controllers) ? PART_OF : name);
  const labels = standardLabels({ name, instance: name, component: 'controller', managedBy: 'cdk8s', partOf });
  return {
    props,
    name,
    namespace,
    labels,
    partOf,
    selector: selectorLabels({ name, instance: name, component: 'controller', managedBy: 'cdk8s' }),
    clusterHolder,
    metricsSecure: props.metricsSecure ?? true,
    leaderElection: props.leaderElection ?? true,
    watched: props.watchNamespaces ?? (props.watchNamespace === undefined ? undefined : [props.watchNamespace]),
    metadata: (suffix) => ({ name: `${name}-${suffix}`, namespace, labels }),
    clusterMetadata: (suffix) => ({ name: `${name}-${suffix}`, labels }),
  };
}

/** The webhooks the operator serves, if any; cert-manager asked for without any is a mistake. */
function planWebhooks(props: OperatorProps, name: string, namespace: string): WebhookPlan | undefined {
  const webhooks = webhookPlan(props.controllers, name, namespace, {
    admission: props.admissionWebhooks ?? false,
    certManager: props.certManager,
  });
  if (props.certManager && !webhooks)
    throw new Error(
      `Operator ${JSON.stringify(name)}: certManager is set but the operator serves no webhook; set admissionWebhooks (with validate or default hooks) or give a kind conversions, or leave certManager out`,
    );
  return webhooks;
}

/** A CRD per kind, converting through the operator's webhook where a kind has versions of their own. */
function addCrds(
  holder: Construct,
  parts: OperatorParts,
  webhooks: WebhookPlan | undefined,
): CustomResourceDefinition[] {
  const { namespace, partOf } = parts;
  return uniqueKinds(parts.props.controllers.map((c) => c.for)).map((k) => {
    const converting = webhooks && k.needsConversion ? webhooks : undefined;
    return new CustomResourceDefinition(holder, `Crd${k.kind}`, {
      kind: k,
      labels: { 'app.kubernetes.io/part-of': partOf, 'app.kubernetes.io/managed-by': 'cdk8s' },
      conversionWebhook: converting
        ? { service: { name: converting.service, namespace, path: CONVERSION_PATH, port: 443 } }
        : undefined,
      annotations: converting?.trustAnnotations,
    });
  });
}

/** A chart's namespace would be stamped on every object in it, cluster-scoped ones too: not on these. */
function withoutNamespaces(holder: Construct): void {
  if (!Chart.of(holder).namespace) return;
  for (const o of holder.node.findAll())
    if (o instanceof ApiObject) o.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
}

type Fail = (msg: string) => never;

/** Throws, with what to change, for props that would synthesize a broken operator. */
function validateOperatorProps(name: string, namespace: string, props: OperatorProps): void {
  const fail: Fail = (msg) => {
    throw new Error(`Operator ${JSON.stringify(name)}: ${msg}`);
  };
  validateImage(name, props, fail);
  validateNames(name, namespace, props, fail);
  validateControllers(props, fail);
  validateReconcilerSettings(props, fail);
}

/** Whether every controller says the kit's image runs it (the kit's own controllers do). */
function runsInKitImage(controllers: readonly ControllerDeclaration[]): boolean {
  return controllers.every((c) => c.image === DEFAULT_IMAGE);
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

const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DOMAIN =
  '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?';
/** `[registry[:port]/]path[:tag][@digest]`, as the OCI distribution reference grammar has it. */
const IMAGE_REFERENCE = new RegExp(
  `^(?:(${DOMAIN})/)?(${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128}))?$`,
);

/** A parsed image reference. */
export interface ImageReference {
  readonly registry?: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

/** Parses an image reference; throws with the reason when it is not one. */
export function parseImageReference(image: string): ImageReference {
  const m = IMAGE_REFERENCE.exec(image);
  // A first component without a dot, colon or "localhost" is a path, not a registry (docker's rule).
  if (!m) {
    throw new Error(
      `${JSON.stringify(image)} is not an image reference; use [registry/]repository[:tag][@sha256:digest] with a lower-case repository, e.g. "ghcr.io/acme/operator:1.2.0"`,
    );
  }
  const [, registry, path = '', tag, digest] = m;
  if (registry && !/[.:]/.test(registry) && registry !== 'localhost') {
    const repository = `${registry}/${path}`;
    if (/[A-Z]/.test(repository)) throw new Error(`${JSON.stringify(image)}: the repository must be lower-case`);
    return { repository, tag, digest };
  }
  return { registry, repository: path, tag, digest };
}

/** The reconciler image of an operator: `image` (which may carry a tag or digest) and `imageTag`. */
function imageReference(props: OperatorProps): string {
  const image = props.image ?? DEFAULT_IMAGE;
  const ref = parseImageReference(image);
  const where = `Operator ${JSON.stringify(props.name ?? '')}`.replace(' ""', '');
  if ((ref.tag || ref.digest) && props.imageTag) {
    throw new Error(
      `${where}: image ${JSON.stringify(image)} already names a ${ref.digest ? 'digest' : 'tag'}; drop imageTag (${JSON.stringify(props.imageTag)}) or the one in image`,
    );
  }
  if (ref.tag || ref.digest) return image;
  const tag = props.imageTag ?? DEFAULT_IMAGE_TAG;
  if (!/^[\w][\w.-]{0,127}$/.test(tag))
    throw new Error(
      `${where}: imageTag ${JSON.stringify(tag)} is not a tag; use letters, digits, ".", "_" and "-", e.g. "1.2.0"`,
    );
  return `${image}:${tag}`;
}

/**
 * An operator placed in a chart writes into it. Placed directly in an App (as a one-line app
 * does), it gets a chart of its own, `<id>`, and one for its cluster-scoped objects,
 * `<id>-cluster`, applied first.
 */
function placement(scope: Construct, id: string, props: OperatorProps): { scope: Construct; clusterScope?: Construct } {
  if (scope.node.scopes.some((s) => Chart.isChart(s))) return { scope, clusterScope: props.clusterScope };
  const clusterScope = props.clusterScope ?? new Chart(scope, `${id}-cluster`);
  return { scope: new Chart(scope, id), clusterScope };
}
