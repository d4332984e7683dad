import { BuiltinTypes, type Deployment, type EventSpec, type Observed, type Problem } from '../contract';
import type { ControllerDeclaration } from '../core/controller-declaration';
import { DEFAULT_IMAGE } from '../core/kit-image';
import { ConditionList } from '../contract/conditions';
import { livePodNames, podFailure, podInstance } from '../core/pods';
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

/** The status a Memcached should show, from its Deployment and its pods. Pure. */
export function desiredStatus(mc: Memcached, input: MemcachedStatusInput): MemcachedStatus {
  const { deployment, podNames, applyError, podFailed } = input;
  const now = input.now ?? new Date();
  const size = mc.spec.size;
  const ready = deployment?.status?.readyReplicas ?? 0;
  const current = deployment?.status?.replicas ?? 0;
  const updated = deployment?.status?.updatedReplicas ?? 0;
  const generation = mc.metadata.generation ?? 0;
  const rolledOut =
    !!deployment && (deployment.status?.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0);
  const replicaFailure = deployment?.status?.conditions?.find(
    (c) => c.type === 'ReplicaFailure' && c.status === 'True',
  );
  const list = new ConditionList(mc.status?.conditions, generation, now);
  const { set } = list;

  set(
    'Available',
    ready > 0 ? 'True' : 'False',
    ready > 0 ? 'PodsReady' : 'NoPodsReady',
    `${ready}/${size} pods ready`,
  );
  const complete = rolledOut && ready === size && current === size && updated === size;
  if (complete) set('Progressing', 'False', 'Complete', `all ${size} pods are updated and ready`);
  else if (current > size) set('Progressing', 'True', 'ScalingDown', `scaling down from ${current} to ${size} pods`);
  else if (current < size) set('Progressing', 'True', 'ScalingUp', `scaling up from ${current} to ${size} pods`);
  else set('Progressing', 'True', 'WaitingForPods', `${ready}/${size} pods ready, ${updated} updated`);
  list.degraded(
    [
      applyError !== undefined && { reason: 'InvalidDeployment', message: applyError },
      replicaFailure && {
        reason: replicaFailure.reason ?? 'ReplicaFailure',
        message: (replicaFailure.message ?? 'pods cannot be created').slice(0, 1024),
      },
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
      podFailed: podFailure(pods),
      now: observed.now,
    });
  },
  events: memcachedEvents,
  // Pods are not owned by the Memcached (Deployment → ReplicaSet → Pod): their instance label
  // says which one they belong to, so status.nodes follows pods coming and going.
  mapReads: { Pod: podInstance(['memcached'], 'cache') },
};
