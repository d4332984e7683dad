import { CustomResourceKind } from './kind';

/** A Kubernetes resource type, as RBAC rules and watches name it. */
export interface ResourceType {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs and RBAC rules. */
  readonly resource: string;
  readonly namespaced: boolean;
}

function builtin(group: string, version: string, kind: string, resource: string, namespaced = true): ResourceType {
  return { group, version, kind, resource, namespaced };
}

/** The built-in types that controllers in this kit create or read. */
export const BuiltinTypes = {
  Pod: builtin('', 'v1', 'Pod', 'pods'),
  Service: builtin('', 'v1', 'Service', 'services'),
  Secret: builtin('', 'v1', 'Secret', 'secrets'),
  ConfigMap: builtin('', 'v1', 'ConfigMap', 'configmaps'),
  PersistentVolumeClaim: builtin('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims'),
  PersistentVolume: builtin('', 'v1', 'PersistentVolume', 'persistentvolumes', false),
  Deployment: builtin('apps', 'v1', 'Deployment', 'deployments'),
  StatefulSet: builtin('apps', 'v1', 'StatefulSet', 'statefulsets'),
  CronJob: builtin('batch', 'v1', 'CronJob', 'cronjobs'),
  Job: builtin('batch', 'v1', 'Job', 'jobs'),
  Ingress: builtin('networking.k8s.io', 'v1', 'Ingress', 'ingresses'),
  PodDisruptionBudget: builtin('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets'),
  Event: builtin('events.k8s.io', 'v1', 'Event', 'events'),
  /** core/v1 Events, as read (the same objects as events.k8s.io/v1, with field selectors on `reason`). */
  CoreEvent: builtin('', 'v1', 'Event', 'events'),
  Lease: builtin('coordination.k8s.io', 'v1', 'Lease', 'leases'),
} as const;

/** The resource type of a custom kind (its storage version). */
export function customResourceType(kind: CustomResourceKind): ResourceType {
  return { group: kind.group, version: kind.storageVersion, kind: kind.kind, resource: kind.plural, namespaced: kind.namespaced };
}

/**
 * What one controller reconciles and touches, in controller-runtime's vocabulary. The operator
 * construct derives its RBAC from this declaration, and the reconciler sets up its watches from
 * the same one, so permissions and behaviour cannot drift apart.
 */
export interface ControllerDeclaration {
  /** Name used in `--controllers=...`, lower-case, e.g. `memcached`. */
  readonly name: string;
  /** The custom kind the controller reconciles (`For` in controller-runtime). */
  readonly for: CustomResourceKind;
  /** Children it creates and keeps in shape with server-side apply (`Owns`). */
  readonly owns?: readonly ResourceType[];
  /** Children it may also delete when the spec stops asking for them. Must be listed in `owns` too. */
  readonly deletes?: readonly ResourceType[];
  /** Types it only reads (`Watches`), e.g. Pods to report their names in status. */
  readonly reads?: readonly ResourceType[];
  /**
   * Objects it creates once and never reads or changes (create only), e.g. a generated
   * credentials Secret: an AlreadyExists answer means "exists, keep it". No get, list, watch,
   * update or delete, so it cannot read any object of the type.
   */
  readonly creates?: readonly ResourceType[];
  /** Whether it adds finalizers to the resources it reconciles (only for external cleanup). @default false */
  readonly finalizers?: boolean;
}

/** Throws when a declaration is inconsistent, with what to change. */
export function validateControllerDeclaration(c: ControllerDeclaration): void {
  if (!/^[a-z][a-z0-9-]*$/.test(c.name)) {
    throw new Error(`controller name ${JSON.stringify(c.name)} must be lower-case letters, digits and dashes, e.g. "memcached"`);
  }
  const owned = new Set((c.owns ?? []).map(keyOf));
  for (const d of c.deletes ?? []) {
    if (!owned.has(keyOf(d))) {
      throw new Error(`controller ${c.name}: it deletes ${d.resource} but does not own them; add ${d.kind} to owns`);
    }
  }
}

function keyOf(t: ResourceType): string {
  return `${t.group}/${t.resource}`;
}
