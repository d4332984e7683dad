/**
 * A reconcile's plan: every write it would make as a typed action with its reason (plan.ts), made
 * from what is claimed and read (planned-child.ts, planner.ts: storage growth and stuck rollouts
 * planned in their modules) and asked of the API server by dry run (dry-run.ts) — writing
 * nothing. The reconciler executes it (reconcile/executor.ts); `diff` and `plan` preview it
 * (preview.ts), over listed objects in place of the caches. Light: nothing here loads the
 * controller, its logger or its metrics, so the command can load it.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export {
  actionObject,
  type ActionType,
  type ApplyChild,
  type ChildPlan,
  type Decided,
  type DeleteClaim,
  type DeleteStuckPod,
  type LabelPod,
  type RestartPod,
  describedWrite,
  type ExecutedWrite,
  type GrowClaim,
  growsStorage,
  type PlannedAction,
  planActions,
  podActions,
  type PruneChild,
  type ReconcilePlan,
  type RecreateStatefulSet,
} from './plan';
export {
  cachedChildren,
  cachedClaimsOf,
  type Claim,
  claimFrom,
  type ChildLookup,
  type NotOwned,
  type PlannedChild,
  type PlanReads,
  type PlanTarget,
  type Refusal,
} from './planned-child';
export { planReconcile, type PodsAsked } from './planner';
export { STORAGE_CLASS_RECHECK_MS } from './storage-growth';
export { stuckPods, type StuckPod } from './stuck-rollouts';
export { ChildRefusedUpFront, isChildRefusal, isRefusedWrite } from './refusals';
export {
  blockedMessage,
  changedTogether,
  type DryRunAnswer,
  dryRunChange,
  growClaim,
  refusalOf,
  upFront,
} from './dry-run';
export { listForPreview, previewPlan, type PreviewedPlan, type PreviewReads } from './preview';
export { type ExternalPreview, previewExternal } from './external-preview';
