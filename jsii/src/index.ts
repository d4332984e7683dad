/**
 * The kit's ready-made operators for every cdk8s language (Python, Go, Java, .NET), compiled with
 * jsii. Each class wraps the TypeScript construct of the same name — one implementation — made in
 * the scope and with the id given, so what it synthesizes is byte for byte what the TypeScript app
 * synthesizes. What jsii cannot carry is said here in its own terms: literal unions are enums,
 * `readonly string[]` is `string[]`, and the handles users read are plain names and cdk8s objects.
 * Kinds and controllers stay TypeScript: they run inside the reconciler image.
 */
import { ApiObject } from 'cdk8s';
import { Construct, Node } from 'constructs';
import * as kit from 'cdk8s-operator-kit';

/** The reconciler's log level. */
export enum LogLevel {
  DEBUG = 'debug',
  INFO = 'info',
  WARN = 'warn',
  ERROR = 'error',
}

/** When the node pulls the reconciler's image. */
export enum ImagePullPolicy {
  ALWAYS = 'Always',
  IF_NOT_PRESENT = 'IfNotPresent',
  NEVER = 'Never',
}

/** Where a cert-manager issuer lives. */
export enum CertManagerIssuerKind {
  ISSUER = 'Issuer',
  CLUSTER_ISSUER = 'ClusterIssuer',
}

/** The reconciler container's resources. */
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

/** A ServiceAccount, by name and namespace. */
export interface ServiceAccountReference {
  readonly name: string;
  readonly namespace: string;
}

/** How an operator is monitored (Prometheus Operator objects), when `monitoring` is on. */
export interface MonitoringOptions {
  /** The ServiceAccount Prometheus scrapes with, bound to read the secure `/metrics`. @default prometheus-k8s in monitoring (kube-prometheus) */
  readonly prometheusServiceAccount?: ServiceAccountReference;
  /** Labels Prometheus selects ServiceMonitors and PrometheusRules by. @default none */
  readonly labels?: { [key: string]: string };
  /** How often `/metrics` is scraped. @default '30s' */
  readonly interval?: string;
  /** How long a resource stays Degraded before its alert fires. @default '15m' */
  readonly degradedFor?: string;
  /** A Grafana dashboard in a ConfigMap its sidecar loads. @default true */
  readonly dashboard?: boolean;
}

/** A cert-manager issuer. */
export interface CertManagerIssuer {
  readonly name: string;
  /** @default CertManagerIssuerKind.ISSUER */
  readonly kind?: CertManagerIssuerKind;
  /** @default 'cert-manager.io' */
  readonly group?: string;
}

/** The webhook serving certificate, kept by cert-manager. */
export interface CertManagerCertificate {
  /** Who signs it. @default a self-signed Issuer in the operator's namespace */
  readonly issuer?: CertManagerIssuer;
}

/** Options of every ready-made operator; each has a default. See the TypeScript `OperatorOptions`. */
export interface OperatorOptions {
  /** Base name of the operator's objects. @default the construct id */
  readonly name?: string;
  /** Namespace the reconciler runs in. @default '<name>-system' */
  readonly namespace?: string;
  /** Create that namespace, with the restricted Pod Security Standard enforced. @default true */
  readonly createNamespace?: boolean;
  /** Reconciler image, without tag. @default the kit's image */
  readonly image?: string;
  /** Reconciler image tag. @default the kit's version */
  readonly imageTag?: string;
  /** @default ImagePullPolicy.IF_NOT_PRESENT */
  readonly imagePullPolicy?: ImagePullPolicy;
  /** Reconciler pods. @default `shards`, else 1 */
  readonly replicas?: number;
  /** Namespaces shared out among this many reconcilers. @default 1 */
  readonly shards?: number;
  /** One active reconciler, elected through a Lease. @default true */
  readonly leaderElection?: boolean;
  /** Watch only this namespace (a Role there instead of a ClusterRole). @default every namespace */
  readonly watchNamespace?: string;
  /** Watch only these namespaces. @default every namespace */
  readonly watchNamespaces?: string[];
  /** @default requests 10m/64Mi, limits 500m/256Mi */
  readonly resources?: OperatorResources;
  /** @default LogLevel.INFO */
  readonly logLevel?: LogLevel;
  /** Reconciles run at once. @default 4 */
  readonly maxConcurrentReconciles?: number;
  /** Port of `/metrics`. @default 8080 */
  readonly metricsPort?: number;
  /** Serve `/metrics` over TLS, authenticated and authorized. @default true */
  readonly metricsSecure?: boolean;
  /** Port of `/healthz` and `/readyz`. @default 8081 */
  readonly healthPort?: number;
  /** Prometheus Operator objects for it: on, or on with these options. @default false */
  readonly monitoring?: boolean | MonitoringOptions;
  /** OTLP/HTTP traces endpoint. @default none */
  readonly otlpEndpoint?: string;
  /** Serve its kinds' admission webhooks. @default false */
  readonly admissionWebhooks?: boolean;
  /** cert-manager keeps the webhook certificate. @default the reconciler makes its own */
  readonly certManager?: CertManagerCertificate;
  /** `app.kubernetes.io/part-of` of its objects. @default 'cdk8s-operator-kit' */
  readonly partOf?: string;
  /** Where the cluster-scoped objects go (CRDs, ClusterRoles), e.g. a chart applied first. @default the operator's chart */
  readonly clusterScope?: Construct;
  /** Where the CRDs go. @default `clusterScope` */
  readonly crdScope?: Construct;
}

/**
 * What every ready-made operator lets its user read. Not a construct of its own: the TypeScript
 * construct is made in the scope and with the id given (so its objects' names and charts are the
 * same), and `node` is its node.
 */
export abstract class ReadyMadeOperator {
  /** The construct's node: its path, children and dependencies. */
  readonly node: Node;
  /** Base name of its objects. */
  readonly operatorName: string;
  /** Namespace the reconciler runs in. */
  readonly operatorNamespace: string;
  /** Names of the CRDs it installs. */
  readonly crdNames: string[];
  /** The reconciler's Deployment. */
  readonly deployment: ApiObject;
  /** The reconciler's ServiceAccount. */
  readonly serviceAccount: ApiObject;

  protected constructor(scope: Construct, id: string, props: OperatorOptions) {
    const make = MAKERS.get(new.target);
    if (!make) throw new Error(`${new.target.name} is not one of the kit's ready-made operators`);
    const made = make(scope, id, kitOptions(props));
    this.node = made.node;
    this.operatorName = made.operatorName;
    this.operatorNamespace = made.operatorNamespace;
    this.crdNames = made.crds.map((crd) => crd.apiObject.name);
    this.deployment = made.deployment;
    this.serviceAccount = made.serviceAccount;
  }
}

/** The TypeScript options from these: enums are their strings already; arrays become read-only. */
function kitOptions(props: OperatorOptions): kit.OperatorOptions {
  const { watchNamespaces, certManager, ...rest } = props;
  return {
    ...rest,
    ...(watchNamespaces ? { watchNamespaces: [...watchNamespaces] } : {}),
    ...(certManager ? { certManager } : {}),
  };
}

/** The Memcached operator: `memcacheds.cache.example.com`, its RBAC and reconciler. */
export class MemcachedOperator extends ReadyMadeOperator {
  constructor(scope: Construct, id: string, props: OperatorOptions = {}) {
    super(scope, id, props);
  }
}

/** The EtcdCluster operator: `etcdclusters.etcd.database.coreos.com`, its RBAC and reconciler. */
export class EtcdClusterOperator extends ReadyMadeOperator {
  constructor(scope: Construct, id: string, props: OperatorOptions = {}) {
    super(scope, id, props);
  }
}

/** The Database operator: `databases.database.example.com`, its RBAC and reconciler. */
export class DatabaseOperator extends ReadyMadeOperator {
  constructor(scope: Construct, id: string, props: OperatorOptions = {}) {
    super(scope, id, props);
  }
}

/** The CronTab operator: `crontabs.stable.example.com`, its RBAC and reconciler. */
export class CronTabOperator extends ReadyMadeOperator {
  constructor(scope: Construct, id: string, props: OperatorOptions = {}) {
    super(scope, id, props);
  }
}

/** The WebApp and Application operator, their RBAC and reconciler. */
export class WebAppOperator extends ReadyMadeOperator {
  constructor(scope: Construct, id: string, props: OperatorOptions = {}) {
    super(scope, id, props);
  }
}

/** How each ready-made operator's TypeScript construct is made, by the class standing for it. */
const MAKERS = new Map<unknown, (scope: Construct, id: string, options: kit.OperatorOptions) => kit.Operator>([
  [MemcachedOperator, (scope, id, options) => new kit.MemcachedOperator(scope, id, options)],
  [EtcdClusterOperator, (scope, id, options) => new kit.EtcdClusterOperator(scope, id, options)],
  [DatabaseOperator, (scope, id, options) => new kit.DatabaseOperator(scope, id, options)],
  [CronTabOperator, (scope, id, options) => new kit.CronTabOperator(scope, id, options)],
  [WebAppOperator, (scope, id, options) => new kit.WebAppOperator(scope, id, options)],
]);

/** One NFS export per replica set member. */
export interface NfsExports {
  /** NFS server address or host name. */
  readonly server: string;
  /** Exported path for each member, in member order. */
  readonly paths: string[];
  /** @default ['hard', 'nfsvers=4.1'] */
  readonly mountOptions?: string[];
}

/** Storage for one kind of volume (data or logs) of every member. */
export interface MongoDbVolumeOptions {
  /** What each claim asks for. @default the volume capacity, or '1Gi' with a StorageClass */
  readonly request?: string;
  /** Size of each NFS PersistentVolume. @default '1Gi' */
  readonly capacity?: string;
  /** NFS exports: one PersistentVolume per member. @default none: give this or `storageClassName` */
  readonly nfs?: NfsExports;
  /** StorageClass variant: claims only. @default none: give this or `nfs` */
  readonly storageClassName?: string;
}

/** Options of `MongoDbStorage`. See the TypeScript `MongoDbStorageProps`. */
export interface MongoDbStorageProps {
  /** The MongoDBCommunity resource's name. */
  readonly replicaSetName: string;
  /** Its namespace. */
  readonly namespace: string;
  /** @default 3 */
  readonly members?: number;
  readonly data: MongoDbVolumeOptions;
  /** @default none: logs on the data volume */
  readonly logs?: MongoDbVolumeOptions;
  /** @default ['ReadWriteOnce'] */
  readonly volumeAccessModes?: string[];
  /** @default the volumes' access modes */
  readonly claimAccessModes?: string[];
  /** @default true */
  readonly createNamespace?: boolean;
  /** Where the volumes and the Namespace go. @default this construct's chart */
  readonly volumesScope?: Construct;
}

/** PersistentVolumes and claims named for a MongoDBCommunity replica set's members (see `ReadyMadeOperator` on `node`). */
export class MongoDbStorage {
  /** The construct's node. */
  readonly node: Node;
  /** The PersistentVolumes (NFS variant). */
  readonly persistentVolumes: ApiObject[];
  /** The claims. */
  readonly claims: ApiObject[];

  constructor(scope: Construct, id: string, props: MongoDbStorageProps) {
    const storage = new kit.MongoDbStorage(scope, id, props);
    this.node = storage.node;
    this.persistentVolumes = [...storage.persistentVolumes];
    this.claims = [...storage.claims];
  }
}
