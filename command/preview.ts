/**
 * What `diff` and `plan` both show of one resource: the reconciler's own plan (`previewPlan`, over
 * the objects the command listed), each child's fate in it — with the API server's dry run of
 * each change that exists, as the reconciler's gate asks it — and every write the reconciler
 * would make, in its order. Writes nothing.
 */
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import { type ClaimSizeChange, type CustomResourceObject, type KubeObject, waitingOn } from '../constructs/contract';
import type { KubeClient } from '../operator/runtime/client';
import {
  blockedMessage,
  changedTogether,
  type ChildPlan,
  describedWrite,
  podActions,
  type DryRunAnswer,
  dryRunChange,
  type ExecutedWrite,
  type ExternalPreview,
  previewExternal,
  type PreviewReads,
  previewPlan,
} from '../operator/runtime/plan';

/** One child's fate in the reconciler's plan. */
export interface ChildPreview {
  readonly verb: 'created' | 'changed' | 'held' | 'unchanged' | 'refused';
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** The child as it is, when it exists. */
  readonly current?: KubeObject;
  /** A change of a child that exists and the API server takes: the child as it would store it. */
  readonly after?: KubeObject;
  /** For `held`: what it waits for, e.g. `Job migrate (1 running, 0 succeeded, 0 failed)`. */
  readonly waitsFor?: string;
  /** For `held` otherwise: why (a StatefulSet being deleted, another child of the change refused). */
  readonly heldBecause?: string;
  /** For `refused`: the API server's words (or the gate's, up front), and the way through. */
  readonly refusal?: string;
  /** A StatefulSet made again with larger claim templates: what grows. */
  readonly grown?: readonly ClaimSizeChange[];
  /** The writes of this child the reconciler would make (its claims grown, its re-creation, its apply). */
  readonly writes: readonly ExecutedWrite[];
}

/** What the reconciler would do for one resource. */
export interface ResourcePreview {
  readonly children: readonly ChildPreview[];
  /** Every write it would make, in its order: the children's, the prunes, the stuck pods deleted. */
  readonly writes: readonly ExecutedWrite[];
  /** The children whose names are taken by objects the resource does not control (then nothing is written), by `Kind/name`, with why. */
  readonly notOwned?: readonly { readonly key: string; readonly reason: string }[];
  /** Dry-run requests made. */
  readonly dryRuns: number;
  /** The kind's external step, previewed: its write to its outside system now, or why it could not be. */
  readonly external?: ExternalPreview;
}

/** What the reconciler of `decl` would do for `resource` now (see the header). */
export async function previewResource(
  client: KubeClient,
  decl: ControllerDeclaration,
  resource: CustomResourceObject,
  reads: PreviewReads,
): Promise<ResourcePreview> {
  const counted = countingDryRuns(client);
  // As the reconciler: the external step first; the pods it would restart are of the plan.
  const external = await previewExternal(decl, client, resource, reads);
  const previewed = await previewPlan(decl, counted.client, resource, reads, external);
  const withExternal = external ? { external } : {};
  if (!previewed.plan)
    return {
      children: [],
      writes: [],
      notOwned: previewed.notOwned.map(({ key, reason }) => ({ key, reason })),
      dryRuns: 0,
      ...withExternal,
    };
  const { plan, target } = previewed;
  const cached = new Map(plan.children.map((c) => [c.key, c.child.current]));
  const judged: { plan: ChildPlan; preview: ChildPreview; answer?: DryRunAnswer }[] = [];
  for (const c of plan.children) {
    const answer = askable(c) ? await dryRunChange(target, c) : undefined;
    judged.push({ plan: c, answer, preview: childPreview(c, cached, answer) });
  }
  // As the gate: a change written whole or not at all.
  const together = new Set(changedTogether(plan.children, cached)?.map((c) => c.key));
  const refusedKeys = judged.filter((j) => together.has(j.plan.key) && j.preview.verb === 'refused');
  const children = judged.map(({ plan: c, preview }) =>
    refusedKeys.length > 0 && together.has(c.key) && preview.verb !== 'refused'
      ? {
          ...preview,
          verb: 'held' as const,
          heldBecause: blockedMessage(refusedKeys.map((j) => j.plan.key)),
          writes: [],
        }
      : preview,
  );
  const refused = children.some((c) => c.verb === 'refused');
  const writes = [
    ...children.flatMap((c) => c.writes),
    ...plan.prune.map(describedWrite),
    // As the executor: no pod labelled or deleted while anything of the plan is refused.
    ...(refused ? [] : podActions(plan).map(describedWrite)),
  ];
  return { children, writes, dryRuns: counted.count(), ...withExternal };
}

/** Whether the API server is asked about a child's change: one that exists and would be written. */
function askable(c: ChildPlan): boolean {
  return c.child.current !== undefined && !c.decided && c.actions.length > 0;
}

// eslint-disable-next-line complexity -- one verdict per way a child's plan can go, read best in one place
function childPreview(
  c: ChildPlan,
  cached: ReadonlyMap<string, KubeObject | undefined>,
  answer: DryRunAnswer | undefined,
): ChildPreview {
  const { desired, owned, current } = c.child;
  const where = {
    kind: owned.type.kind,
    namespace: desired.metadata.namespace,
    name: desired.metadata.name ?? '',
    current,
    writes: [] as ExecutedWrite[],
  };
  if (c.decided?.held) return { ...where, verb: 'held', heldBecause: c.decided.held.message };
  if (c.decided?.refused) return { ...where, verb: 'refused', refusal: c.decided.refused.message };
  if (c.actions.length === 0) return { ...where, verb: 'unchanged' };
  const waiting = waitingOn(c.child.waitsFor, (k) => cached.get(k));
  const waitsFor = waiting.length ? waiting.join(', ') : undefined;
  if (answer?.refused) return { ...where, verb: 'refused', refusal: answer.refused.message };
  const recreate = c.actions.find((a) => a.type === 'RecreateStatefulSet');
  const grown = recreate?.type === 'RecreateStatefulSet' ? { grown: recreate.grown } : {};
  const after = answer?.after ? { after: answer.after } : {};
  // A child waiting for one not ready yet is not written, nor is its storage growth.
  if (waitsFor) return { ...where, ...after, ...grown, verb: 'held', waitsFor };
  const writes = c.actions.map(describedWrite);
  return { ...where, ...after, ...grown, verb: current ? 'changed' : 'created', writes };
}

/** The client, counting the dry-run requests made through it. */
function countingDryRuns(client: KubeClient): { client: KubeClient; count: () => number } {
  let dryRuns = 0;
  const counted = new Proxy(client, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]): unknown => {
        // apply(type, body, options) and mergePatch(type, name, namespace, patch, options): the options last.
        const options = args.at(-1);
        const dryRun = typeof options === 'object' && options !== null && 'dryRun' in options && options.dryRun;
        if (dryRun && (prop === 'apply' || prop === 'mergePatch')) dryRuns++;
        return method.apply(target, args);
      };
    },
  });
  return { client: counted, count: () => dryRuns };
}
