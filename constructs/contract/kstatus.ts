/**
 * The conditions the ecosystem waits with, for every kind: kstatus (sigs.k8s.io/cli-utils), which
 * Helm 4's `--wait`, Flux's health checks, kpt and Config Sync judge a custom resource by, reads
 * only `Reconciling` (InProgress), `Stalled` (Failed) and `status.observedGeneration`; `kubectl
 * wait --for=condition=Ready`, Crossplane and Flux users read `Ready`. The runtime derives all
 * three from the kind's own `Available`, `Progressing` and `Degraded`, so no kind writes them.
 */
import { type Condition, ConditionList, findCondition } from './conditions';

/**
 * `Degraded` reasons that waiting may cure without a change of spec (the cluster makes room, a
 * node or a volume comes): reported as `Reconciling`, not `Stalled`. Every other `Degraded=True`
 * (a refused or foreign child, a container that cannot run, a failed Job, a terminal error) is
 * `Stalled`: it takes a person.
 */
export const TRANSIENT_DEGRADED_REASONS: ReadonlySet<string> = new Set([
  'PodUnschedulable',
  'FailedCreate',
  'ProvisioningFailed',
  'ClaimPending',
]);

/** The condition types the runtime owns on every kind. */
export const SUMMARY_CONDITIONS = ['Ready', 'Reconciling', 'Stalled'] as const;

/** What stands between a resource and ready, by the kind's own conditions. */
interface Standing {
  /** `Degraded=True` for a reason waiting will not fix. */
  readonly stalled?: Condition;
  /** What is still on its way, when nothing is stalled. */
  readonly reconciling?: Condition;
}

function standingOf(conditions: readonly Condition[]): Standing {
  const available = findCondition(conditions, 'Available');
  const progressing = findCondition(conditions, 'Progressing');
  const degraded = findCondition(conditions, 'Degraded');
  const broken = degraded?.status === 'True' ? degraded : undefined;
  if (broken && !TRANSIENT_DEGRADED_REASONS.has(broken.reason)) return { stalled: broken };
  return { reconciling: broken ?? moving(progressing, available) };
}

/** `Progressing=True`; for a kind without Progressing, `Available` not True. */
function moving(progressing: Condition | undefined, available: Condition | undefined): Condition | undefined {
  if (progressing) return progressing.status === 'True' ? progressing : undefined;
  return available?.status === 'True' ? undefined : available;
}

/**
 * `Ready`, `Reconciling` and `Stalled` from `Available`, `Progressing` and `Degraded`:
 * - `Stalled=True` when `Degraded=True` for a reason waiting will not fix (its reason and message);
 * - else `Reconciling=True` while `Progressing=True` (or, for a kind without it, `Available` is
 *   not True), or `Degraded=True` for a reason that may pass;
 * - `Ready=True` when neither is True: the resource is as its spec asks, as kstatus's `Current`.
 * Conditions without any of the three are returned as they are. Pure.
 */
export function withSummaryConditions(conditions: readonly Condition[], generation: number, now: Date): Condition[] {
  if (!['Available', 'Progressing', 'Degraded'].some((type) => findCondition(conditions, type))) return [...conditions];
  const { stalled, reconciling } = standingOf(conditions);
  const list = new ConditionList(conditions, generation, now);
  if (stalled) list.set('Stalled', 'True', stalled.reason, stalled.message);
  else list.set('Stalled', 'False', 'AsExpected', 'nothing stands in the way');
  if (reconciling) list.set('Reconciling', 'True', reconciling.reason, reconciling.message);
  else list.set('Reconciling', 'False', 'Reconciled', 'nothing left to do');
  const blocker = stalled ?? reconciling;
  if (blocker) list.set('Ready', 'False', blocker.reason, blocker.message);
  else list.set('Ready', 'True', 'Ready', findCondition(conditions, 'Available')?.message ?? 'as its spec asks');
  return list.conditions;
}
