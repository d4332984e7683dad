/**
 * The gate's all-or-nothing check (executor.ts): the API server's dry run of a plan's whole change
 * before any of it is written, and the refusals it finds as the status reports them.
 */
import { BuiltinTypes, type KubeObject, waitingOn } from '../../../constructs/contract';
import { applyIfChanged, withRefusalHint } from '../children';
import { needsApply } from '../client';
import { TerminalError } from '../controller';
import type { Refusal } from './child-steps';
import type { RefusedChildren, Target } from './controller-parts';
import { type ChildPlan, type GrowClaim, growsStorage } from './plan';
import { ChildRefusedUpFront, isRefusedWrite } from './refusals';
import { fixedFieldsChanged } from './storage-growth';

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
  const group = children.filter((c) => {
    if (!c.child.current || c.child.independent === true) return false;
    if (c.decided) return c.decided.refused !== undefined;
    return c.actions.length > 0 && waitingOn(c.child.waitsFor, (k) => cached.get(k)).length === 0;
  });
  if (group.length < 2 && !group.some(growsStorage)) return undefined;
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
  return (await dryRunApply(t, c)) ?? (await dryRunClaims(t, c));
}

/** The child's apply, dry-run: a StatefulSet whose claims grow with its claims' sizes as they are. */
async function dryRunApply(t: Target, c: ChildPlan): Promise<Refusal | undefined> {
  const { current, desired, owned } = c.child;
  const asked = c.restOfChange ?? desired;
  if (!current || !needsApply(asked, current, t.ctx.client.fieldManager)) return undefined;
  try {
    await applyIfChanged(t.ctx.client, owned.type, asked, current, { dryRun: true });
    return undefined;
  } catch (err) {
    if (!isRefusedWrite(err)) throw err;
    const refused = refusalOf(err, owned.type.kind, desired, current);
    if (!c.restOfChange) return { refused, fresh: true };
    // The storage growth would make it again with the new spec: refused whole, naming what cannot change.
    const fields = fixedFieldsChanged(current, c.restOfChange);
    const which = fields.length ? `${fields.join(', ')} cannot change in place` : 'the rest of its change is refused';
    const message = `StatefulSet ${desired.metadata.name ?? ''}: ${which}, and growing its claims would make it again with it: nothing was changed. ${refused.message}`;
    return { refused: new TerminalError(message.slice(0, 1024), 'Invalid', { cause: err }), fresh: true };
  }
}

/** Every claim patch of a StatefulSet's growth, dry-run: one refused refuses them all. */
async function dryRunClaims(t: Target, c: ChildPlan): Promise<Refusal | undefined> {
  for (const a of c.actions) {
    if (a.type !== 'GrowClaim') continue;
    try {
      await growClaim(t, a, { dryRun: true });
    } catch (err) {
      // A quota on requests.storage, an admission plugin: the API server's words, nothing changed.
      if (!isRefusedWrite(err)) throw err;
      const message = `StatefulSet ${c.child.desired.metadata.name ?? ''}: claim ${a.claim.metadata.name ?? ''} could not grow, so no claim was changed: ${err.message}`;
      return { refused: upFront(message), fresh: true };
    }
  }
  return undefined;
}

/** One claim patched to its new size (or, with `dryRun`, only asked). */
export async function growClaim(t: Target, a: GrowClaim, options: { dryRun?: boolean } = {}): Promise<unknown> {
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
