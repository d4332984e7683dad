import { ApiObject, Chart, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import type { ControllerDeclaration } from './controller-declaration';
import { CONVERSION_PATH, WEBHOOK_PORT_NAME } from '../contract/webhook-paths';
import { reconcilerFlag } from '../contract/reconciler-flags';
import { DEFAULT_IMAGE } from './kit-image';
import { imageReference } from './image-reference';
import {
  DEFAULT_CONCURRENT_RECONCILES,
  type OperatorProps,
  type OperatorResources,
  ports,
  RECONCILER_NODE_OPTIONS,
} from './operator-props';
import { validateOperatorProps } from './operator-validation';
import { CustomResourceDefinition } from './crd';
import { type CustomResourceKind } from './kind';
import { PART_OF, selectorLabels, standardLabels } from './labels';
import { leaderElectionRules, metricsAuthRules, type PolicyRule, rulesForControllers } from './rbac';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security';
import { claimUnique } from './unique';
import { addMonitoring, monitoringOptions } from './monitoring';
import { addWebhookObjects, MOUNTED_CERTIFICATE_DIR, WEBHOOK_PORT, type WebhookPlan, webhookPlan } from './webhooks';

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

/** Whether every controller says the kit's image runs it (the kit's own controllers do). */
function runsInKitImage(controllers: readonly ControllerDeclaration[]): boolean {
  return controllers.every((c) => c.image === DEFAULT_IMAGE);
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
