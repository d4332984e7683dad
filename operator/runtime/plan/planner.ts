/**
 * The plan step of a reconcile: from the children claimed (each desired child with what the cache
 * holds under its name) it decides every write, as typed actions with their reasons (plan.ts) —
 * and writes nothing. What it reads: the cache (owned children, claims, pods) and, for a
 * StatefulSet whose claims would grow, their StorageClasses. Whether a child waits for another
 * not ready is decided again as the executor goes, against what it has written by then; whether
 * the API server takes the change is the gate's dry run (executor.ts).
 */
import { childKey, type ExternalStep } from '../../../constructs/contract';
import { needsApply } from '../client';
import type { PlannedChild, PlanReads, PlanTarget } from './planned-child';
import type { ApplyChild, ChildPlan, PruneChild, ReconcilePlan } from './plan';
import { planGrowth } from './storage-growth';
import { planStuckPods } from './stuck-rollouts';
import { planPodRestarts } from './pod-restarts';
import { planPodLabels } from './pod-labels';

/** What the external step asks of the resource's pods: labels, restarts. */
export type PodsAsked = Pick<ExternalStep, 'labelPods' | 'restartPods'>;

/**
 * The plan of one reconcile's writes, children in the order rendered; `asked`, what the external
 * step asks of the pods (labels, restarts).
 */
export async function planReconcile(
  parts: PlanReads,
  t: PlanTarget,
  planned: readonly PlannedChild[],
  asked: PodsAsked = {},
): Promise<ReconcilePlan> {
  const children: ChildPlan[] = [];
  for (const child of planned) children.push(await planChild(parts, t, child));
  return {
    children,
    prune: planPrune(parts, t, children),
    labelPods: planPodLabels(parts, children, asked.labelPods ?? []),
    stuckPods: planStuckPods(parts, children),
    restartPods: planPodRestarts(parts, children, asked.restartPods ?? []),
  };
}

/** One desired child's writes: its storage growth, an apply, or none (as rendered already). */
async function planChild(parts: Pick<PlanReads, 'claims'>, t: PlanTarget, child: PlannedChild): Promise<ChildPlan> {
  const key = childKey(child.owned.type.kind, child.desired.metadata.name ?? '');
  const growth = await planGrowth(parts, t, child);
  if (growth?.decided || growth?.actions.some((a) => a.type === 'RecreateStatefulSet'))
    return { key, child, ...growth };
  const apply = applyAction(t, key, child);
  return { key, child, actions: [...(growth?.actions ?? []), ...(apply ? [apply] : [])] };
}

/** The child's apply, or none when what our field manager owns of it is as rendered. */
function applyAction(t: PlanTarget, key: string, child: PlannedChild): ApplyChild | undefined {
  const { current } = child;
  if (current && !needsApply(child.desired, current, t.ctx.client.fieldManager)) return undefined;
  const reason = current ? 'its owned fields differ from what is rendered' : 'rendered, and it does not exist';
  return { type: 'ApplyChild', key, child, reason };
}

/**
 * Prune, as kubectl's ApplySets do: the owned children of a deletable kind this resource controls
 * that it no longer renders, each deleted by its uid (one made again under its name since is not
 * ours to delete).
 */
function planPrune(parts: Pick<PlanReads, 'deletable'>, t: PlanTarget, children: readonly ChildPlan[]): PruneChild[] {
  const rendered = new Set(children.map((c) => c.key));
  return parts.deletable.flatMap(({ type, informer }) =>
    informer.listControlledBy(t.uid).flatMap((object) => {
      const key = childKey(type.kind, object.metadata.name ?? '');
      return rendered.has(key)
        ? []
        : [{ type: 'PruneChild' as const, key, owned: type, object, reason: 'no longer rendered' }];
    }),
  );
}
