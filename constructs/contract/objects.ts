/**
 * The one object model both halves share: Kubernetes objects as plain JSON, the way the API
 * server sends them and the reconciler's caches hold them. Built-in objects are typed with the
 * fields the kit's kinds read; everything else stays `unknown` until someone reads it.
 */

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

export interface Deployment extends KubeObject {
  spec?: { replicas?: number };
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
    updateStrategy?: { rollingUpdate?: { partition?: number } };
    template?: { spec?: { containers?: { image?: string }[] } };
  };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    observedGeneration?: number;
  };
}

export interface CronJob extends KubeObject {
  spec?: { schedule?: string };
  status?: { lastScheduleTime?: string; lastSuccessfulTime?: string; active?: unknown[] };
}

export interface Job extends KubeObject {
  status?: { conditions?: WorkloadCondition[]; succeeded?: number; failed?: number };
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  terminated?: { reason?: string; exitCode?: number; message?: string };
}

export interface Pod extends KubeObject {
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    /** `lastState`: how the container last ended (a crash loop's exit code is only there). */
    containerStatuses?: { name: string; state?: ContainerState; lastState?: ContainerState }[];
  };
}

export interface Ingress extends KubeObject {
  spec?: { rules?: { host?: string; http?: { paths?: { path?: string }[] } }[] };
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
