/**
 * The children's side of a reconcile: claim (never adopting), what the plan's execution did to
 * them (written, held, refused, pruned: `ChildWrites`; the plan is planner.ts's, its execution
 * executor.ts's), the refusals as one terminal error, and the children as they are after.
 */
import { type ChildHealth, type Observed, ChildMap, childKey } from '../../../constructs/contract';
import { Blockers } from './blockers';
import { objectKey } from '../client';
import { TerminalError } from '../controller';
import { type ControllerParts, type Target } from './controller-parts';
import type { RenderedChildren } from '../../../constructs/contract/render';
import { recordTerminal } from './steps';
import { cachedChildren, type Claim, claimFrom, type ExecutedWrite, type NotOwned, type Refusal } from '../plan';

type Change = Observed['changes'][number];

/**
 * What the plan's execution did, child by child. It stops at the first error it cannot take (a
 * child the API server refuses as invalid is not one: it is recorded and the others go on); what
 * it did before stays recorded, with the error, so the status and Events still tell what was done.
 */
export interface AppliedChildren {
  /** The children before their writes (for "scaled from 3 to 5"), by `Kind/name`. */
  readonly before: ChildMap;
  /** The children as written, by `Kind/name`. */
  readonly written: ChildMap;
  readonly changes: readonly Change[];
  /** Children not applied because what they wait for is not ready, by `Kind/name`. */
  readonly held: ReadonlyMap<string, ChildHealth>;
  /** Children the API server refused (an immutable field changed, a value it does not take), by `Kind/name`. */
  readonly refused: ReadonlyMap<string, Refusal>;
  /** Every write the plan's execution made, children's and others' (claims, StatefulSets made again, pods, prunes). */
  readonly actions: readonly ExecutedWrite[];
  /** When to reconcile again though nothing watched changes: a refusal waiting on a StorageClass. */
  readonly recheckAfterMs?: number;
  /** What stopped the step before its last child. */
  readonly error?: unknown;
}

/** What the execution's prunes deleted; they stop at an error they cannot take, with what they did before. */
export interface PrunedChildren {
  /** The deleted children as they were, by `Kind/name`. */
  readonly before: ChildMap;
  readonly changes: readonly Change[];
  readonly error?: unknown;
}

/** What the children's writes come to before any is made: nothing, in collections to fill as it goes. */
export function nothingApplied(): {
  before: ChildMap;
  written: ChildMap;
  changes: Change[];
  held: Map<string, ChildHealth>;
  refused: Map<string, Refusal>;
  actions: ExecutedWrite[];
} {
  return {
    before: new ChildMap(),
    written: new ChildMap(),
    changes: [],
    held: new Map(),
    refused: new Map(),
    actions: [],
  };
}

/** The children this reconcile wrote: what the plan's execution returned, its applies and prunes together. */
export class ChildWrites {
  readonly before: ChildMap;
  readonly written: ChildMap;
  readonly changes: readonly Change[];
  readonly held: ReadonlyMap<string, ChildHealth>;
  readonly refused: ReadonlyMap<string, Refusal>;
  /** Every write made (see `AppliedChildren.actions`). */
  readonly actions: readonly ExecutedWrite[];
  readonly recheckAfterMs?: number;

  constructor(applied: AppliedChildren = nothingApplied(), pruned?: PrunedChildren) {
    this.before = new ChildMap(applied.before);
    for (const [key, o] of pruned?.before ?? []) this.before.set(key, o);
    this.written = applied.written;
    this.changes = [...applied.changes, ...(pruned?.changes ?? [])];
    this.held = applied.held;
    this.refused = applied.refused;
    this.actions = applied.actions;
    this.recheckAfterMs = applied.recheckAfterMs;
  }

  wasDeleted(key: string): boolean {
    return this.changes.some((c) => c.verb === 'Deleted' && childKey(c.kind, c.name) === key);
  }
}

/**
 * Claim: each desired child with what the cache has under its name. Never adopt: if any name is
 * taken by an object this resource does not control, nothing is planned (a partial set of
 * children would be as wrong) and `notOwned` says which.
 */
export function claimChildren(
  parts: Pick<ControllerParts, 'decl' | 'owned' | 'written'>,
  t: Target,
  rendered: RenderedChildren,
): Claim {
  const claim = claimFrom(parts.decl.name, t, rendered, (desired, namespace) => {
    const owned = desired.kind === undefined ? undefined : parts.owned.get(desired.kind);
    if (!owned) return undefined;
    const key = childKey(owned.type.kind, desired.metadata.name ?? '');
    const cached = owned.informer.get(objectKey({ namespace, name: desired.metadata.name }));
    const current = parts.written.current(t.key, key, cached, owned.informer.seenResourceVersion(namespace));
    return { owned, current };
  });
  if (claim.notOwned)
    t.ctx.logger.warn(
      { notOwned: claim.notOwned.map((n) => n.reason) },
      "a child's name is taken by an object this resource does not control; leaving it alone",
    );
  return claim;
}

/**
 * The refusals of this reconcile as one terminal error (reported in status as the API server's
 * refusal), or undefined when every child was taken. Logged and counted when newly refused only.
 */
export function refusedTerminal(
  parts: Pick<ControllerParts, 'decl' | 'metrics' | 'refused'>,
  t: Target,
  writes: ChildWrites,
): TerminalError | undefined {
  const refusals = [...writes.refused.values()];
  const first = refusals[0];
  if (!first) return undefined;
  const message = refusals.map((r) => r.refused.message).join('; ');
  const error = new TerminalError(message.slice(0, 32768), 'Invalid', { cause: first.refused.cause });
  if (refusals.some((r) => r.fresh)) recordTerminal(parts, t, error, false);
  return error;
}

/** Blockers: the objects in the way of this resource's children now, so a change to one of them reconciles it again. */
export function recordBlockers(
  parts: Pick<ControllerParts, 'blockers'>,
  t: Target,
  notOwned: readonly NotOwned[],
): void {
  parts.blockers.set(
    t.key,
    notOwned.map((n) => Blockers.key(n.object.kind, n.object)),
  );
}

/** The children as they are now: those written, and — not (re)applied after a refusal, or when blocked — the cache's. */
export function currentChildren(parts: Pick<ControllerParts, 'owned'>, t: Target, writes: ChildWrites): ChildMap {
  const children = new ChildMap(writes.written);
  for (const [key, o] of cachedChildren(parts, t.uid)) {
    if (!children.has(key) && !writes.wasDeleted(key)) children.set(key, o);
  }
  return children;
}
