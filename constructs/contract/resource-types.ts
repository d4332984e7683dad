import type { KindDescriptor } from './kind';
import type {
  ConfigMap,
  CoreEvent,
  CronJob,
  CustomResourceObject,
  DaemonSet,
  Deployment,
  Ingress,
  Job,
  KubeObject,
  CustomResourceDefinitionObject,
  Lease,
  PersistentVolumeClaim,
  Pod,
  ReplicaSet,
  Secret,
  Service,
  StatefulSet,
  StorageClass,
} from './objects';

declare const objectType: unique symbol;

/**
 * A Kubernetes resource type, as RBAC rules and watches name it. `T` is the shape of its
 * objects: what `observed.children.of(type, name)` and `observed.read(type)` return.
 */
export interface ResourceType<T extends KubeObject = KubeObject> {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs and RBAC rules. */
  readonly resource: string;
  readonly namespaced: boolean;
  /** Type-level only: never set. It carries `T`. */
  readonly [objectType]?: T;
}

function builtin<T extends KubeObject = KubeObject>(
  group: string,
  version: string,
  kind: string,
  resource: string,
  namespaced = true,
): ResourceType<T> {
  return { group, version, kind, resource, namespaced };
}

/** The built-in types that controllers in this kit create or read. */
export const BuiltinTypes = {
  Pod: builtin<Pod>('', 'v1', 'Pod', 'pods'),
  Service: builtin<Service>('', 'v1', 'Service', 'services'),
  Secret: builtin<Secret>('', 'v1', 'Secret', 'secrets'),
  ConfigMap: builtin<ConfigMap>('', 'v1', 'ConfigMap', 'configmaps'),
  PersistentVolumeClaim: builtin<PersistentVolumeClaim>('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims'),
  PersistentVolume: builtin('', 'v1', 'PersistentVolume', 'persistentvolumes', false),
  Deployment: builtin<Deployment>('apps', 'v1', 'Deployment', 'deployments'),
  StatefulSet: builtin<StatefulSet>('apps', 'v1', 'StatefulSet', 'statefulsets'),
  DaemonSet: builtin<DaemonSet>('apps', 'v1', 'DaemonSet', 'daemonsets'),
  ReplicaSet: builtin<ReplicaSet>('apps', 'v1', 'ReplicaSet', 'replicasets'),
  CronJob: builtin<CronJob>('batch', 'v1', 'CronJob', 'cronjobs'),
  Job: builtin<Job>('batch', 'v1', 'Job', 'jobs'),
  Ingress: builtin<Ingress>('networking.k8s.io', 'v1', 'Ingress', 'ingresses'),
  PodDisruptionBudget: builtin('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets'),
  // What cdk8s-plus L2 constructs make beside workloads (`kplus.NetworkPolicy`,
  // `kplus.ServiceAccount`, `kplus.HorizontalPodAutoscaler`), so a kind written with them needs no `owns`.
  NetworkPolicy: builtin('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies'),
  ServiceAccount: builtin('', 'v1', 'ServiceAccount', 'serviceaccounts'),
  HorizontalPodAutoscaler: builtin('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers'),
  Event: builtin('events.k8s.io', 'v1', 'Event', 'events'),
  /** core/v1 Events, as read (the same objects as events.k8s.io/v1, with field selectors on `reason`). */
  CoreEvent: builtin<CoreEvent>('', 'v1', 'Event', 'events'),
  Lease: builtin<Lease>('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  ValidatingWebhookConfiguration: builtin(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    false,
  ),
  MutatingWebhookConfiguration: builtin(
    'admissionregistration.k8s.io',
    'v1',
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfigurations',
    false,
  ),
  CustomResourceDefinition: builtin<CustomResourceDefinitionObject>(
    'apiextensions.k8s.io',
    'v1',
    'CustomResourceDefinition',
    'customresourcedefinitions',
    false,
  ),
  /** Read when a StatefulSet's claims are to grow: whether their class allows it (storage-growth.ts). */
  StorageClass: builtin<StorageClass>('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false),
  /** Not rendered by the kit's controllers: for tests that make a namespace of their own. */
  Namespace: builtin('', 'v1', 'Namespace', 'namespaces', false),
} as const;

/**
 * The resource type of a custom kind at one of its versions (its storage version unless given);
 * `T` names its objects' type, e.g. `customResourceType<Memcached>(memcachedKind)`.
 * @default `CustomResourceObject`
 */
export function customResourceType<T extends CustomResourceObject = CustomResourceObject>(
  kind: Pick<KindDescriptor, 'group' | 'storageVersion' | 'kind' | 'plural' | 'namespaced'>,
  version: string = kind.storageVersion,
): ResourceType<T> {
  return {
    group: kind.group,
    version,
    kind: kind.kind,
    resource: kind.plural,
    namespaced: kind.namespaced,
  };
}

/** `Kind/name`: how a resource's children are keyed. */
export function childKey(kind: string, name: string): string {
  return `${kind}/${name}`;
}

/** A resource's children by `Kind/name`, each readable typed by its resource type. */
export interface Children extends ReadonlyMap<string, KubeObject> {
  /** The child of this type and name, as that type's objects are shaped. */
  of<T extends KubeObject>(type: ResourceType<T>, name: string): T | undefined;
}

/**
 * Whether `obj` is one of `type`'s objects: its kind, in its group (any served version). A read of
 * one type's objects (a cache, the children under `Kind/name`) becomes a typed one by this check
 * rather than by an assertion.
 */
export function isOfType<T extends KubeObject>(type: ResourceType<T>, obj: KubeObject): obj is T {
  const apiVersion = obj.apiVersion ?? '';
  const slash = apiVersion.indexOf('/');
  return obj.kind === type.kind && (slash < 0 ? '' : apiVersion.slice(0, slash)) === type.group;
}

/** The children map the runtime fills: a Map with the typed `of` lookup. */
export class ChildMap extends Map<string, KubeObject> implements Children {
  of<T extends KubeObject>(type: ResourceType<T>, name: string): T | undefined {
    const child = this.get(childKey(type.kind, name));
    return child && isOfType(type, child) ? child : undefined;
  }
}
