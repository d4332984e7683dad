import { Chart, ChartProps } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { ControllerDeclaration, validateControllerDeclaration } from './controller';
import { CustomResourceDefinition } from './crd';
import { CustomResourceKind } from './kind';
import { PART_OF, selectorLabels, standardLabels } from './labels';
import { leaderElectionRules, metricsAuthRules, PolicyRule, rulesForControllers } from './rbac';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security';

/** The reconciler image `operator/Dockerfile` builds. */
export const DEFAULT_IMAGE = 'cdk8s-operator-kit/reconciler';
/** The tag of that image matching this version of the kit. */
export const DEFAULT_IMAGE_TAG = '0.1.0';

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
  /** Reconciler image, without tag. @default 'cdk8s-operator-kit/reconciler' (built by operator/Dockerfile) */
  readonly image?: string;
  /** Reconciler image tag. @default the kit's version */
  readonly imageTag?: string;
  /** @default 'IfNotPresent' */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Reconciler pods. More than one needs leader election. @default 1 */
  readonly replicas?: number;
  /** Elect one active reconciler through a Lease, so replicas never fight. @default true */
  readonly leaderElection?: boolean;
  /**
   * Watch only this namespace: RBAC becomes a Role there instead of a ClusterRole.
   * @default - all namespaces
   */
  readonly watchNamespace?: string;
  /** @default - requests 10m/64Mi, limits 500m/256Mi */
  readonly resources?: OperatorResources;
  /** @default 'info' */
  readonly logLevel?: LogLevel;
  /** Reconciles that may run at once per controller (different objects only). @default 1 */
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
}

export interface OperatorProps extends OperatorOptions {
  /** The controllers this reconciler runs; their declarations decide the CRDs and RBAC. */
  readonly controllers: readonly ControllerDeclaration[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

/**
 * A complete operator: CRDs, least-privilege RBAC, and the reconciler Deployment with its
 * metrics Service.
 *
 * The construct is itself the chart of the operator's namespaced objects (its namespace is set on
 * the chart). Cluster-scoped objects (the Namespace, CRDs, ClusterRole and its binding) go into a
 * sibling chart, `<id>-cluster`, so the chart namespace never stamps them; the namespaced chart
 * depends on it, so `dist/` lists the cluster chart first.
 */
export class Operator extends Chart {
  readonly operatorName: string;
  readonly operatorNamespace: string;
  /** The chart holding the cluster-scoped objects. */
  readonly clusterChart: Chart;
  readonly crds: CustomResourceDefinition[];
  readonly serviceAccount: k8s.KubeServiceAccount;
  readonly deployment: k8s.KubeDeployment;
  readonly metricsService: k8s.KubeService;
  /** The rules granted to the reconciler for its controllers (cluster-wide or in the watched namespace). */
  readonly rules: { namespaced: PolicyRule[]; clusterScoped: PolicyRule[] };

  constructor(scope: Construct, id: string, props: OperatorProps, chartProps: ChartProps = {}) {
    const name = props.name ?? id;
    const namespace = props.namespace ?? `${name}-system`;
    validateOperatorProps(name, namespace, props);
    super(scope, id, { ...chartProps, namespace });
    this.operatorName = name;
    this.operatorNamespace = namespace;
    this.clusterChart = new Chart(scope, `${id}-cluster`, { labels: chartProps.labels });
    this.addDependency(this.clusterChart);

    const labels = standardLabels({ name, instance: name, component: 'controller', managedBy: 'cdk8s' });
    const selector = selectorLabels({ name, instance: name, component: 'controller', managedBy: 'cdk8s' });
    const metadata = (suffix: string) => ({ name: `${name}-${suffix}`, labels });

    if (props.createNamespace ?? true) {
      new k8s.KubeNamespace(this.clusterChart, 'Namespace', {
        metadata: {
          name: namespace,
          labels: {
            ...labels,
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/enforce-version': 'latest',
          },
        },
      });
    }

    const kinds = uniqueKinds(props.controllers.map(c => c.for));
    this.crds = kinds.map(k => new CustomResourceDefinition(this.clusterChart, `Crd${k.kind}`, {
      kind: k,
      labels: { 'app.kubernetes.io/part-of': PART_OF, 'app.kubernetes.io/managed-by': 'cdk8s' },
    }));

    this.serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: metadata('operator'),
      // The reconciler talks to the API server, so it needs its token (cdk8s-plus turns it off).
      automountServiceAccountToken: true,
    });
    const subject = { kind: 'ServiceAccount', name: this.serviceAccount.name, namespace };

    // RBAC for the controllers: cluster-wide, or a Role in the one namespace they watch.
    this.rules = rulesForControllers(props.controllers);
    if (props.watchNamespace) {
      const role = new k8s.KubeRole(this, 'ManagerRole', {
        metadata: { ...metadata('manager-role'), namespace: props.watchNamespace },
        rules: this.rules.namespaced,
      });
      new k8s.KubeRoleBinding(this, 'ManagerRoleBinding', {
        metadata: { ...metadata('manager-rolebinding'), namespace: props.watchNamespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
        subjects: [subject],
      });
    }
    const metricsSecure = props.metricsSecure ?? true;
    const clusterRules = [
      ...(props.watchNamespace ? this.rules.clusterScoped : [...this.rules.namespaced, ...this.rules.clusterScoped]),
      // Checking who scrapes /metrics: review their token, then their right to the URL.
      ...(metricsSecure ? metricsAuthRules() : []),
    ];
    if (clusterRules.length > 0) {
      const clusterRole = new k8s.KubeClusterRole(this.clusterChart, 'ManagerClusterRole', {
        metadata: metadata('manager-role'),
        rules: clusterRules,
      });
      new k8s.KubeClusterRoleBinding(this.clusterChart, 'ManagerClusterRoleBinding', {
        metadata: metadata('manager-rolebinding'),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole.name },
        subjects: [subject],
      });
    }

    if (metricsSecure) {
      // What a Prometheus (or a person) needs to scrape the secure endpoint: bind it to them.
      new k8s.KubeClusterRole(this.clusterChart, 'MetricsReaderClusterRole', {
        metadata: metadata('metrics-reader'),
        rules: [{ nonResourceUrLs: ['/metrics'], verbs: ['get'] }],
      });
    }

    const leaderElection = props.leaderElection ?? true;
    const leaderElectionId = `${name}-operator-leader`;
    if (leaderElection) {
      const role = new k8s.KubeRole(this, 'LeaderElectionRole', {
        metadata: metadata('leader-election-role'),
        rules: leaderElectionRules(),
      });
      new k8s.KubeRoleBinding(this, 'LeaderElectionRoleBinding', {
        metadata: metadata('leader-election-rolebinding'),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
        subjects: [subject],
      });
    }

    const metricsPort = props.metricsPort ?? 8080;
    const healthPort = props.healthPort ?? 8081;
    const r = props.resources ?? {};
    const args = [
      `--controllers=${props.controllers.map(c => c.name).join(',')}`,
      `--metrics-bind-address=:${metricsPort}`,
      ...(metricsSecure ? [] : ['--metrics-secure=false']),
      `--health-probe-bind-address=:${healthPort}`,
      `--max-concurrent-reconciles=${props.maxConcurrentReconciles ?? 1}`,
      `--log-level=${props.logLevel ?? 'info'}`,
      ...(leaderElection ? ['--leader-elect', `--leader-election-id=${leaderElectionId}`, `--leader-election-namespace=${namespace}`] : []),
      ...(props.watchNamespace ? [`--namespace=${props.watchNamespace}`] : []),
    ];

    this.deployment = new k8s.KubeDeployment(this, 'Deployment', {
      metadata: metadata('operator'),
      spec: {
        replicas: props.replicas ?? 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels, annotations: { 'kubectl.kubernetes.io/default-container': 'manager' } },
          spec: {
            serviceAccountName: this.serviceAccount.name,
            automountServiceAccountToken: true,
            securityContext: restrictedPodSecurityContext(),
            // Graceful shutdown finishes in-flight reconciles and releases the lease.
            terminationGracePeriodSeconds: 30,
            containers: [{
              name: 'manager',
              image: `${props.image ?? DEFAULT_IMAGE}:${props.imageTag ?? DEFAULT_IMAGE_TAG}`,
              imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
              args,
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              ],
              ports: [
                { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
                { name: 'health', containerPort: healthPort, protocol: 'TCP' },
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
              resources: {
                requests: { cpu: k8s.Quantity.fromString(r.cpuRequest ?? '10m'), memory: k8s.Quantity.fromString(r.memoryRequest ?? '64Mi') },
                limits: { cpu: k8s.Quantity.fromString(r.cpuLimit ?? '500m'), memory: k8s.Quantity.fromString(r.memoryLimit ?? '256Mi') },
              },
              securityContext: restrictedContainerSecurityContext(),
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            }],
            // The root filesystem is read-only; Node and its libraries may still want a scratch dir.
            volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
          },
        },
      },
    });

    this.metricsService = new k8s.KubeService(this, 'MetricsService', {
      metadata: metadata('metrics'),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: metricsSecure ? 'https' : 'http', port: metricsPort, targetPort: k8s.IntOrString.fromString('metrics'), protocol: 'TCP' }],
      },
    });
  }
}

function uniqueKinds(kinds: readonly CustomResourceKind[]): CustomResourceKind[] {
  const seen = new Map<string, CustomResourceKind>();
  for (const k of kinds) seen.set(k.crdName, k);
  return [...seen.values()];
}

function validateOperatorProps(name: string, namespace: string, props: OperatorProps): void {
  const fail = (msg: string): never => { throw new Error(`Operator ${JSON.stringify(name)}: ${msg}`); };
  if (!DNS_LABEL.test(name) || name.length > 40) {
    fail('name must be a lower-case DNS label of at most 40 characters (suffixes such as "-leader-election-rolebinding" are added), e.g. "memcached"');
  }
  for (const [field, value] of [['namespace', namespace], ['watchNamespace', props.watchNamespace]] as const) {
    if (value !== undefined && (!DNS_LABEL.test(value) || value.length > 63)) {
      fail(`${field} ${JSON.stringify(value)} must be a lower-case DNS label (letters, digits, dashes; at most 63 characters)`);
    }
  }
  if (props.controllers.length === 0) fail('give at least one controller in "controllers"');
  const names = props.controllers.map(c => c.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) fail(`controller ${JSON.stringify(dup)} is listed twice; list each controller once`);
  props.controllers.forEach(validateControllerDeclaration);
  const replicas = props.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) fail(`replicas must be a whole number of at least 1, got ${replicas}`);
  if (replicas > 1 && props.leaderElection === false) {
    fail(`${replicas} replicas without leader election would reconcile concurrently; set leaderElection: true or replicas: 1`);
  }
  const mcr = props.maxConcurrentReconciles ?? 1;
  if (!Number.isInteger(mcr) || mcr < 1 || mcr > 100) fail(`maxConcurrentReconciles must be a whole number from 1 to 100, got ${mcr}`);
  const metricsPort = props.metricsPort ?? 8080;
  const healthPort = props.healthPort ?? 8081;
  for (const [field, port] of [['metricsPort', metricsPort], ['healthPort', healthPort]] as const) {
    if (!Number.isInteger(port) || port < 1024 || port > 65535) {
      fail(`${field} must be a whole number from 1024 to 65535 (the reconciler runs as non-root and cannot bind lower ports), got ${port}`);
    }
  }
  if (metricsPort === healthPort) fail(`metricsPort and healthPort are both ${metricsPort}; give them different ports`);
  if (props.image !== undefined && !/^[a-z0-9]+([._/:-][a-z0-9]+)*$/.test(props.image)) {
    fail(`image ${JSON.stringify(props.image)} is not an image reference; give it without tag, e.g. "registry.example.com/team/reconciler"`);
  }
  if (props.imageTag !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(props.imageTag)) {
    fail(`imageTag ${JSON.stringify(props.imageTag)} is not a valid tag (letters, digits, "_", ".", "-"; at most 128)`);
  }
  if (props.logLevel !== undefined && !['debug', 'info', 'warn', 'error'].includes(props.logLevel)) {
    fail(`logLevel must be one of debug, info, warn, error; got ${JSON.stringify(props.logLevel)}`);
  }
  for (const [field, value] of Object.entries(props.resources ?? {})) {
    if (value !== undefined && !QUANTITY.test(String(value))) {
      fail(`resources.${field} ${JSON.stringify(value)} is not a Kubernetes quantity; use forms like "100m", "0.5", "128Mi", "1Gi"`);
    }
  }
}
