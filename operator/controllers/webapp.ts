import { BuiltinTypes, ControllerDeclaration, customResourceType } from '../../constructs/core/controller';
import { applicationController, webAppController } from '../../constructs/webapp/controller';
import { applicationModel, WebWorkload, webAppModel, WebWorkloadModel, workloadUrl } from '../../constructs/webapp/web-workload';
import { applyChildren, applyStatusIfChanged, controllerReference, OwnedChildren, ownChildren, rejectionOf } from '../runtime/children';
import { isNotFound } from '../runtime/client';
import { Condition, ConditionList } from '../runtime/conditions';
import { Controller, ReconcileContext, Request, Result } from '../runtime/controller';
import { Informer } from '../runtime/informer';
import { Manager } from '../runtime/manager';
import { renderConstructs } from '../runtime/render';
import { controllerOf, KubeObject, objectKey, ResourceType } from '../runtime/resource';
import type { ControllerSetupOptions } from './registry';

interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas?: number; availableReplicas?: number; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

type WebObject = KubeObject & { spec: any; status?: { conditions?: Condition[] } };

const CHILD_TYPES: Record<string, ResourceType> = {
  Deployment: BuiltinTypes.Deployment,
  Service: BuiltinTypes.Service,
  Ingress: BuiltinTypes.Ingress,
};

/** The children of a web workload, owned by `owner`. */
export function desiredWebChildren(model: WebWorkloadModel, owner: KubeObject, ownerType: ResourceType): KubeObject[] {
  return renderConstructs(scope => new WebWorkload(scope, 'web', { model, owner: controllerReference(owner, ownerType) }));
}

/** Status shared by both kinds. Pure; `now` only stamps conditions that change. */
export function desiredWebStatus(obj: WebObject, model: WebWorkloadModel, deployment: Deployment | undefined, applyError: string | undefined, now = new Date()) {
  const generation = obj.metadata.generation ?? 0;
  const available = deployment?.status?.availableReplicas ?? 0;
  const current = deployment?.status?.replicas ?? 0;
  const list = new ConditionList(obj.status?.conditions as Condition[] | undefined, generation, now);
  const { set } = list;
  const wanted = model.replicas;
  const isAvailable = wanted === 0 ? !!deployment : available > 0;
  set('Available', isAvailable ? 'True' : 'False', isAvailable ? 'PodsAvailable' : 'NoPodsAvailable', `${available}/${wanted} pods available`);
  const done = current === wanted && available === wanted;
  set('Progressing', done ? 'False' : 'True', done ? 'Complete' : 'WaitingForPods', `${available}/${wanted} pods available, ${current} exist`);
  const failure = deployment?.status?.conditions?.find(c => c.type === 'ReplicaFailure' && c.status === 'True');
  if (applyError) set('Degraded', 'True', 'InvalidChildren', applyError.slice(0, 1024));
  else if (failure) set('Degraded', 'True', failure.reason ?? 'ReplicaFailure', (failure.message ?? '').slice(0, 1024));
  else set('Degraded', 'False', 'AsExpected', 'the Deployment, Service and Ingress match the spec');
  return { replicas: current, availableReplicas: available, url: workloadUrl(model), observedGeneration: generation, conditions: list.conditions };
}

function setup(declaration: ControllerDeclaration, toModel: (o: any) => WebWorkloadModel) {
  return (mgr: Manager, options: ControllerSetupOptions): Controller => {
    const type = customResourceType(declaration.for);
    const objects = mgr.informer<WebObject>(type);
    const controller = new Controller({
      ...options,
      name: declaration.name,
      reconciler: (req, ctx) => reconcileWeb(req, ctx, type, toModel, objects, children),
    });
    controller.for(objects);
    const children = ownChildren(mgr, controller, type, CHILD_TYPES);
    return controller;
  };
}

export const setupApplicationController = setup(applicationController, applicationModel);
export const setupWebAppController = setup(webAppController, webAppModel);

async function reconcileWeb(
  req: Request, ctx: ReconcileContext, type: ResourceType, toModel: (o: WebObject) => WebWorkloadModel,
  objects: Informer<WebObject>, children: OwnedChildren,
): Promise<Result | void> {
  const obj = objects.get(objectKey(req));
  if (!obj || obj.metadata.deletionTimestamp) return;
  const model = toModel(obj);
  const desired = desiredWebChildren(model, obj, type);
  let deployment = children.informers.Deployment.get(objectKey(req)) as Deployment | undefined;
  const applyError = await rejectionOf(ctx, obj, 'InvalidChildren', async () => {
    const applied = await applyChildren(ctx, obj, desired, children, { events: true });
    deployment = applied.get(`Deployment/${model.name}`) as Deployment;
    // No Ingress wanted: remove ours, if there is one (and only if it is ours).
    const ingress = children.informers.Ingress.get(objectKey(req));
    if (!model.ingress && ingress && controllerOf(ingress)?.uid === obj.metadata.uid) {
      try {
        await ctx.client.delete(BuiltinTypes.Ingress, ingress.metadata.name!, ingress.metadata.namespace);
        await ctx.recorder.record(obj, 'Normal', 'Deleted', `Deleted Ingress ${ingress.metadata.name}: the spec no longer asks for one`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  });
  await applyStatusIfChanged(ctx.client, type, obj, desiredWebStatus(obj, model, deployment, applyError));
}
