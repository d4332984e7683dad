import { BuiltinTypes, type Deployment, type Ingress, type KubeObject, type Problem } from '../contract';
import type { ControllerDeclaration } from '../core/controller-declaration';
import { DEFAULT_IMAGE } from '../core/kit-image';
import { ConditionList } from '../contract/conditions';
import { compareText } from '../contract/compare';
import { podInstance, replicaFailure } from '../core/pods';
import type { Application, WebApp, WebStatus } from './api';
import { applicationKind, webAppKind } from './api';
import { applicationModel, WebWorkload, webAppModel, type WebWorkloadModel, workloadUrl } from './web-workload';

/** What the status of an Application or WebApp is made from. */
export interface WebStatusInput {
  readonly deployment?: Deployment;
  /** The API server's refusal of a child. */
  readonly applyError?: string;
  /** A pod whose container cannot run (image pull, crash loop). */
  readonly podFailure?: Problem;
  /** Another, older Ingress already routes this host and path. */
  readonly hostConflict?: string;
  /** Stamps conditions whose status changes. @default the current time */
  readonly now?: Date;
}

/**
 * Whether an older Ingress (not this resource's) already routes the host and path this workload
 * asks for: then Ingress controllers keep routing it there, and this one's route is dead. The
 * oldest claim wins (creation time, then namespace/name), as the common Ingress controllers do;
 * an Ingress not made yet is the youngest. Pure.
 */
export function ingressHostConflict(
  model: WebWorkloadModel,
  ownerUid: string | undefined,
  ours: KubeObject | undefined,
  ingresses: readonly Ingress[],
): string | undefined {
  const wanted = model.ingress;
  if (!wanted) return undefined;
  const age = (o: KubeObject | undefined) =>
    `${o?.metadata.creationTimestamp ?? '~'}\u0000${o?.metadata.namespace ?? ''}/${o?.metadata.name ?? ''}`;
  const claims = [...ingresses]
    .filter((i) => !i.metadata.ownerReferences?.some((r) => r.controller && r.uid === ownerUid))
    .filter((i) => !(i.metadata.namespace === model.namespace && i.metadata.name === model.name))
    .filter((i) =>
      i.spec?.rules?.some(
        (r) => r.host === wanted.host && (r.http?.paths ?? []).some((p) => (p.path ?? '/') === wanted.path),
      ),
    )
    .filter((i) => compareText(age(i), age(ours)) < 0)
    .sort((a, b) => compareText(age(a), age(b)));
  const first = claims[0];
  return first
    ? `host ${wanted.host} path ${wanted.path} is already routed by Ingress ${first.metadata.namespace}/${first.metadata.name}, which is older; choose another host or path`
    : undefined;
}

/** `Available` (any pod available; a Deployment scaled to 0 is available once it exists) and `Progressing`. */
function setWebProgress(list: ConditionList, wanted: number, deployment: Deployment | undefined): void {
  const available = deployment?.status?.availableReplicas ?? 0;
  const current = deployment?.status?.replicas ?? 0;
  const isAvailable = wanted === 0 ? !!deployment : available > 0;
  list.set(
    'Available',
    isAvailable ? 'True' : 'False',
    isAvailable ? 'PodsAvailable' : 'NoPodsAvailable',
    `${available}/${wanted} pods available`,
  );
  const done = current === wanted && available === wanted;
  list.set(
    'Progressing',
    done ? 'False' : 'True',
    done ? 'Complete' : 'WaitingForPods',
    `${available}/${wanted} pods available, ${current} exist`,
  );
}

/** Status shared by both kinds. Pure. */
export function desiredWebStatus(obj: Application | WebApp, model: WebWorkloadModel, input: WebStatusInput): WebStatus {
  const { deployment, applyError, podFailure, hostConflict } = input;
  const generation = obj.metadata.generation ?? 0;
  const available = deployment?.status?.availableReplicas ?? 0;
  const current = deployment?.status?.replicas ?? 0;
  const list = new ConditionList(obj.status?.conditions, generation, input.now ?? new Date());
  const wanted = model.replicas;
  setWebProgress(list, wanted, deployment);
  list.degraded(
    [
      applyError !== undefined && { reason: 'InvalidChildren', message: applyError },
      replicaFailure(deployment, ''),
      // A failing pod matters while the workload is short of available pods, or while pods exist
      // that are not available (a rollout whose new pods fail, the old ones still serving).
      (available < wanted || current > available) && podFailure,
      hostConflict !== undefined && { reason: 'HostConflict', message: hostConflict },
    ],
    'the Deployment, Service and Ingress match the spec',
  );
  return {
    replicas: current,
    availableReplicas: available,
    url: workloadUrl(model),
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/**
 * One declaration for both web kinds: each maps its spec onto the one model, which one construct
 * renders (Deployment, Service, optional Ingress) — two spellings of the same thing that cannot
 * drift apart. An Ingress the spec stops asking for is pruned.
 */
function webController<R extends Application | WebApp>(
  name: string,
  kind: ControllerDeclaration['for'],
  toModel: (r: R) => WebWorkloadModel,
  hostField: string,
): ControllerDeclaration<R> {
  return {
    name,
    for: kind,
    image: DEFAULT_IMAGE,
    owns: [BuiltinTypes.Deployment, BuiltinTypes.Service, BuiltinTypes.Ingress],
    deletes: [BuiltinTypes.Ingress],
    // Pods, to report those that cannot run; every Ingress, to find a host another one routes.
    reads: [BuiltinTypes.Pod, BuiltinTypes.Ingress],
    render: (scope, r, { owner }) => new WebWorkload(scope, 'web', { model: toModel(r), owner }),
    status: (r, observed) => {
      const model = toModel(r);
      const hostConflict = ingressHostConflict(
        model,
        r.metadata.uid,
        observed.children.of(BuiltinTypes.Ingress, model.name),
        observed.read(BuiltinTypes.Ingress, undefined, { allNamespaces: true }),
      );
      return desiredWebStatus(r, model, {
        deployment: observed.children.of(BuiltinTypes.Deployment, model.name),
        applyError: observed.applyError,
        // A pod of its Deployment that cannot run, or a failed child: the children's health.
        podFailure: observed.health.failure,
        hostConflict,
        now: observed.now,
      });
    },
    mapReads: { Pod: podInstance([name], 'web') },
    // A host and path another Ingress already routes is refused at the door, naming the field,
    // rather than found at run time (two resources made at once can still both pass: the
    // status then says HostConflict). An update that keeps its host and path is not checked
    // again, so a resource in conflict can still be changed.
    validate: (r, context) => {
      const model = toModel(r);
      const wanted = model.ingress;
      if (!wanted) return [];
      if (context.old) {
        const before = toModel(context.old).ingress;
        if (before?.host === wanted.host && before.path === wanted.path) return [];
      }
      const conflict = ingressHostConflict(
        model,
        r.metadata.uid,
        context.children.of(BuiltinTypes.Ingress, model.name),
        context.read(BuiltinTypes.Ingress, undefined, { allNamespaces: true }),
      );
      return conflict ? [{ field: hostField, message: `Invalid value: "${wanted.host}": ${conflict}` }] : [];
    },
  };
}

/** The application controller (seed 002's Application). */
export const applicationController = webController<Application>(
  'application',
  applicationKind,
  applicationModel,
  'spec.ingress.host',
);

/** The webapp controller (seed 001's WebApp): the same reconcile path as application. */
export const webAppController = webController<WebApp>('webapp', webAppKind, webAppModel, 'spec.domain');
