/**
 * The gate's all-or-nothing check (executor.ts): the API server's dry run of a plan's whole change
 * before any of it is written, and the refusals it finds as the status reports them.
 */
import type { KubeObject } from '../../../constructs/contract';
import { changedTogether, type ChildPlan, dryRunChange, type Refusal } from '../plan';
import type { RefusedChildren, Target } from './controller-parts';

/**
 * No half-applied change: the existing children the plan changes together (not held, not marked
 * `independent`) — and those refused up front, which block the rest — when there are two or more,
 * or when storage grows (its writes cannot be taken back), asked first with the API server's dry
 * run. If it would refuse any, none is written: the answer is each such child's refusal (a
 * standing one is not asked again) and, for the others, undefined. Undefined when the change may
 * be written. A new child is not part of it: nothing running reads a child that does not exist
 * yet, and a child deleted by hand is made again whatever else stands refused.
 */
export async function refusedChange(
  t: Target,
  children: readonly ChildPlan[],
  cached: ReadonlyMap<string, KubeObject | undefined>,
  refusedBefore: RefusedChildren['children'],
): Promise<ReadonlyMap<string, Refusal | undefined> | undefined> {
  const group = changedTogether(children, cached);
  if (!group) return undefined;
  const answers = new Map<string, Refusal | undefined>();
  for (const c of group) {
    t.ctx.signal.throwIfAborted();
    answers.set(
      c.key,
      c.decided?.refused ? { refused: c.decided.refused, fresh: false } : await dryRun(t, c, refusedBefore),
    );
  }
  return [...answers.values()].some(Boolean) ? answers : undefined;
}

/** The API server's answer to one child's change, asked by dry run: undefined when it takes it. */
async function dryRun(
  t: Target,
  c: ChildPlan,
  refusedBefore: RefusedChildren['children'],
): Promise<Refusal | undefined> {
  const current = c.child.current;
  const standing = refusedBefore.get(c.key);
  if (standing && standing.resourceVersion === current?.metadata.resourceVersion)
    return { refused: standing.error, fresh: false };
  const answer = await dryRunChange(t, c);
  return answer.refused ? { refused: answer.refused, fresh: true } : undefined;
}
