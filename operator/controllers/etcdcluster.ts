import { BuiltinTypes, customResourceType, ResourceType } from '../../constructs/core/controller';
import type { EtcdCluster, EtcdClusterStatus } from '../../constructs/etcd/api';
import { etcdClusterController } from '../../constructs/etcd/controller';
import { ETCD_CLIENT_PORT, EtcdClusterResources, etcdSelectorLabels, quorum } from '../../constructs/etcd/etcd-cluster-resources';
import { ChildFailure, ChildFailures, InvolvedObject } from '../runtime/child-failures';
import { applyChildren, applyStatusIfChanged, controllerReference, livePodNames, OwnedChildren, ownChildren, recordDegradedOnce, rejectionOf } from '../runtime/children';
import { Condition, ConditionList } from '../runtime/conditions';
import { Controller, ReconcileContext, Request, Result } from '../runtime/controller';
import { Informer } from '../runtime/informer';
import { Manager } from '../runtime/manager';
import { renderConstructs } from '../runtime/render';
import { KubeObject, objectKey } from '../runtime/resource';
import type { ControllerSetupOptions } from './registry';

interface StatefulSet extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number; currentReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
}

type Cluster = EtcdCluster & KubeObject;
const etcdType = customResourceType(etcdClusterController.for);
const CHILD_TYPES: Record<string, ResourceType> = {
  Service: BuiltinTypes.Service,
  StatefulSet: BuiltinTypes.StatefulSet,
  PodDisruptionBudget: BuiltinTypes.PodDisruptionBudget,
};

/** The children an EtcdCluster should have, ready for server-side apply. */
export function desiredEtcdChildren(cluster: Cluster): KubeObject[] {
  return renderConstructs(scope => new EtcdClusterResources(scope, 'etcd', {
    name: cluster.metadata.name,
    namespace: cluster.metadata.namespace!,
    spec: cluster.spec,
    owner: controllerReference(cluster, etcdType),
  }));
}

/** The status an EtcdCluster should show. Pure; `now` only stamps conditions that change. */
export function desiredEtcdStatus(cluster: Cluster, sts: StatefulSet | undefined, members: string[], applyError: string | undefined, childFailure?: ChildFailure, now = new Date()): EtcdClusterStatus {
  const want = cluster.spec.replicas;
  const ready = sts?.status?.readyReplicas ?? 0;
  const current = sts?.status?.replicas ?? 0;
  const generation = cluster.metadata.generation ?? 0;
  const list = new ConditionList(cluster.status?.conditions as Condition[] | undefined, generation, now);
  const { set } = list;
  const q = quorum(want);
  set('Available', ready >= q ? 'True' : 'False', ready >= q ? 'QuorumReady' : 'NoQuorum', `${ready}/${want} members ready; quorum is ${q}`);
  const scaling = current !== want;
  const complete = !scaling && ready === want;
  set('Progressing', complete ? 'False' : 'True', complete ? 'Complete' : scaling ? (current < want ? 'ScalingUp' : 'ScalingDown') : 'WaitingForMembers',
    complete ? `all ${want} members ready` : `${current} members, ${ready} ready, ${want} requested`);
  if (applyError) set('Degraded', 'True', 'InvalidResources', applyError.slice(0, 1024));
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

export function setupEtcdClusterController(mgr: Manager, options: ControllerSetupOptions): Controller {
  const clusters = mgr.informer<Cluster>(etcdType);
  const pods = mgr.informer(BuiltinTypes.Pod);
  const controller = new Controller({
    ...options,
    name: etcdClusterController.name,
    reconciler: (req, ctx) => reconcileEtcdCluster(req, ctx, clusters, children, pods, failures),
  });
  controller.for(clusters);
  const children = ownChildren(mgr, controller, etcdType, CHILD_TYPES);
  const failures = ChildFailures.watch(mgr, controller, involved => {
    const owner = etcdClusterOfChild(involved);
    return owner ? { namespace: involved.namespace, name: owner } : undefined;
  });
  controller.watches(pods, pod => {
    const l = pod.metadata.labels ?? {};
    return l['app.kubernetes.io/name'] === 'etcd' && l['app.kubernetes.io/component'] === 'member' && l['app.kubernetes.io/instance']
      ? [{ namespace: pod.metadata.namespace, name: l['app.kubernetes.io/instance'] }]
      : [];
  });
  return controller;
}

/** The EtcdCluster a StatefulSet (named after it) or member claim (`data-<name>-<ordinal>`) belongs to. */
export function etcdClusterOfChild(involved: InvolvedObject): string | undefined {
  if (involved.kind === 'StatefulSet') return involved.name;
  if (involved.kind === 'PersistentVolumeClaim') return /^data-(.+)-\d+$/.exec(involved.name ?? '')?.[1];
  return undefined;
}

async function reconcileEtcdCluster(req: Request, ctx: ReconcileContext, clusters: Informer<Cluster>, children: OwnedChildren, pods: Informer, failures: ChildFailures): Promise<Result | void> {
  const cluster = clusters.get(objectKey(req));
  // Deleted: owner references let the garbage collector remove the children. PVCs carry none
  // and stay: member data is the user's.
  if (!cluster || cluster.metadata.deletionTimestamp) return;

  const stsBefore = children.informers.StatefulSet.get(objectKey(req)) as StatefulSet | undefined;
  let sts = stsBefore;
  const applyError = await rejectionOf(ctx, cluster, 'InvalidResources', async () => {
    // Events here speak of the cluster (Created, Scaled), not of each child.
    const applied = await applyChildren(ctx, cluster, desiredEtcdChildren(cluster), children);
    sts = applied.get(`StatefulSet/${cluster.metadata.name}`) as StatefulSet;
  });

  const want = cluster.spec.replicas;
  const before = stsBefore?.spec?.replicas;
  if (!applyError && before !== want) {
    if (before === undefined) await ctx.recorder.record(cluster, 'Normal', 'Created', `Created etcd cluster ${cluster.metadata.name} with ${want} members`);
    else await ctx.recorder.record(cluster, 'Normal', 'Scaled', `Scaled etcd cluster ${cluster.metadata.name} from ${before} to ${want} members; data volumes are kept`);
    if (want % 2 === 0) await ctx.recorder.record(cluster, 'Warning', 'EvenMemberCount', `${want} members tolerate no more failures than ${want - 1}; prefer an odd number`);
  }

  const members = livePodNames(pods, cluster.metadata.namespace, etcdSelectorLabels(cluster.metadata.name));
  const failure = failures.find(cluster.metadata.namespace, involved => etcdClusterOfChild(involved) === cluster.metadata.name);
  const status = desiredEtcdStatus(cluster, sts, members, applyError, failure);
  await recordDegradedOnce(ctx, cluster, status.conditions, failure);
  await applyStatusIfChanged(ctx.client, etcdType, cluster, status);
}
