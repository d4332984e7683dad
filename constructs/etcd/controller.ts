import { BuiltinTypes, ControllerDeclaration, EventSpec, ObjectLike, Observed } from '../core/controller';
import { ConditionList } from '../core/conditions';
import { livePodNames } from '../core/pods';
import type { EtcdCluster, EtcdClusterStatus } from './api';
import { etcdClusterKind } from './api';
import { ETCD_CLIENT_PORT, EtcdClusterResources, etcdSelectorLabels, quorum } from './etcd-cluster-resources';

interface StatefulSet extends ObjectLike {
  spec?: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number; currentReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
}

type Cluster = EtcdCluster;

/** The status an EtcdCluster should show. Pure; `now` only stamps conditions that change. */
export function desiredEtcdStatus(cluster: Cluster, sts: StatefulSet | undefined, members: string[], applyError: string | undefined, childFailure?: { reason: string; message: string }, now = new Date()): EtcdClusterStatus {
  const want = cluster.spec.replicas;
  const ready = sts?.status?.readyReplicas ?? 0;
  const current = sts?.status?.replicas ?? 0;
  const generation = cluster.metadata.generation ?? 0;
  const list = new ConditionList(cluster.status?.conditions, generation, now);
  const { set } = list;
  const q = quorum(want);
  set('Available', ready >= q ? 'True' : 'False', ready >= q ? 'QuorumReady' : 'NoQuorum', `${ready}/${want} members ready; quorum is ${q}`);
  const scaling = current !== want;
  const complete = !scaling && ready === want;
  set('Progressing', complete ? 'False' : 'True', complete ? 'Complete' : scaling ? (current < want ? 'ScalingUp' : 'ScalingDown') : 'WaitingForMembers',
    complete ? `all ${want} members ready` : `${current} members, ${ready} ready, ${want} requested`);
  if (applyError) set('Degraded', 'True', 'InvalidResources', applyError);
  // Kubernetes accepted the StatefulSet but cannot make its members: only its Events say so.
  else if (childFailure && ready < want) set('Degraded', 'True', childFailure.reason, childFailure.message);
  else set('Degraded', 'False', 'AsExpected', 'the StatefulSet and Services match the spec');
  if (want % 2 === 0) {
    set('OddMembers', 'False', 'EvenMemberCount', `${want} members tolerate ${want - q} failure(s), no more than ${want - 1} would; prefer an odd number`);
  } else {
    set('OddMembers', 'True', 'OddMemberCount', `${want} members tolerate ${want - q} failure(s)`);
  }
  const phase = applyError ? 'Failed' : scaling && sts ? 'Scaling' : complete ? 'Running' : 'Creating';
  return {
    phase,
    members,
    replicas: current,
    readyReplicas: ready,
    clientService: `${cluster.metadata.name}-client.${cluster.metadata.namespace}.svc:${ETCD_CLIENT_PORT}`,
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/** The EtcdCluster a StatefulSet (named after it) or member claim (`data-<name>-<ordinal>`) belongs to. */
export function etcdClusterOfChild(involved: { kind?: string; name?: string }): string | undefined {
  if (involved.kind === 'StatefulSet') return involved.name;
  if (involved.kind === 'PersistentVolumeClaim') return /^data-(.+)-\d+$/.exec(involved.name ?? '')?.[1];
  return undefined;
}

/** Events speak of the cluster (created, scaled), not of each child. */
export function etcdEvents(cluster: Cluster, observed: Observed): EventSpec[] {
  if (observed.applyError) return [];
  const name = cluster.metadata.name;
  const want = cluster.spec.replicas;
  const before = (observed.before.get(`StatefulSet/${name}`) as StatefulSet | undefined)?.spec?.replicas;
  if (before === want) return [];
  const events: EventSpec[] = [before === undefined
    ? { type: 'Normal', reason: 'Created', message: `Created etcd cluster ${name} with ${want} members` }
    : { type: 'Normal', reason: 'Scaled', message: `Scaled etcd cluster ${name} from ${before} to ${want} members; data volumes are kept` }];
  if (want % 2 === 0) events.push({ type: 'Warning', reason: 'EvenMemberCount', message: `${want} members tolerate no more failures than ${want - 1}; prefer an odd number` });
  return events;
}

/**
 * The etcdcluster controller: an EtcdCluster becomes a headless peer Service, a client Service,
 * a StatefulSet and a PodDisruptionBudget. It reads Pods for status, and the Warning Events that
 * say a member's pod or claim cannot be made (for `Degraded`). It never deletes
 * PersistentVolumeClaims: member data outlives scale-downs and the EtcdCluster itself.
 */
export const etcdClusterController: ControllerDeclaration<EtcdCluster> = {
  name: 'etcdcluster',
  for: etcdClusterKind,
  owns: [BuiltinTypes.Service, BuiltinTypes.StatefulSet, BuiltinTypes.PodDisruptionBudget],
  reads: [BuiltinTypes.Pod, BuiltinTypes.CoreEvent],
  render: (scope, cluster, { owner }) => new EtcdClusterResources(scope, 'etcd', {
    name: cluster.metadata.name,
    namespace: cluster.metadata.namespace!,
    spec: cluster.spec,
    owner,
  }),
  status: (cluster, observed) => desiredEtcdStatus(
    cluster,
    observed.children.get(`StatefulSet/${cluster.metadata.name}`) as StatefulSet | undefined,
    livePodNames(observed.read(BuiltinTypes.Pod, etcdSelectorLabels(cluster.metadata.name))),
    observed.applyError,
    observed.childFailure,
    observed.now,
  ),
  events: etcdEvents,
  mapReads: {
    Pod: pod => {
      const l = pod.metadata.labels ?? {};
      return l['app.kubernetes.io/name'] === 'etcd' && l['app.kubernetes.io/component'] === 'member' ? l['app.kubernetes.io/instance'] : undefined;
    },
  },
  failureOwner: etcdClusterOfChild,
};
