import { BuiltinTypes, customResourceType, healthReads, ownsStatefulSets, type ResourceType } from '../contract';
import type { ControllerDeclaration } from './controller-declaration';

/** One RBAC rule in wire form. */
export interface PolicyRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}

/** Rules split by where they may be granted: cluster-scoped types always need a ClusterRole. */
export interface ControllerRules {
  readonly namespaced: PolicyRule[];
  readonly clusterScoped: PolicyRule[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = [...READ, 'create', 'update', 'patch'];
const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/**
 * What the runtime does to the StatefulSets a controller owns beyond applying them: a pod their
 * rollout is stuck behind is deleted, as Kubernetes' forced rollback says (stuck-rollouts.ts: only
 * a StatefulSet's pods, only stuck ones); storage grown in place (storage-growth.ts): their claims
 * patched to the new size where their StorageClass, which is read, allows expansion, and the
 * StatefulSet deleted with its pods orphaned, to be made again with the new size.
 */
const STATEFUL_SET_UPKEEP: readonly (readonly [ResourceType, readonly string[]])[] = [
  [BuiltinTypes.Pod, ['delete']],
  [BuiltinTypes.PersistentVolumeClaim, ['patch']],
  [BuiltinTypes.StatefulSet, ['delete']],
  [BuiltinTypes.StorageClass, ['get']],
];

/**
 * The least-privilege rules a set of controllers needs, derived from their declarations:
 * read + watch their kind, write its status (and patch the object itself only when it has a finalize step
 * or versions to migrate), apply their children,
 * delete only what they declare they delete, read what they watch (and the pods of the
 * workloads they own: `healthReads`), and record Events.
 * No wildcard is ever produced.
 */
// eslint-disable-next-line complexity -- one grant per declared relation (for, owns, deletes, reads, creates, keeps, finalize, conversion, discardsClaims, labelsPods): a flat list the rule counts as branches
export function rulesForControllers(controllers: readonly ControllerDeclaration[]): ControllerRules {
  const grants = new Map<string, { type: ResourceType; subresource?: string; verbs: Set<string> }>();
  const grant = (type: ResourceType, verbs: readonly string[], subresource?: string) => {
    const key = `${type.group}|${type.resource}|${subresource ?? ''}`;
    const entry = grants.get(key) ?? { type, subresource, verbs: new Set<string>() };
    verbs.forEach((v) => entry.verbs.add(v));
    grants.set(key, entry);
  };

  for (const c of controllers) {
    const own = customResourceType(c.for);
    grant(own, READ);
    grant(own, ['get', 'update', 'patch'], 'status');
    // Children carry a controller owner reference with blockOwnerDeletion, which clusters running
    // the OwnerReferencesPermissionEnforcement admission plugin only allow with this grant.
    grant(own, ['update'], 'finalizers');
    // Putting on and taking off its finalizer: a patch of the resource's metadata.
    if (c.finalize) grant(own, ['patch']);
    // Rewriting every object once in the new storage version (storage migration): a no-op patch.
    if (c.for.needsConversion) grant(own, ['patch']);
    for (const child of c.owns ?? []) grant(child, WRITE);
    for (const child of c.deletes ?? []) grant(child, ['delete']);
    for (const read of [...(c.reads ?? []), ...healthReads(c)]) grant(read, READ);
    // A pod an owned StatefulSet's rollout is stuck behind is deleted, as Kubernetes' forced rollback
    // says (operator/runtime/reconcile/stuck-rollouts.ts): only a StatefulSet's pods, only stuck ones.
    if (ownsStatefulSets(c)) for (const [type, verbs] of STATEFUL_SET_UPKEEP) grant(type, verbs);
    // A restarted pod's claims, discarded at its kind's ask only (executor.ts checks each is the pod's own).
    if (c.discardsClaims) grant(BuiltinTypes.PersistentVolumeClaim, ['delete']);
    // Labels on its StatefulSets' pods, at its kind's ask only (the planner keeps off selector labels).
    if (c.labelsPods) grant(BuiltinTypes.Pod, ['patch']);
    for (const created of c.creates ?? []) grant(created, ['create']);
    // Read back by name and replaced, never listed or watched: the runtime hands over its own alone.
    for (const kept of c.keeps ?? []) grant(kept, ['get', 'create', 'update']);
  }
  if (controllers.length > 0) grant(BuiltinTypes.Event, ['create', 'patch']);

  // Merge entries with identical group and verbs into one rule, for a readable ClusterRole.
  const merged = new Map<string, { namespaced: boolean; rule: PolicyRule }>();
  const sorted = [...grants.values()].sort((a, b) =>
    `${a.type.group}/${a.type.resource}/${a.subresource ?? ''}`.localeCompare(
      `${b.type.group}/${b.type.resource}/${b.subresource ?? ''}`,
    ),
  );
  for (const g of sorted) {
    const verbs = VERB_ORDER.filter((v) => g.verbs.has(v));
    const key = `${g.type.namespaced}|${g.type.group}|${verbs.join(',')}`;
    const resource = g.subresource ? `${g.type.resource}/${g.subresource}` : g.type.resource;
    const existing = merged.get(key);
    if (existing) {
      existing.rule.resources.push(resource);
    } else {
      merged.set(key, {
        namespaced: g.type.namespaced,
        rule: { apiGroups: [g.type.group], resources: [resource], verbs },
      });
    }
  }
  const all = [...merged.values()];
  return {
    namespaced: all.filter((r) => r.namespaced).map((r) => r.rule),
    clusterScoped: all.filter((r) => !r.namespaced).map((r) => r.rule),
  };
}

/** What a leader-elected manager needs in its own namespace: its Lease, nothing more. */
export function leaderElectionRules(options: { readonly sharded?: boolean } = {}): PolicyRule[] {
  return [
    {
      apiGroups: [BuiltinTypes.Lease.group],
      resources: [BuiltinTypes.Lease.resource],
      // Sharded replicas also list the shard Leases, to find the earlier holders of their range.
      verbs: options.sharded ? ['get', 'list', 'create', 'update'] : ['get', 'create', 'update'],
    },
  ];
}

/** What serving /metrics securely needs: TokenReviews and SubjectAccessReviews (cluster-scoped). */
export function metricsAuthRules(): PolicyRule[] {
  return [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}
