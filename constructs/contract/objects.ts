/**
 * The one object model both halves share: Kubernetes objects as plain JSON, the way the API
 * server sends them and the reconciler's caches hold them. Built-in objects are typed with the
 * fields the kit's kinds read; everything else stays `unknown` until someone reads it.
 */
import { isJsonObject } from './json';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
  /** Who owns which fields (server-side apply). */
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

/** One entry of `metadata.managedFields`. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: FieldSet;
  time?: string;
}

/** A fieldsV1 set: keys `f:<name>`, `k:<json key>`, `v:<json value>`, `i:<index>`, `.` (the node itself). */
export interface FieldSet {
  [key: string]: FieldSet;
}

/** Every Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** Whether `v` is a Kubernetes object: an object with its metadata, its apiVersion and kind strings. */
export function isKubeObject(v: unknown): v is KubeObject {
  return isJsonObject(v) && isJsonObject(v.metadata) && typeof v.apiVersion === 'string' && typeof v.kind === 'string';
}

/** A custom resource as the reconciler reads it: spec with the CRD's defaults applied, status as stored. */
export interface CustomResourceObject<Spec = unknown, Status = unknown> extends KubeObject {
  metadata: ObjectMeta & { name: string };
  spec: Spec;
  status?: Status;
}

/** A condition as built-in workloads report it (Deployment's ReplicaFailure, Progressing, …). */
export interface WorkloadCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** A label selector, as workloads and Services carry it. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface Deployment extends KubeObject {
  spec?: { replicas?: number; selector?: LabelSelector; paused?: boolean };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    observedGeneration?: number;
    conditions?: WorkloadCondition[];
  };
}

export interface StatefulSet extends KubeObject {
  spec?: {
    replicas?: number;
    podManagementPolicy?: string;
    selector?: { matchLabels?: Record<string, string> };
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
    template?: { spec?: { containers?: { image?: string }[] } };
  };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    observedGeneration?: number;
  };
}

export interface DaemonSet extends KubeObject {
  status?: {
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    numberReady?: number;
    observedGeneration?: number;
  };
}

export interface ReplicaSet extends KubeObject {
  spec?: { replicas?: number };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
    conditions?: WorkloadCondition[];
  };
}

export interface PersistentVolumeClaim extends KubeObject {
  spec?: { storageClassName?: string; volumeName?: string; resources?: { requests?: { storage?: string } } };
  status?: {
    phase?: string;
    capacity?: { storage?: string };
    conditions?: WorkloadCondition[];
    /** A resize's state per resource, e.g. `{ storage: 'ControllerResizeInfeasible' }`. */
    allocatedResourceStatuses?: { storage?: string };
  };
}

export interface StorageClass extends KubeObject {
  provisioner?: string;
  allowVolumeExpansion?: boolean;
}

/** A load balancer's addresses, as a Service or an Ingress reports them. */
export interface LoadBalancerStatus {
  ingress?: { ip?: string; hostname?: string }[];
}

export interface Service extends KubeObject {
  spec?: { type?: string; clusterIP?: string };
  status?: { loadBalancer?: LoadBalancerStatus };
}

export interface CronJob extends KubeObject {
  spec?: { schedule?: string };
  status?: { lastScheduleTime?: string; lastSuccessfulTime?: string; active?: unknown[] };
}

export interface Job extends KubeObject {
  spec?: { suspend?: boolean };
  status?: { conditions?: WorkloadCondition[]; active?: number; succeeded?: number; failed?: number };
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  terminated?: { reason?: string; exitCode?: number; message?: string; finishedAt?: string | null };
}

/** How one container of a pod is, and (`lastState`) how it last ended: a crash loop's exit code is only there. */
export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface Pod extends KubeObject {
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    /** PodScheduled (Unschedulable) and Ready, as the cache keeps them. */
    conditions?: WorkloadCondition[];
    initContainerStatuses?: ContainerStatus[];
    containerStatuses?: ContainerStatus[];
  };
}

export interface Ingress extends KubeObject {
  spec?: { rules?: { host?: string; http?: { paths?: { path?: string }[] } }[] };
  status?: { loadBalancer?: LoadBalancerStatus };
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The object an Event is about. */
export interface InvolvedObject {
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** A core/v1 Event, as read. */
export interface CoreEvent extends KubeObject {
  involvedObject?: InvolvedObject;
  reason?: string;
  message?: string;
  type?: string;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { lastObservedTime?: string };
}

/** A coordination.k8s.io/v1 Lease's spec: who holds it, and since when. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A coordination.k8s.io/v1 Lease, as leader and shard election read and write it. */
export interface Lease extends KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: LeaseSpec;
}

/**
 * An apiextensions.k8s.io/v1 CustomResourceDefinition, as far as the runtime, the command and the
 * test kit read one from the API server: its versions, conversion, and what the server says of it.
 */
export interface CustomResourceDefinitionObject extends KubeObject {
  spec?: {
    group?: string;
    names?: { kind?: string; plural?: string };
    versions?: { name: string; served?: boolean; storage?: boolean; schema?: unknown }[];
    conversion?: { strategy?: string; webhook?: unknown };
  };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    acceptedNames?: { kind?: string; plural?: string };
    /** The versions objects may be stored in, which storage migration trims. */
    storedVersions?: string[];
  };
}
