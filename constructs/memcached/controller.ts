import { BuiltinTypes, type Deployment, type EventSpec, type Observed, type Problem } from '../contract';
import type { ControllerDeclaration } from '../core/controller-declaration';
import { DEFAULT_IMAGE } from '../core/kit-image';
import { ConditionList } from '../contract/conditions';
import { livePodNames, podInstance, replicaFailure } from '../core/pods';
import type { Memcached, MemcachedStatus } from './api';
import { memcachedKind } from './api';
import { MemcachedDeployment, memcachedSelectorLabels } from './memcached-deployment';

/** What a Memcached's status is made from. */
export interface MemcachedStatusInput {
  readonly deployment?: Deployment;
  /** Names of the live pods. */
  readonly podNames: string[];
  /** The API server's refusal of the Deployment. */
  readonly applyError?: string;
  /** A pod whose container cannot run. */
  readonly podFailed?: Problem;
  /** Stamps conditions whose status changes. @default the current time */
  readonly now?: Date;
}

/** A Deployment's replica counts as its status reports them; all 0 before it exists. */
interface DeploymentCounts {
  readonly ready: number;
  readonly current: number;
  readonly updated: number;
  /** The Deployment controller has seen its latest spec. */
  readonly rolledOut: boolean;
}

function deploymentCounts(deployment: Deployment | undefined): DeploymentCounts {
  const status = deployment?.status ?? {};
  return {
    ready: status.readyReplicas ?? 0,
    current: status.replicas ?? 0,
    updated: status.updatedReplicas ?? 0,
    rolledOut: !!deployment && (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0),
  };
}

/** `Progressing`: Complete once every pod is updated and ready, else scaling or waiting. */
function setProgressing(list: ConditionList, size: number, c: DeploymentCounts): void {
  const complete = c.rolledOut && c.ready === size && c.current === size && c.updated === size;
  if (complete) list.set('Progressing', 'False', 'Complete', `all ${size} pods are updated and ready`);
  else if (c.current > size)
    list.set('Progressing', 'True', 'ScalingDown', `scaling down from ${c.current} to ${size} pods`);
  else if (c.current < size)
    list.set('Progressing', 'True', 'ScalingUp', `scaling up from ${c.current} to ${size} pods`);
  else list.set('Progressing', 'True', 'WaitingForPods', `${c.ready}/${size} pods ready, ${c.updated} updated`);
}

/** The status a Memcached should show, from its Deployment and its pods. Pure. */
export function desiredStatus(mc: Memcached, input: MemcachedStatusInput): MemcachedStatus {
  const { deployment, podNames, applyError, podFailed } = input;
  const size = mc.spec.size;
  const counts = deploymentCounts(deployment);
  const { ready, current } = counts;
  const generation = mc.metadata.generation ?? 0;
  const list = new ConditionList(mc.status?.conditions, generation, input.now ?? new Date());
  list.set(
    'Available',
    ready > 0 ? 'True' : 'False',
    ready > 0 ? 'PodsReady' : 'NoPodsReady',
    `${ready}/${size} pods ready`,
  );
  setProgressing(list, size, counts);
  list.degraded(
    [
      applyError !== undefined && { reason: 'InvalidDeployment', message: applyError },
      replicaFailure(deployment, 'pods cannot be created'),
      // A failing pod matters while it leaves the Memcached short of ready pods, or while pods
      // exist that are not ready (a rollout whose new pods fail, the old ones still serving);
      // once all pods are ready, it is history.
      (ready < size || current > ready) && podFailed,
    ],
    'the Deployment matches the spec',
  );

  return {
    nodes: podNames,
    replicas: current,
    readyReplicas: ready,
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/** What the Deployment's change means to a person: created, scaled, or put back to the spec. */
export function memcachedEvents(mc: Memcached, observed: Observed): EventSpec[] {
  const name = mc.metadata.name;
  const change = observed.changes.find((c) => c.kind === 'Deployment');
  if (!change) return [];
  const size = mc.spec.size;
  const before = observed.before.of(BuiltinTypes.Deployment, name)?.spec?.replicas;
  if (change.verb === 'Created')
    return [{ type: 'Normal', reason: 'Created', message: `Created Deployment ${name} with ${size} replicas` }];
  if (before !== undefined && before !== size)
    return [
      { type: 'Normal', reason: 'Scaled', message: `Scaled Deployment ${name} from ${before} to ${size} replicas` },
    ];
  return [{ type: 'Normal', reason: 'Updated', message: `Updated Deployment ${name} to match the spec` }];
}

/**
 * The Memcached controller: reconciles a Memcached into one Deployment, and reads Pods to list
 * their names in status. It needs no finalizer: its only child is owner-referenced and
 * garbage-collected.
 */
export const memcachedController: ControllerDeclaration<Memcached> = {
  name: 'memcached',
  image: DEFAULT_IMAGE,
  for: memcachedKind,
  owns: [BuiltinTypes.Deployment],
  reads: [BuiltinTypes.Pod],
  render: (scope, mc, { owner }) =>
    new MemcachedDeployment(scope, 'memcached', {
      name: mc.metadata.name,
      namespace: mc.metadata.namespace,
      // The API server applies the CRD's defaults (image, containerPort) on every read.
      spec: mc.spec,
      owner,
    }),
  status: (mc, observed) => {
    const pods = observed.read(BuiltinTypes.Pod, memcachedSelectorLabels(mc.metadata.name));
    return desiredStatus(mc, {
      deployment: observed.children.of(BuiltinTypes.Deployment, mc.metadata.name),
      podNames: livePodNames(pods),
      applyError: observed.applyError,
      // A pod of its Deployment that cannot run, or a failed child: the children's health.
      podFailed: observed.health.failure,
      now: observed.now,
    });
  },
  events: memcachedEvents,
  // Pods are not owned by the Memcached (Deployment → ReplicaSet → Pod): their instance label
  // says which one they belong to, so status.nodes follows pods coming and going.
  mapReads: { Pod: podInstance(['memcached'], 'cache') },
};
