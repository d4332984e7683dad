/**
 * The API server's dry run of a plan's changes, as the reconciler's gate asks it before any write
 * (reconcile/dry-run-gate.ts) and a preview shows it (`diff`, `plan`): which children it changes
 * together, its answer to each, and its refusals as the status reports them.
 */
import { BuiltinTypes, type KubeObject, TerminalError, waitingOn } from '../../../constructs/contract';
import { applyIfChanged, withRefusalHint } from '../children';
import type { PlanTarget } from './planned-child';
import { type ChildPlan, type GrowClaim, growsStorage } from './plan';
import { ChildRefusedUpFront, isRefusedWrite } from './refusals';
import { fixedFieldsChanged } from './storage-growth';

/**
 * The children the gate dry-runs together (see reconcile/dry-run-gate.ts), or undefined when it asks none:
 * the existing children with writes that are not held or independent, and those refused up front,
 * when there are two or more or storage grows.
 */
export function changedTogether(
  children: readonly ChildPlan[],
  cached: ReadonlyMap<string, KubeObject | undefined>,
): ChildPlan[] | undefined {
  const group = children.filter((c) => {
    if (!c.child.current || c.child.independent === true) return false;
    if (c.decided) return c.decided.refused !== undefined;
    return c.actions.length > 0 && waitingOn(c.child.waitsFor, (k) => cached.get(k)).length === 0;
  });
  return group.length >= 2 || group.some(growsStorage) ? group : undefined;
}

/** The API server's answer to a child's change: the child as it would store it, or its refusal. */
export type DryRunAnswer =
  | { readonly after: KubeObject; readonly refused?: undefined }
  | { readonly refused: TerminalError; readonly after?: undefined };

/**
 * One existing child's change, dry-run as the gate asks it (and a preview shows it): its apply (a
 * StatefulSet whose claims grow with its claims' sizes as they are; the child as it is when there
 * is nothing to apply), then every claim patch of its growth.
 */
export async function dryRunChange(t: PlanTarget, c: ChildPlan): Promise<DryRunAnswer> {
  const applied = await dryRunApply(t, c);
  if (applied.refused) return applied;
  return (await dryRunClaims(t, c)) ?? applied;
}

/** The child's apply, dry-run: a StatefulSet whose claims grow with its claims' sizes as they are. */
async function dryRunApply(t: PlanTarget, c: ChildPlan): Promise<DryRunAnswer> {
  const { current, desired, owned } = c.child;
  const asked = c.restOfChange ?? desired;
  if (!current) throw new Error(`${c.key}: only a child that exists is dry-run`);
  try {
    return { after: (await applyIfChanged(t.ctx.client, owned.type, asked, current, { dryRun: true })).object };
  } catch (err) {
    if (!isRefusedWrite(err)) throw err;
    const refused = refusalOf(err, owned.type.kind, desired, current);
    if (!c.restOfChange) return { refused };
    // The storage growth would make it again with the new spec: refused whole, naming what cannot change.
    const fields = fixedFieldsChanged(current, c.restOfChange);
    const which = fields.length ? `${fields.join(', ')} cannot change in place` : 'the rest of its change is refused';
    const message = `StatefulSet ${desired.metadata.name ?? ''}: ${which}, and growing its claims would make it again with it: nothing was changed. ${refused.message}`;
    return { refused: new TerminalError(message.slice(0, 1024), 'Invalid', { cause: err }) };
  }
}

/** Every claim patch of a StatefulSet's growth, dry-run: one refused refuses them all. */
async function dryRunClaims(t: PlanTarget, c: ChildPlan): Promise<DryRunAnswer | undefined> {
  for (const a of c.actions) {
    if (a.type !== 'GrowClaim') continue;
    try {
      await growClaim(t, a, { dryRun: true });
    } catch (err) {
      // A quota on requests.storage, an admission plugin: the API server's words, nothing changed.
      if (!isRefusedWrite(err)) throw err;
      const message = `StatefulSet ${c.child.desired.metadata.name ?? ''}: claim ${a.claim.metadata.name ?? ''} could not grow, so no claim was changed: ${err.message}`;
      return { refused: upFront(message) };
    }
  }
  return undefined;
}

/** Why a child of a change the API server would refuse in part is not written: the refused, by `Kind/name`. */
export function blockedMessage(refused: readonly string[]): string {
  const which = refused.map((k) => k.replace('/', ' ')).join(', ');
  return `not updated: ${which} would be refused, and a change is written whole or not at all`;
}

/** One claim patched to its new size (or, with `dryRun`, only asked). */
export async function growClaim(t: PlanTarget, a: GrowClaim, options: { dryRun?: boolean } = {}): Promise<unknown> {
  const patch = { spec: { resources: { requests: { storage: a.size } } } };
  return t.ctx.client.mergePatch(
    BuiltinTypes.PersistentVolumeClaim,
    a.claim.metadata.name ?? '',
    a.claim.metadata.namespace,
    patch,
    options,
  );
}

/** A refusal of a claim patch (a 403 from a quota is not an invalid child), reported as a child refused. */
export function upFront(message: string): TerminalError {
  return new TerminalError(message.slice(0, 1024), 'Invalid', { cause: new ChildRefusedUpFront(message) });
}

/** The terminal error of a refused child: the API server's words, and the way through (see `refusalHint`). */
export function refusalOf(
  err: unknown,
  kind: string,
  desired: KubeObject,
  current: KubeObject | undefined,
): TerminalError {
  const said = withRefusalHint(err instanceof Error ? err.message : String(err), {
    kind,
    name: desired.metadata.name ?? '',
    namespace: desired.metadata.namespace ?? current?.metadata.namespace,
    exists: current !== undefined,
  });
  return new TerminalError(said.slice(0, 1024), 'Invalid', { cause: err });
}
