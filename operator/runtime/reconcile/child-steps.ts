/**
 * The steps of a reconcile that write its children: claim (never adopting), apply (server-side,
 * held while what a child waits for is not ready, refusals recorded), and the children as they
 * are after (prune, the step after apply, is prune.ts's); each returns what it did (see
 * pipeline.ts for their order).
 */
import {
  type ChildHealth,
  type KubeObject,
  type Observed,
  ChildMap,
  childKey,
  waitingOn,
} from '../../../constructs/contract';
import { Blockers } from './blockers';
import { applyIfChanged, notOwnedReason, withRefusalHint } from '../children';
import { isInvalid, needsApply, objectKey } from '../client';
import { TerminalError } from '../controller';
import {
  cachedChildren,
  type ControllerParts,
  type OwnedType,
  type RefusedChildren,
  type Target,
} from './controller-parts';
import type { RenderedChildren } from '../../../constructs/contract/render';
import { recordTerminal } from './steps';
import { type GrowthStep, growStorage } from './storage-growth';

/** A desired child, with what the cache holds under its name. */
export interface PlannedChild {
  readonly desired: KubeObject;
  readonly owned: OwnedType;
  readonly current: KubeObject | undefined;
  /** The `Kind/name`s of the children it waits for (see `waitsFor`). */
  readonly waitsFor: readonly string[];
  /** Updated even when another child of the same change is refused (see `applyIndependently`). */
  readonly independent?: boolean;
}

/** A child whose name is taken by an object this resource does not control. */
export interface NotOwned {
  /** The taking object, as `Blockers` keys it. */
  readonly blocker: string;
  readonly reason: string;
}

/** What claiming found: the children to apply, or (never adopting) the names taken by others. */
export type Claim =
  | { readonly planned: readonly PlannedChild[]; readonly notOwned?: undefined }
  | { readonly planned?: undefined; readonly notOwned: readonly NotOwned[] };

type Change = Observed['changes'][number];

/** A child the API server refused; `fresh` when this reconcile asked, not when an earlier refusal stood. */
export interface Refusal {
  readonly refused: TerminalError;
  readonly fresh: boolean;
}

/**
 * What the apply step did, child by child. It stops at the first error it cannot take (a child the
 * API server refuses as invalid is not one: it is recorded and the others go on); what it did
 * before stays recorded, with the error, so the status and Events still tell what was done.
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
  /** When to reconcile again though nothing watched changes: a refusal waiting on a StorageClass. */
  readonly recheckAfterMs?: number;
  /** What stopped the step before its last child. */
  readonly error?: unknown;
}

/** What the prune step deleted; like apply, it stops at an error it cannot take, with what it did before. */
export interface PrunedChildren {
  /** The deleted children as they were, by `Kind/name`. */
  readonly before: ChildMap;
  readonly changes: readonly Change[];
  readonly error?: unknown;
}

/** What the apply step has done so far, as it goes; fresh for every reconcile. */
interface Applying {
  before: ChildMap;
  written: ChildMap;
  changes: Change[];
  held: Map<string, ChildHealth>;
  refused: Map<string, Refusal>;
  recheckAfterMs?: number;
}

function nothingApplied(): Applying {
  return { before: new ChildMap(), written: new ChildMap(), changes: [], held: new Map(), refused: new Map() };
}

/** The children this reconcile wrote: what apply and prune returned, together. */
export class ChildWrites {
  readonly before: ChildMap;
  readonly written: ChildMap;
  readonly changes: readonly Change[];
  readonly held: ReadonlyMap<string, ChildHealth>;
  readonly refused: ReadonlyMap<string, Refusal>;
  readonly recheckAfterMs?: number;

  constructor(applied: AppliedChildren = nothingApplied(), pruned?: PrunedChildren) {
    this.before = new ChildMap(applied.before);
    for (const [key, o] of pruned?.before ?? []) this.before.set(key, o);
    this.written = applied.written;
    this.changes = [...applied.changes, ...(pruned?.changes ?? [])];
    this.held = applied.held;
    this.refused = applied.refused;
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
  const planned = rendered.objects.map((d) => {
    const owned = d.kind === undefined ? undefined : parts.owned.get(d.kind);
    if (!owned)
      throw new Error(`controller ${parts.decl.name} renders a ${d.kind} but does not own ${d.kind}s: add it to owns`);
    const namespace = d.metadata.namespace ?? t.namespace;
    const key = childKey(owned.type.kind, d.metadata.name ?? '');
    const cached = owned.informer.get(objectKey({ namespace, name: d.metadata.name }));
    const current = parts.written.current(t.key, key, cached, owned.informer.seenResourceVersion(namespace));
    const waitsFor = rendered.waits.get(key) ?? [];
    return { desired: d, owned, current, waitsFor, independent: rendered.independent?.has(key) };
  });
  const notOwned = planned.flatMap(({ current }) => {
    const reason = current && notOwnedReason(current, t.uid, t.ctx.client.fieldManager);
    return reason ? [{ blocker: Blockers.key(current.kind, current), reason }] : [];
  });
  if (notOwned.length === 0) return { planned };
  t.ctx.logger.warn(
    { notOwned: notOwned.map((n) => n.reason) },
    "a child's name is taken by an object this resource does not control; leaving it alone",
  );
  return { notOwned };
}

/**
 * Apply: each child whose owned fields would change, with server-side apply — in the order
 * rendered (a child after what it waits for), and a child that waits for one not ready yet not
 * at all: it is held, as it is (see `waitsFor`). A child the API server refuses is recorded in
 * `refused` and the others are still applied; at the same generation it is not sent again while
 * it stays as it was (deleted, or changed by someone, it is).
 */
export async function applyChildren(
  parts: Pick<ControllerParts, 'refusedChildren' | 'written' | 'claims'>,
  t: Target,
  planned: readonly PlannedChild[],
): Promise<AppliedChildren> {
  const done = nothingApplied();
  const cached = new Map(planned.map((p) => [childKey(p.owned.type.kind, p.desired.metadata.name ?? ''), p.current]));
  const refusedBefore = refusedChildrenOf(parts, t);
  try {
    // StatefulSets whose claims grow go their own way (storage-growth.ts), held or refused.
    const growth = await growStorage(parts, t, planned);
    const blocked = await refusedChange(t, planned, { cached, refusedBefore, growth });
    for (const child of planned) {
      const key = childKey(child.owned.type.kind, child.desired.metadata.name ?? '');
      const grown = growth.get(key);
      if (grown) recordGrowth(done, refusedBefore, child, key, grown);
      else if (blocked?.has(key)) recordBlocked(done, refusedBefore, child, key, blocked);
      else await applyChild(parts, t, child, { done, cached, refusedBefore });
    }
  } catch (error) {
    return { ...done, error };
  } finally {
    // Kept only while something stands refused: an empty entry per resource was 1000 Maps at N = 1000.
    if (refusedBefore.size === 0) parts.refusedChildren.delete(t.key);
  }
  return done;
}

/**
 * No half-applied change: the children an apply would update together (existing ones whose
 * owned fields change, not held, not marked `independent`), when there are two or more, asked
 * first with a server-side dry run. If the API server would refuse any of them, none is written:
 * the answer is each such child's refusal (a standing one is not asked again) — and, for the
 * others of the group, undefined. Undefined when the change may be written. A new child is not
 * part of it: nothing running reads a child that does not exist yet, and a child deleted by hand
 * is made again whatever else stands refused.
 */
async function refusedChange(
  t: Target,
  planned: readonly PlannedChild[],
  {
    cached,
    refusedBefore,
    growth,
  }: {
    cached: ReadonlyMap<string, KubeObject | undefined>;
    refusedBefore: RefusedChildren['children'];
    growth: ReadonlyMap<string, GrowthStep>;
  },
): Promise<ReadonlyMap<string, Refusal | undefined> | undefined> {
  // A kind of one child (most resources) has no change to split: not even the filter's checks.
  if (planned.filter((p) => p.current && !p.independent).length < 2) return undefined;
  // A StatefulSet made again with larger claims goes ahead; one whose growth is refused blocks.
  const group = planned.filter(
    (p) =>
      p.current &&
      !p.independent &&
      !growth.get(childKey(p.owned.type.kind, p.desired.metadata.name ?? ''))?.held &&
      needsApply(p.desired, p.current, t.ctx.client.fieldManager) &&
      waitingOn(p.waitsFor, (k) => cached.get(k)).length === 0,
  );
  if (group.length < 2) return undefined;
  const answers = new Map<string, Refusal | undefined>();
  for (const child of group) {
    t.ctx.signal.throwIfAborted();
    const key = childKey(child.owned.type.kind, child.desired.metadata.name ?? '');
    const grownRefusal = growth.get(key)?.refused;
    if (grownRefusal) {
      answers.set(key, { refused: grownRefusal, fresh: false });
      continue;
    }
    const standing = refusedBefore.get(key);
    if (standing && standing.resourceVersion === child.current?.metadata.resourceVersion) {
      answers.set(key, { refused: standing.error, fresh: false });
      continue;
    }
    try {
      await applyIfChanged(t.ctx.client, child.owned.type, child.desired, child.current, { dryRun: true });
      answers.set(key, undefined);
    } catch (err) {
      if (!isInvalid(err)) throw err;
      answers.set(key, { refused: refusalOf(err, child.owned.type.kind, child.desired, child.current), fresh: true });
    }
  }
  return [...answers.values()].some(Boolean) ? answers : undefined;
}

/** A child of a change that would be refused: its refusal, or (for the others) held, naming what blocks it. */
function recordBlocked(
  done: Applying,
  refusedBefore: RefusedChildren['children'],
  { owned, current }: PlannedChild,
  key: string,
  blocked: ReadonlyMap<string, Refusal | undefined>,
): void {
  const refusal = blocked.get(key);
  const name = key.slice(key.indexOf('/') + 1);
  if (current) done.before.set(key, current);
  if (refusal) {
    done.refused.set(key, refusal);
    if (refusal.fresh)
      refusedBefore.set(key, { resourceVersion: current?.metadata.resourceVersion, error: refusal.refused });
    return;
  }
  const refused = [...blocked].flatMap(([k, r]) => (r ? [k.replace('/', ' ')] : []));
  done.held.set(key, {
    kind: owned.type.kind,
    name,
    readiness: 'InProgress',
    reason: 'Blocked',
    message: `not updated: ${refused.join(', ')} would be refused, and a change is written whole or not at all`,
  });
}

/**
 * A StatefulSet storage growth took, recorded in `done`: held while it is made again, or refused —
 * fresh when its words differ from the refusal that stood (a refusal waiting on a StorageClass is
 * asked again at every reconcile, and said once).
 */
function recordGrowth(
  done: Applying,
  refusedBefore: RefusedChildren['children'],
  { current }: PlannedChild,
  key: string,
  step: GrowthStep,
): void {
  if (current) done.before.set(key, current);
  if (step.held) {
    done.held.set(key, step.held);
    refusedBefore.delete(key);
    return;
  }
  const fresh = refusedBefore.get(key)?.error.message !== step.refused.message;
  done.refused.set(key, { refused: step.refused, fresh });
  refusedBefore.set(key, { resourceVersion: current?.metadata.resourceVersion, error: step.refused });
  if (step.recheckAfterMs !== undefined)
    done.recheckAfterMs = Math.min(done.recheckAfterMs ?? Infinity, step.recheckAfterMs);
}

/** One planned child applied, held or refused, recorded in `done`. */
async function applyChild(
  parts: Pick<ControllerParts, 'written'>,
  t: Target,
  { desired, owned, current, waitsFor }: PlannedChild,
  {
    done,
    cached,
    refusedBefore,
  }: {
    done: Applying;
    cached: ReadonlyMap<string, KubeObject | undefined>;
    refusedBefore: RefusedChildren['children'];
  },
): Promise<void> {
  // Stopping (shutdown, or leadership lost): write nothing more; the next leader goes on.
  t.ctx.signal.throwIfAborted();
  const name = desired.metadata.name ?? '';
  const key = childKey(owned.type.kind, name);
  if (current) done.before.set(key, current);
  // Held only when there is something to write: a child as its spec asks stays as it is.
  const changes = !current || needsApply(desired, current, t.ctx.client.fieldManager);
  const waiting = changes ? waitingOn(waitsFor, (k) => done.written.get(k) ?? cached.get(k)) : [];
  if (waiting.length) {
    const message = `waits for ${waiting.join(', ')}`;
    done.held.set(key, { kind: owned.type.kind, name, readiness: 'InProgress', reason: 'Waiting', message });
    return;
  }
  const outcome = await applyUnlessRefused(t, { owned, desired, current, changes }, refusedBefore.get(key));
  if ('refused' in outcome) {
    done.refused.set(key, outcome);
    if (outcome.fresh)
      refusedBefore.set(key, { resourceVersion: current?.metadata.resourceVersion, error: outcome.refused });
    return;
  }
  refusedBefore.delete(key);
  done.written.set(key, outcome.object);
  if (!outcome.applied) return;
  parts.written.note(t.key, key, outcome.object);
  done.changes.push({ verb: current ? 'Updated' : 'Created', kind: owned.type.kind, name });
  t.ctx.logger.info({ kind: desired.kind, child: name }, current ? 'updated child' : 'created child');
}

/** The refusals remembered for this resource at its generation (a new generation starts afresh). */
function refusedChildrenOf(parts: Pick<ControllerParts, 'refusedChildren'>, t: Target): RefusedChildren['children'] {
  const known = parts.refusedChildren.get(t.key);
  if (known?.uid === t.uid && known.generation === t.generation) return known.children;
  const fresh: RefusedChildren = { uid: t.uid, generation: t.generation, children: new Map() };
  parts.refusedChildren.set(t.key, fresh);
  return fresh.children;
}

/**
 * A child applied (when it changes), or the API server's refusal of it as a terminal error:
 * asked now (`fresh`), or the one that stands for a child that has not changed since.
 */
async function applyUnlessRefused(
  t: Target,
  child: { owned: OwnedType; desired: KubeObject; current: KubeObject | undefined; changes: boolean },
  standing: { readonly resourceVersion?: string; readonly error: TerminalError } | undefined,
): Promise<{ object: KubeObject; applied: boolean } | { refused: TerminalError; fresh: boolean }> {
  const { owned, desired, current } = child;
  if (child.changes && standing && standing.resourceVersion === current?.metadata.resourceVersion)
    return { refused: standing.error, fresh: false };
  try {
    return await applyIfChanged(t.ctx.client, owned.type, desired, current);
  } catch (err) {
    if (!isInvalid(err)) throw err;
    return { refused: refusalOf(err, owned.type.kind, desired, current), fresh: true };
  }
}

/** The terminal error of a refused child: the API server's words, and the way through (see `refusalHint`). */
function refusalOf(err: unknown, kind: string, desired: KubeObject, current: KubeObject | undefined): TerminalError {
  const said = withRefusalHint(err instanceof Error ? err.message : String(err), {
    kind,
    name: desired.metadata.name ?? '',
    namespace: desired.metadata.namespace ?? current?.metadata.namespace,
    exists: current !== undefined,
  });
  return new TerminalError(said.slice(0, 1024), 'Invalid', { cause: err });
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
    notOwned.map((n) => n.blocker),
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
