import { BuiltinTypes, customResourceType } from '../../constructs/core/controller';
import type { Memcached, MemcachedStatus } from '../../constructs/memcached/api';
import { memcachedController } from '../../constructs/memcached/controller';
import { MemcachedDeployment, memcachedSelectorLabels } from '../../constructs/memcached/memcached-deployment';
import { Condition, ConditionList } from '../runtime/conditions';
import { Controller, ReconcileContext, Request, Result } from '../runtime/controller';
import { applyIfChanged, applyStatusIfChanged, controllerReference, livePodNames, podFailure, recordDegradedOnce, rejectionOf } from '../runtime/children';
import { Informer } from '../runtime/informer';
import { Manager } from '../runtime/manager';
import { renderConstructs } from '../runtime/render';
import { apiVersionOf, KubeObject, objectKey } from '../runtime/resource';
import type { ControllerSetupOptions } from './registry';

interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

const memcachedType = customResourceType(memcachedController.for);

/** The Deployment a Memcached should have, as a plain object ready for server-side apply. */
export function desiredDeployment(mc: Memcached): KubeObject {
  const [deployment] = renderConstructs(scope => new MemcachedDeployment(scope, 'memcached', {
    name: mc.metadata.name,
    namespace: mc.metadata.namespace,
    // The API server applies the CRD's defaults (image, containerPort) on every read.
    spec: mc.spec,
    owner: controllerReference(mc as Memcached & KubeObject, memcachedType),
  }));
  return deployment;
}

/**
 * The status a Memcached should show, from its Deployment and its pods. Pure, so it is unit
 * tested without a cluster; `now` only stamps conditions whose status changes.
 */
export function desiredStatus(mc: Memcached, deployment: Deployment | undefined, podNames: string[], applyError: string | undefined, now = new Date(), podFailed?: { reason: string; message: string }): MemcachedStatus {
  const size = mc.spec.size;
  const ready = deployment?.status?.readyReplicas ?? 0;
  const current = deployment?.status?.replicas ?? 0;
  const updated = deployment?.status?.updatedReplicas ?? 0;
  const generation = mc.metadata.generation ?? 0;
  const rolledOut = !!deployment && (deployment.status?.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0);
  const replicaFailure = deployment?.status?.conditions?.find(c => c.type === 'ReplicaFailure' && c.status === 'True');
  const list = new ConditionList(mc.status?.conditions as Condition[] | undefined, generation, now);
  const { set } = list;

  set('Available', ready > 0 ? 'True' : 'False', ready > 0 ? 'PodsReady' : 'NoPodsReady', `${ready}/${size} pods ready`);
  const complete = rolledOut && ready === size && current === size && updated === size;
  if (complete) set('Progressing', 'False', 'Complete', `all ${size} pods are updated and ready`);
  else if (current > size) set('Progressing', 'True', 'ScalingDown', `scaling down from ${current} to ${size} pods`);
  else if (current < size) set('Progressing', 'True', 'ScalingUp', `scaling up from ${current} to ${size} pods`);
  else set('Progressing', 'True', 'WaitingForPods', `${ready}/${size} pods ready, ${updated} updated`);
  if (applyError) set('Degraded', 'True', 'InvalidDeployment', applyError.slice(0, 1024));
  else if (replicaFailure) set('Degraded', 'True', replicaFailure.reason ?? 'ReplicaFailure', (replicaFailure.message ?? 'pods cannot be created').slice(0, 1024));
  // A failing pod matters while it leaves the Memcached short of ready pods; once replacements
  // are all ready, it is history.
  else if (podFailed && ready < size) set('Degraded', 'True', podFailed.reason, podFailed.message);
  else set('Degraded', 'False', 'AsExpected', 'the Deployment matches the spec');

  return {
    nodes: podNames,
    replicas: current,
    readyReplicas: ready,
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/** The memcached controller: Memcached → Deployment, status from Deployment and pods. */
export function setupMemcachedController(mgr: Manager, options: ControllerSetupOptions): Controller {
  const memcacheds = mgr.informer<Memcached & KubeObject>(memcachedType);
  const deployments = mgr.informer<Deployment>(BuiltinTypes.Deployment);
  const pods = mgr.informer(BuiltinTypes.Pod);

  const controller = new Controller({
    ...options,
    name: memcachedController.name,
    reconciler: (req, ctx) => reconcileMemcached(req, ctx, memcacheds, deployments, pods),
  });
  controller
    .for(memcacheds)
    .owns(deployments, { apiVersion: apiVersionOf(memcachedType), kind: memcachedType.kind })
    // Pods are not owned by the Memcached directly (Deployment → ReplicaSet → Pod): map them
    // back through their instance label, so status.nodes follows pods coming and going.
    .watches(pods, pod => {
      const labels = pod.metadata.labels ?? {};
      return labels['app.kubernetes.io/name'] === 'memcached' && labels['app.kubernetes.io/instance'] && labels['app.kubernetes.io/component'] === 'cache'
        ? [{ namespace: pod.metadata.namespace, name: labels['app.kubernetes.io/instance'] }]
        : [];
    });
  return controller;
}

async function reconcileMemcached(
  req: Request,
  ctx: ReconcileContext,
  memcacheds: Informer<Memcached & KubeObject>,
  deployments: Informer<Deployment>,
  pods: Informer,
): Promise<Result | void> {
  const mc = memcacheds.get(objectKey(req));
  // Gone: its Deployment carries an owner reference, so the garbage collector removes it.
  if (!mc || mc.metadata.deletionTimestamp) return;

  const desired = desiredDeployment(mc);
  let deployment = deployments.get(objectKey(req));
  const before = deployment?.spec?.replicas;
  const applyError = await rejectionOf(ctx, mc, 'InvalidDeployment', async () => {
    const result = await applyIfChanged(ctx.client, BuiltinTypes.Deployment, desired, deployment);
    deployment = result.object;
    if (!result.applied) return;
    const size = mc.spec.size;
    if (before === undefined) {
      ctx.logger.info({ replicas: size }, 'created Deployment');
      await ctx.recorder.record(mc, 'Normal', 'Created', `Created Deployment ${mc.metadata.name} with ${size} replicas`);
    } else if (before !== size) {
      ctx.logger.info({ from: before, to: size }, 'scaled Deployment');
      await ctx.recorder.record(mc, 'Normal', 'Scaled', `Scaled Deployment ${mc.metadata.name} from ${before} to ${size} replicas`);
    } else {
      ctx.logger.info('reverted changes to the Deployment');
      await ctx.recorder.record(mc, 'Normal', 'Updated', `Updated Deployment ${mc.metadata.name} to match the spec`);
    }
  });

  const selector = memcachedSelectorLabels(mc.metadata.name);
  const podNames = livePodNames(pods, mc.metadata.namespace, selector);
  const failed = podFailure(pods, mc.metadata.namespace, selector);
  const status = desiredStatus(mc, deployment, podNames, applyError, new Date(), failed);
  await recordDegradedOnce(ctx, mc, status.conditions, failed);
  await applyStatusIfChanged(ctx.client, memcachedType, mc, status);
}
