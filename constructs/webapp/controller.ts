import { BuiltinTypes, ControllerDeclaration, ObjectLike, ResourceLike } from '../core/controller';
import type { Condition } from '../core/conditions';
import { ConditionList } from '../core/conditions';
import type { Application, WebApp } from './api';
import { applicationKind, webAppKind } from './api';
import { applicationModel, WebWorkload, webAppModel, WebWorkloadModel, workloadUrl } from './web-workload';

interface Deployment extends ObjectLike {
  spec?: { replicas?: number };
  status?: { replicas?: number; availableReplicas?: number; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

type WebObject = ResourceLike<unknown, { conditions?: Condition[] }>;

/** Status shared by both kinds. Pure; `now` only stamps conditions that change. */
export function desiredWebStatus(obj: WebObject, model: WebWorkloadModel, deployment: Deployment | undefined, applyError: string | undefined, now = new Date()) {
  const generation = obj.metadata.generation ?? 0;
  const available = deployment?.status?.availableReplicas ?? 0;
  const current = deployment?.status?.replicas ?? 0;
  const list = new ConditionList(obj.status?.conditions, generation, now);
  const { set } = list;
  const wanted = model.replicas;
  const isAvailable = wanted === 0 ? !!deployment : available > 0;
  set('Available', isAvailable ? 'True' : 'False', isAvailable ? 'PodsAvailable' : 'NoPodsAvailable', `${available}/${wanted} pods available`);
  const done = current === wanted && available === wanted;
  set('Progressing', done ? 'False' : 'True', done ? 'Complete' : 'WaitingForPods', `${available}/${wanted} pods available, ${current} exist`);
  const failure = deployment?.status?.conditions?.find(c => c.type === 'ReplicaFailure' && c.status === 'True');
  if (applyError) set('Degraded', 'True', 'InvalidChildren', applyError);
  else if (failure) set('Degraded', 'True', failure.reason ?? 'ReplicaFailure', (failure.message ?? '').slice(0, 1024));
  else set('Degraded', 'False', 'AsExpected', 'the Deployment, Service and Ingress match the spec');
  return { replicas: current, availableReplicas: available, url: workloadUrl(model), observedGeneration: generation, conditions: list.conditions };
}

/**
 * One declaration for both web kinds: each maps its spec onto the one model, which one construct
 * renders (Deployment, Service, optional Ingress) — two spellings of the same thing that cannot
 * drift apart. An Ingress the spec stops asking for is pruned.
 */
function webController<R extends Application | WebApp>(name: string, kind: ControllerDeclaration['for'], toModel: (r: R) => WebWorkloadModel): ControllerDeclaration<R> {
  return {
    name,
    for: kind,
    owns: [BuiltinTypes.Deployment, BuiltinTypes.Service, BuiltinTypes.Ingress],
    deletes: [BuiltinTypes.Ingress],
    render: (scope, r, { owner }) => new WebWorkload(scope, 'web', { model: toModel(r), owner }),
    status: (r, observed) => {
      const model = toModel(r);
      return desiredWebStatus(r, model, observed.children.get(`Deployment/${model.name}`) as Deployment | undefined, observed.applyError, observed.now);
    },
  };
}

/** The application controller (seed 002's Application). */
export const applicationController = webController<Application>('application', applicationKind, applicationModel);

/** The webapp controller (seed 001's WebApp): the same reconcile path as application. */
export const webAppController = webController<WebApp>('webapp', webAppKind, webAppModel);
