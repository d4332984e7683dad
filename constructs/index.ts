/**
 * Constructs that synthesize complete Kubernetes operators: kinds, CRDs, least-privilege RBAC,
 * the reconciler Deployment, and `ConstructOperator` for any construct.
 *
 * The public API, listed name by name: what a user composes, declares or reads. Helpers the
 * kit's own kinds share stay behind their modules.
 *
 * @module cdk8s-operator-kit
 */

// The schema language: a kind's spec and status, typed and as OpenAPI.
export { computeResourcesSchema, conditionSchema, conditionsSchema, t } from './core/schema';
export type {
  ArrayOptions,
  Condition,
  FieldOptions,
  JsonSchema,
  NumberOptions,
  ObjectOptions,
  QuantityOptions,
  Schema,
  Static,
  StringOptions,
} from './core/schema';

// A custom kind and its CRD.
export { CustomResourceKind } from './core/kind';
export type { CustomResource, CustomResourceKindProps, PrinterColumn, ScaleSubresource } from './core/kind';
export { CustomResourceDefinition } from './core/crd';
export type { ConversionWebhook, CustomResourceDefinitionProps } from './core/crd';
export { conversionAnnotation, convertObject, spokeVersion } from './core/conversion';
export type { SpokeVersion } from './core/conversion';

// The contract with the reconciler: objects, resource types and the controller declaration.
export {
  BuiltinTypes,
  ChildMap,
  customResourceType,
  finalizerName,
  healthReads,
  isNamespaceTerminating,
  TerminalError,
} from './contract';
export type {
  Children,
  ConfigMap,
  ContainerState,
  ContainerStatus,
  CoreEvent,
  CronJob,
  CustomResourceObject,
  DaemonSet,
  Deployment,
  EventSpec,
  ExternalContext,
  ExternalStep,
  PodRestart,
  PodLabels,
  ClaimToDiscard,
  ExternalWrite,
  AdmissionContext,
  CacheReads,
  FieldProblem,
  FinalizeContext,
  FinalizeOutcome,
  Ingress,
  InvolvedObject,
  Job,
  KubeObject,
  LabelSelector,
  Lease,
  LeaseSpec,
  LoadBalancerStatus,
  ObjectMeta,
  Observed,
  OwnerReference,
  OwnerReferenceLike,
  PersistentVolumeClaim,
  Pod,
  PrepareApi,
  MadeFor,
  OwnLookup,
  Problem,
  ReplicaSet,
  ResourceType,
  Secret,
  Service,
  StatefulSet,
  StatusOf,
  StorageClass,
  WorkloadCondition,
} from './contract';

export type { ControllerDeclaration } from './core/controller-declaration';
export type { KindDescriptor } from './contract/kind';

// Writing a status: conditions, pods.
export { ConditionList, findCondition, setCondition } from './contract/conditions';
export type { ConditionInput } from './contract/conditions';
export { livePodNames, podFailure, podInstance } from './core/pods';

// The operator: CRD, RBAC and the reconciler Deployment; and any construct as a kind.
export { Operator } from './core/operator';
export { KIT_CONTROLLERS } from './kit-controllers';
export { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG } from './core/kit-image';
export type { LogLevel, OperatorOptions, OperatorProps, OperatorResources } from './core/operator-props';
export type { CertManagerCertificate, CertManagerIssuer } from './core/webhooks';
export {
  CERTIFICATE_NAME_ANNOTATION,
  CertManagerTypes,
  certificateReadiness,
  issuerRefSchema,
  secretOfCertificate,
} from './core/cert-manager';
export type { CertificateObject, IssuerRef } from './core/cert-manager';
export type { MonitoringOptions, ServiceAccountReference } from './core/monitoring';
export {
  addSample,
  ConstructOperator,
  constructController,
  constructStatus,
  constructStatusSchema,
} from './core/construct-operator';
export type {
  ConstructControllerProps,
  ConstructOperatorProps,
  ConstructStatus,
  SampleSpec,
} from './core/construct-operator';
export { operatorHelmChart, writeHelmChart } from './helm/chart';
export { olmBundle, writeOlmBundle } from './olm/bundle';
export type { OlmBundleProps } from './olm/bundle';
export type { CsvDescription } from './olm/csv';
export type { OperatorHelmChartProps } from './helm/chart';
export { rulesForControllers } from './core/rbac';
export type { PolicyRule } from './core/rbac';
export { applyIndependently, renderConstructs, waitsFor } from './contract/render';

// Whether children are ready: the rules every kind's status is computed by.
export { assessChildren, childHealth, waitingOn } from './contract/health';
export { madeBy, podProblem, podWorkloads } from './contract/pod-problems';
export type { ChildHealth, ChildrenHealth, ChildrenInput, Readiness, Verdict } from './contract/health';

// Building blocks for one's own constructs: labels and the restricted Pod Security settings.
export { selectorLabels, standardLabels } from './core/labels';
export type { StandardLabelsProps } from './core/labels';
export {
  NON_ROOT_UID,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  restrictPodSecurity,
} from './core/security';

// Memcached.
export { memcachedKind } from './memcached/api';
export type { Memcached, MemcachedSpec, MemcachedStatus } from './memcached/api';
export { memcachedController } from './memcached/controller';
export { MemcachedOperator } from './memcached/operator';
export type { MemcachedOperatorProps } from './memcached/operator';
export { MemcachedDeployment } from './memcached/memcached-deployment';
export type { MemcachedDeploymentProps } from './memcached/memcached-deployment';

// EtcdCluster.
export { etcdClusterKind } from './etcd/api';
export type { EtcdCluster, EtcdClusterSpec, EtcdClusterStatus } from './etcd/api';
export { etcdClusterController } from './etcd/controller';
export { EtcdClusterOperator } from './etcd/operator';
export type { EtcdClusterOperatorProps } from './etcd/operator';
export { BACKUP_TOOLS_IMAGE, EtcdClusterResources } from './etcd/etcd-cluster-resources';
export type { EtcdClusterResourcesProps } from './etcd/etcd-cluster-resources';

// MongoDB storage.
export { mongoDbCommunityKind } from './mongodb/api';
export type { MongoDbCommunityGroup } from './mongodb/api';
export { MongoDbStorage } from './mongodb/storage';
export type { MongoDbStorageProps, MongoDbVolumeOptions, NfsExports } from './mongodb/storage';

// CronTab.
export { cronTabKind } from './crontab/api';
export type { CronTab, CronTabSpec, CronTabStatus } from './crontab/api';
export { cronTabController } from './crontab/controller';
export { CronTabOperator } from './crontab/operator';
export type { CronTabOperatorProps } from './crontab/operator';
export { CronTabCronJob } from './crontab/crontab-cronjob';
export type { CronTabCronJobProps } from './crontab/crontab-cronjob';

// Application and WebApp.
export { applicationKind, webAppKind } from './webapp/api';
export type { Application, ApplicationSpec, WebApp, WebAppSpec, WebStatus } from './webapp/api';
export { applicationController, webAppController } from './webapp/controller';
export { WebAppOperator } from './webapp/operator';
export type { WebAppOperatorProps } from './webapp/operator';
export { applicationModel, webAppModel, WebWorkload } from './webapp/web-workload';
export type { WebWorkloadModel, WebWorkloadProps } from './webapp/web-workload';

// Database.
export { databaseKind } from './database/api';
export type { Database, DatabaseSpec, DatabaseStatus } from './database/api';
export { databaseController } from './database/controller';
export { DatabaseOperator } from './database/operator';
export type { DatabaseOperatorProps } from './database/operator';
export { DatabaseResources } from './database/database-resources';
export type { DatabaseResourcesProps } from './database/database-resources';
