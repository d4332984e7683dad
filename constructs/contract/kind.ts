import type { KubeObject } from './objects';

/**
 * What the reconciler knows of a custom kind: its names, versions and scope, how to convert an
 * object between versions, and whether its status keeps conditions. A `CustomResourceKind`
 * (constructs) is one, with the schemas and CRD options the synth side reads as well; the
 * runtime reads a kind only through this, so it needs nothing of the construct library.
 */
export interface KindDescriptor {
  readonly group: string;
  readonly kind: string;
  /** Lower-case plural used in URLs and RBAC rules. */
  readonly plural: string;
  /** Lower-case singular, as `kubectl get <singular>` takes it. */
  readonly singular: string;
  /** Every served version, oldest first. */
  readonly versions: readonly string[];
  /** The version objects are stored (and status is written) in. */
  readonly storageVersion: string;
  readonly namespaced: boolean;
  /** `<plural>.<group>`, the CRD's name. */
  readonly crdName: string;
  /** `group/version` of the storage version. */
  readonly apiVersion: string;
  /** Whether some version has a schema of its own, so the API server needs the `/convert` webhook. */
  readonly needsConversion: boolean;
  /** Whether the status schema has `conditions`: only then does the runtime write them. */
  readonly statusHasConditions: boolean;
  /**
   * Which status fields of the scale subresource the runtime writes, from the resource's workload
   * children: `status.replicas` (their pods) and `status.selector` (their pods' label selector,
   * for HorizontalPodAutoscalers). Undefined for a kind without a scale subresource.
   */
  readonly scaleStatus?: { readonly replicas: boolean; readonly selector: boolean };
  /** The object at another served version of the kind (`group/version`); throws for a version not served. */
  convert<T extends KubeObject>(object: T, apiVersion: string): T;
}
