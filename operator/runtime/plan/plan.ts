/**
 * A reconcile's plan: every write it would make, as typed actions, each with the reason it is
 * there. planner.ts makes it from what is observed and rendered, writing nothing; executor.ts
 * runs it through the one gate (stop signal and leadership before each write, the API server's
 * dry run over the whole change first, all or nothing, every write recorded), in this order:
 *
 *   children, in the order rendered (a child after what it waits for):
 *     ApplyChild                      create or update one child (server-side apply)
 *     GrowClaim… then                 a StatefulSet's claims patched to the size its templates ask,
 *       RecreateStatefulSet | ApplyChild   then it is deleted with its pods kept (to be made again
 *                                          with the new templates) or applied as any other child
 *   PruneChild                        an owned child of a deletable kind no longer rendered
 *   DeleteStuckPod                    a pod an unchanged StatefulSet's rollout is stuck behind
 *   LabelPod                          a pod whose labels the kind's external step asks to change
 *   DeleteClaim… then RestartPod      a pod the kind's external step asks to start again, after
 *                                     the claims it asks to discard with it
 *
 * The status write comes after, from what the plan's execution did (status-pacing.ts).
 */
import type {
  ChildHealth,
  ClaimSizeChange,
  KubeObject,
  PersistentVolumeClaim,
  Pod,
  ResourceType,
  StatefulSet,
  TerminalError,
} from '../../../constructs/contract';
import type { PlannedChild } from './planned-child';

/** Creates or updates one desired child. */
export interface ApplyChild {
  readonly type: 'ApplyChild';
  /** The child, `Kind/name`. */
  readonly key: string;
  readonly child: PlannedChild;
  readonly reason: string;
}

/** Patches one claim of a StatefulSet to the size its claim template now asks. */
export interface GrowClaim {
  readonly type: 'GrowClaim';
  /** The StatefulSet, `Kind/name`. */
  readonly key: string;
  readonly claim: PersistentVolumeClaim;
  readonly size: string;
  readonly reason: string;
}

/** Deletes a StatefulSet with its pods kept (`Orphan`), to be made again with larger claim templates. */
export interface RecreateStatefulSet {
  readonly type: 'RecreateStatefulSet';
  readonly key: string;
  /** The StatefulSet as it is: deleted by its uid. */
  readonly current: KubeObject;
  readonly grown: readonly ClaimSizeChange[];
  readonly reason: string;
}

/** Deletes an owned child no longer rendered, by its uid. */
export interface PruneChild {
  readonly type: 'PruneChild';
  readonly key: string;
  readonly owned: ResourceType;
  readonly object: KubeObject;
  readonly reason: string;
}

/** Deletes, by its uid, a pod of an older revision that a StatefulSet's rollout waits on and that cannot run. */
export interface DeleteStuckPod {
  readonly type: 'DeleteStuckPod';
  /** The StatefulSet, `Kind/name`. */
  readonly key: string;
  readonly pod: Pod;
  readonly statefulSet: StatefulSet;
  readonly revision: string;
  readonly reason: string;
}

/**
 * Deletes, by its uid, a pod of one of the resource's own StatefulSets that the kind's external
 * step asks to start again (`ExternalStep.restartPods`): its StatefulSet makes it again — with
 * new, empty claims where it asks for some to be discarded, deleted just before it.
 */
export interface RestartPod {
  readonly type: 'RestartPod';
  /** The pod, `Pod/name`. */
  readonly key: string;
  readonly pod: Pod;
  readonly reason: string;
  /** Its claims to delete first (`PodRestart.discardClaims`), each checked to be its own. */
  readonly discard: readonly DeleteClaim[];
}

/**
 * Deletes, by its uid, a claim a restarted pod mounts and its StatefulSet made from a claim
 * template, which the kind's external step asks to discard (`PodRestart.discardClaims`): its
 * StatefulSet makes it again, empty, for the pod made again.
 */
export interface DeleteClaim {
  readonly type: 'DeleteClaim';
  /** The claim, `PersistentVolumeClaim/name`. */
  readonly key: string;
  readonly claim: PersistentVolumeClaim;
  /** The pod it is discarded with. */
  readonly pod: string;
  readonly reason: string;
}

/**
 * Sets labels on a pod of one of the resource's own StatefulSets that the kind's external step
 * asks for (`ExternalStep.labelPods`): a JSON patch that holds only while the pod has its uid.
 */
export interface LabelPod {
  readonly type: 'LabelPod';
  /** The pod, `Pod/name`. */
  readonly key: string;
  readonly pod: Pod;
  /** The labels that change (null: taken off). */
  readonly labels: Readonly<Record<string, string | null>>;
  readonly reason: string;
}

/** One write of a plan. */
export type PlannedAction =
  ApplyChild | GrowClaim | RecreateStatefulSet | PruneChild | LabelPod | DeleteStuckPod | DeleteClaim | RestartPod;

/** The kinds of write a plan has, for metrics and previews. */
export type ActionType = PlannedAction['type'];

/** What the plan does about a child it does not write, decided before asking the API server. */
export type Decided =
  | { readonly held: ChildHealth; readonly refused?: undefined }
  | { readonly refused: TerminalError; readonly held?: undefined; readonly recheckAfterMs?: number };

/** One desired child's part of the plan. */
export interface ChildPlan {
  /** `Kind/name`. */
  readonly key: string;
  readonly child: PlannedChild;
  /** Its writes, in order; none when it is as rendered (or `decided`). */
  readonly actions: readonly (ApplyChild | GrowClaim | RecreateStatefulSet)[];
  /** Why it has no writes: held (a StatefulSet being deleted) or refused up front (a shrink, a class that cannot expand). */
  readonly decided?: Decided;
  /**
   * For a StatefulSet whose claims grow: the rest of its change, with claim templates asking what
   * they ask now — what the gate dry-runs, since the API server refuses a template change in place.
   */
  readonly restOfChange?: KubeObject;
}

/** A reconcile's plan: each child's part, then the prunes, then the pods labelled, the stuck pods and the pods to restart. */
export interface ReconcilePlan {
  readonly children: readonly ChildPlan[];
  readonly prune: readonly PruneChild[];
  readonly labelPods: readonly LabelPod[];
  readonly stuckPods: readonly DeleteStuckPod[];
  readonly restartPods: readonly RestartPod[];
}

/** Every action of a plan, in the order the executor takes them. */
export function planActions(plan: ReconcilePlan): PlannedAction[] {
  return [...plan.children.flatMap((c) => c.actions), ...plan.prune, ...podActions(plan)];
}

/**
 * The plan's writes to pods (and the claims discarded with them), in the order the executor takes
 * them: made only when nothing of the plan was refused.
 */
export function podActions(plan: ReconcilePlan): (LabelPod | DeleteStuckPod | DeleteClaim | RestartPod)[] {
  return [...plan.labelPods, ...plan.stuckPods, ...plan.restartPods.flatMap((r) => [...r.discard, r])];
}

/** Whether a child's plan grows storage: claims patched, or the StatefulSet made again. */
export function growsStorage(child: ChildPlan): boolean {
  return child.actions.some((a) => a.type !== 'ApplyChild');
}

/** The object an action writes, `kind` and `name`: what the executor records and a preview shows. */
export function actionObject(a: PlannedAction): { kind: string; name: string } {
  switch (a.type) {
    case 'ApplyChild':
      return { kind: a.child.owned.type.kind, name: a.child.desired.metadata.name ?? '' };
    case 'GrowClaim':
    case 'DeleteClaim':
      return { kind: 'PersistentVolumeClaim', name: a.claim.metadata.name ?? '' };
    case 'RecreateStatefulSet':
      return { kind: 'StatefulSet', name: a.current.metadata.name ?? '' };
    case 'PruneChild':
      return { kind: a.owned.kind, name: a.object.metadata.name ?? '' };
    case 'LabelPod':
    case 'DeleteStuckPod':
    case 'RestartPod':
      return { kind: 'Pod', name: a.pod.metadata.name ?? '' };
  }
}

/** What an action writes and why, as the reconcile's writes record it (and a preview lists it). */
export function describedWrite(a: PlannedAction): ExecutedWrite {
  return { type: a.type, ...actionObject(a), reason: a.reason };
}

/** One write the executor made: what and why, as the reconcile's writes record it. */
export interface ExecutedWrite {
  readonly type: ActionType;
  readonly kind: string;
  readonly name: string;
  readonly reason: string;
}
