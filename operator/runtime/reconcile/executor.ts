/**
 * The one executor of a reconcile's plan (plan.ts), and the gate every write goes through:
 *
 * - before each write, the stop signal (shutdown, or leadership lost): nothing more is written
 *   once it says stop, and the next leader goes on;
 * - before any write, when the plan changes two or more existing children together or grows
 *   storage, the API server's dry run of each such change (a StatefulSet's with its claims'
 *   sizes as they are, and every claim patch): if any would be refused, none of them is written —
 *   only new children and those marked independent (`applyIndependently`) still are;
 * - as it goes, the waits (`waitsFor`): a child whose prerequisite is not ready yet is held, and
 *   so is its storage growth;
 * - every write recorded: in the reconcile's writes (`ExecutedWrite`), for the status, the Events
 *   and `opkit_reconcile_writes_total`.
 *
 * Children first, in the order rendered, then the prunes — not after an error, which may leave
 * wanted children unwritten — then the stuck pods and the pods to restart, only when nothing was
 * refused or stopped (a pod's claims to discard just before it).
 */
import { BuiltinTypes, type KubeObject, ChildMap, waitingOn } from '../../../constructs/contract';
import { applyIfChanged } from '../children';
import { isConflict, isInvalid, isNotFound, type JsonPatchOperation } from '../client';
import { type TerminalError } from '../controller';
import { type AppliedChildren, nothingApplied, type PrunedChildren } from './child-steps';
import type { ControllerParts, RefusedChildren, Target } from './controller-parts';
import {
  blockedMessage,
  type ChildPlan,
  type DeleteClaim,
  type DeleteStuckPod,
  type LabelPod,
  describedWrite,
  type GrowClaim,
  growClaim,
  growsStorage,
  isRefusedWrite,
  type PlannedAction,
  type PlannedChild,
  type ReconcilePlan,
  type Refusal,
  refusalOf,
  type RestartPod,
  upFront,
} from '../plan';
import { refusedChange } from './dry-run-gate';

type Change = AppliedChildren['changes'][number];
type ExecutorParts = Pick<ControllerParts, 'decl' | 'metrics' | 'refusedChildren' | 'written'>;

/** What the plan's execution has done so far, as it goes. */
type Executing = ReturnType<typeof nothingApplied> & {
  recheckAfterMs?: number;
  pruned: { before: ChildMap; changes: Change[] };
  error?: unknown;
};

/**
 * One plan's execution, a phase at a time (`children`, `prune`, `podDeletions`: each a span of the
 * reconcile's trace), then `result`. A phase after an error does nothing.
 */
export class PlanExecution {
  private readonly done: Executing = { ...nothingApplied(), pruned: { before: new ChildMap(), changes: [] } };
  private readonly cached: ReadonlyMap<string, KubeObject | undefined>;
  private readonly refusedBefore: RefusedChildren['children'];

  constructor(
    private readonly parts: ExecutorParts,
    private readonly t: Target,
    private readonly plan: ReconcilePlan,
  ) {
    this.cached = new Map(plan.children.map((c) => [c.key, c.child.current]));
    this.refusedBefore = refusedChildrenOf(parts, t);
  }

  /** The children's writes: the gate's dry run, then each child's plan in order. */
  async children(): Promise<void> {
    await this.phase(async () => {
      const blocked = await refusedChange(this.t, this.plan.children, this.cached, this.refusedBefore);
      for (const c of this.plan.children) {
        if (c.child.current) this.done.before.set(c.key, c.child.current);
        if (c.decided) this.recordDecided(c);
        else if (blocked?.has(c.key)) this.recordBlocked(c, blocked);
        else if (growsStorage(c)) await this.grow(c);
        else await this.applyChild(c);
      }
    });
  }

  /** The prunes, unless an error stopped the children's writes. */
  async prune(): Promise<void> {
    await this.phase(async () => {
      for (const p of this.plan.prune) {
        this.done.pruned.before.set(p.key, p.object);
        await this.write(p, () =>
          deleteIfStill(() =>
            this.t.ctx.client.delete(p.owned, p.object.metadata.name ?? '', p.object.metadata.namespace, {
              uid: p.object.metadata.uid,
            }),
          ),
        );
        this.done.pruned.changes.push({ verb: 'Deleted', kind: p.owned.kind, name: p.object.metadata.name ?? '' });
        this.t.ctx.logger.info(
          { kind: p.owned.kind, child: p.object.metadata.name },
          'deleted child no longer rendered',
        );
      }
    });
  }

  /**
   * The pods' writes last — the labels the external step asks for, the pods a rollout is stuck
   * behind deleted, then those the external step asks to restart — only when the rest of the plan
   * went through: nothing refused, nothing stopped.
   */
  async podWrites(): Promise<void> {
    if (this.done.refused.size > 0) return;
    await this.phase(async () => {
      for (const l of this.plan.labelPods) await this.labelPod(l);
      for (const s of this.plan.stuckPods) {
        if (!(await this.deletePod(s))) continue;
        const name = s.pod.metadata.name ?? '';
        const current = s.statefulSet.status?.updateRevision ?? '';
        this.t.ctx.logger.info(
          { pod: name, revision: s.revision, current },
          'deleted a pod a rollout was stuck behind',
        );
        await this.t.ctx.recorder.record(
          this.t.resource,
          'Normal',
          'StuckPodReplaced',
          `Deleted pod ${name}, ${s.reason}`,
        );
      }
      for (const r of this.plan.restartPods) {
        for (const d of r.discard) await this.discardClaim(d);
        if (!(await this.deletePod(r))) continue;
        const name = r.pod.metadata.name ?? '';
        this.t.ctx.logger.info({ pod: name, reason: r.reason }, 'restarted a pod');
        await this.t.ctx.recorder.record(
          this.t.resource,
          'Normal',
          'PodRestarted',
          `Restarted pod ${name}: ${r.reason}`,
        );
      }
    });
  }

  /** One pod deleted by its uid through the gate; false when it is gone or made again already, or may not be deleted. */
  private async deletePod(action: DeleteStuckPod | RestartPod): Promise<boolean> {
    const { pod } = action;
    const name = pod.metadata.name ?? '';
    try {
      await this.write(action, () =>
        this.t.ctx.client.delete(BuiltinTypes.Pod, name, pod.metadata.namespace, { uid: pod.metadata.uid }),
      );
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      if (this.t.ctx.signal.aborted) throw err;
      // No delete right on pods (a declaration owning no StatefulSet): the status still says why the pod matters.
      this.t.ctx.logger.warn({ err, pod: name, action: action.type }, 'could not delete a pod');
      return false;
    }
  }

  /**
   * A pod's labels set through the gate by one JSON patch whose first operation tests its uid: a
   * pod made again under its name since is not touched (the API server answers 422, and the next
   * reconcile asks for the new one). A pod gone is left; no patch right is logged.
   */
  private async labelPod(action: LabelPod): Promise<void> {
    const { pod } = action;
    const name = pod.metadata.name ?? '';
    const operations: JsonPatchOperation[] = [
      { op: 'test', path: '/metadata/uid', value: pod.metadata.uid ?? '' },
      // A pod made by a StatefulSet always has labels (its selector's): no object to add first.
      // `add` replaces a label there already; `remove` of one gone is refused, and asked again.
      ...Object.entries(action.labels).map(([key, value]): JsonPatchOperation => {
        const path = `/metadata/labels/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        return value === null ? { op: 'remove', path } : { op: 'add', path, value };
      }),
    ];
    try {
      await this.write(action, () =>
        this.t.ctx.client.jsonPatch(BuiltinTypes.Pod, name, pod.metadata.namespace, operations),
      );
    } catch (err) {
      // Gone, or another pod by now: its uid's test failed (422).
      if (isNotFound(err) || isConflict(err) || isInvalid(err)) return;
      if (this.t.ctx.signal.aborted) throw err;
      this.t.ctx.logger.warn({ err, pod: name, action: action.type }, 'could not label a pod');
      return;
    }
    this.t.ctx.logger.info({ pod: name, labels: action.labels, reason: action.reason }, 'labelled a pod');
  }

  /**
   * A claim a restarted pod is to be made again with, empty: deleted by its uid through the gate
   * (it goes once the pod is gone, the pod's StatefulSet then makes it again). A claim gone or made
   * again already is left; no delete right on claims is logged, and the pod is restarted anyway.
   */
  private async discardClaim(action: DeleteClaim): Promise<void> {
    const { claim } = action;
    const name = claim.metadata.name ?? '';
    try {
      await this.write(action, () =>
        this.t.ctx.client.delete(BuiltinTypes.PersistentVolumeClaim, name, claim.metadata.namespace, {
          uid: claim.metadata.uid,
        }),
      );
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      if (this.t.ctx.signal.aborted) throw err;
      this.t.ctx.logger.warn({ err, claim: name, pod: action.pod }, 'could not delete a claim');
      return;
    }
    this.t.ctx.logger.info({ claim: name, pod: action.pod, reason: action.reason }, 'discarded a claim');
    await this.t.ctx.recorder.record(
      this.t.resource,
      'Normal',
      'ClaimDiscarded',
      `Deleted claim ${name} of pod ${action.pod}, to be made again empty: ${action.reason}`,
    );
  }

  /** What the execution did: the children's side (with every write) and the prunes' side, each with the error that stopped it. */
  result(): { applied: AppliedChildren; pruned: PrunedChildren } {
    // Kept only while something stands refused: an empty entry per resource was 1000 Maps at N = 1000.
    if (this.refusedBefore.size === 0) this.parts.refusedChildren.delete(this.t.key);
    const { pruned, error, ...applied } = this.done;
    const stopped = error === undefined ? {} : { error };
    return { applied: { ...applied, ...stopped }, pruned: { ...pruned, ...stopped } };
  }

  /** The first error stops the execution: it is kept for the result, and later phases do nothing. */
  private async phase(run: () => Promise<void>): Promise<void> {
    if (this.done.error !== undefined) return;
    try {
      await run();
    } catch (error) {
      this.done.error = error;
    }
  }

  /** The gate: one write, only while the reconcile may write, recorded once made. */
  private async write<T>(action: PlannedAction, run: () => Promise<T>): Promise<T> {
    this.t.ctx.signal.throwIfAborted();
    const out = await run();
    this.record(action);
    return out;
  }

  private record(action: PlannedAction): void {
    this.done.actions.push(describedWrite(action));
    this.parts.metrics.reconcileWrites.inc({ controller: this.parts.decl.name, action: action.type });
  }

  /**
   * A child refused: reported, and remembered for its generation (by its resourceVersion, so it is
   * not sent again while it stays as it was) when newly refused — or always, with `remember`.
   */
  private refuse(key: string, child: PlannedChild, refusal: Refusal, remember = refusal.fresh): void {
    this.done.refused.set(key, refusal);
    if (remember)
      this.refusedBefore.set(key, { resourceVersion: child.current?.metadata.resourceVersion, error: refusal.refused });
  }

  /** A child held or refused before the API server was asked (see `Decided`). */
  private recordDecided({ key, child, decided }: ChildPlan): void {
    if (decided?.held) {
      this.done.held.set(key, decided.held);
      this.refusedBefore.delete(key);
      return;
    }
    if (!decided) return;
    // Said again only when its words change: a refusal waiting on a StorageClass is asked at every reconcile.
    const fresh = this.refusedBefore.get(key)?.error.message !== decided.refused.message;
    this.refuse(key, child, { refused: decided.refused, fresh }, true);
    if (decided.recheckAfterMs !== undefined)
      this.done.recheckAfterMs = Math.min(this.done.recheckAfterMs ?? Infinity, decided.recheckAfterMs);
  }

  /** A child of a change that would be refused: its refusal, or (for the others) held, naming what blocks it. */
  private recordBlocked({ key, child }: ChildPlan, blocked: ReadonlyMap<string, Refusal | undefined>): void {
    const refusal = blocked.get(key);
    if (refusal) {
      this.refuse(key, child, refusal);
      return;
    }
    const refused = [...blocked].flatMap(([k, r]) => (r ? [k] : []));
    this.done.held.set(key, {
      kind: child.owned.type.kind,
      name: key.slice(key.indexOf('/') + 1),
      readiness: 'InProgress',
      reason: 'Blocked',
      message: blockedMessage(refused),
    });
  }

  /** The children this child waits for that are not ready, as written so far or cached. */
  private waitingOn(child: PlannedChild): string[] {
    return waitingOn(child.waitsFor, (k) => this.done.written.get(k) ?? this.cached.get(k));
  }

  private holdWaiting(key: string, child: PlannedChild, waiting: readonly string[]): void {
    const message = `waits for ${waiting.join(', ')}`;
    const name = child.desired.metadata.name ?? '';
    this.done.held.set(key, { kind: child.owned.type.kind, name, readiness: 'InProgress', reason: 'Waiting', message });
  }

  /** One child applied (when it changes), held while what it waits for is not ready, or refused. */
  private async applyChild({ key, child, actions }: ChildPlan): Promise<void> {
    const { desired, owned, current } = child;
    const apply = actions.find((a) => a.type === 'ApplyChild');
    // Held only when there is something to write: a child as its spec asks stays as it is.
    const waiting = apply ? this.waitingOn(child) : [];
    if (waiting.length) {
      this.holdWaiting(key, child, waiting);
      return;
    }
    if (!apply) {
      // As rendered already (the planner plans an apply for every child that does not exist).
      this.refusedBefore.delete(key);
      if (current) this.done.written.set(key, current);
      return;
    }
    this.t.ctx.signal.throwIfAborted();
    const outcome = await applyUnlessRefused(this.t, child, this.refusedBefore.get(key));
    if ('refused' in outcome) {
      this.refuse(key, child, outcome);
      return;
    }
    this.refusedBefore.delete(key);
    this.done.written.set(key, outcome.object);
    if (!outcome.applied) return;
    this.record(apply);
    this.parts.written.note(this.t.key, key, outcome.object);
    const name = desired.metadata.name ?? '';
    this.done.changes.push({ verb: current ? 'Updated' : 'Created', kind: owned.type.kind, name });
    this.t.ctx.logger.info({ kind: desired.kind, child: name }, current ? 'updated child' : 'created child');
  }

  /**
   * A StatefulSet's storage growth: held while it waits; else every claim patched (each was
   * dry-run first, with the rest of the change, when the gate asked), then the StatefulSet deleted
   * with its pods kept and held while it is made again — or applied as any other child.
   */
  private async grow(c: ChildPlan): Promise<void> {
    const { key, child, actions } = c;
    const name = child.desired.metadata.name ?? '';
    const waiting = this.waitingOn(child);
    if (waiting.length) {
      this.holdWaiting(key, child, waiting);
      return;
    }
    const claims = actions.filter((a): a is GrowClaim => a.type === 'GrowClaim');
    try {
      for (const a of claims) {
        const claim = a.claim.metadata.name ?? '';
        await this.write(a, () => growClaim(this.t, a));
        this.t.ctx.logger.info({ claim, size: a.size }, 'claim grown');
      }
    } catch (err) {
      // Refused after its dry run passed (a quota filled meanwhile): the API server's words, nothing more done.
      if (!isRefusedWrite(err)) throw err;
      this.refuse(key, child, {
        refused: upFront(`StatefulSet ${name}: a claim could not grow: ${err.message}`),
        fresh: true,
      });
      return;
    }
    const recreate = actions.find((a) => a.type === 'RecreateStatefulSet');
    if (claims.length > 0) await this.storageGrowingEvent(name, claims, recreate !== undefined);
    if (!recreate) {
      await this.applyChild(c);
      return;
    }
    await this.write(recreate, () =>
      deleteIfStill(() =>
        this.t.ctx.client.delete(BuiltinTypes.StatefulSet, name, recreate.current.metadata.namespace, {
          uid: recreate.current.metadata.uid,
          propagationPolicy: 'Orphan',
        }),
      ),
    );
    this.refusedBefore.delete(key);
    this.t.ctx.logger.info(
      { statefulSet: name, grown: recreate.grown },
      'claims grown; StatefulSet deleted with its pods kept, to be made again',
    );
    const sizes = recreate.grown.map((g) => `${g.template} ${g.from} → ${g.to}`).join(', ');
    this.done.held.set(key, {
      kind: 'StatefulSet',
      name,
      readiness: 'InProgress',
      reason: 'Recreating',
      message: `made again with larger claims (${sizes}), its pods kept`,
    });
  }

  private async storageGrowingEvent(
    statefulSet: string,
    grown: readonly GrowClaim[],
    recreate: boolean,
  ): Promise<void> {
    const names = grown.map((g) => g.claim.metadata.name ?? '').join(', ');
    const then = recreate ? `; StatefulSet ${statefulSet} is made again with its pods kept` : '';
    await this.t.ctx.recorder.record(
      this.t.resource,
      'Normal',
      'StorageGrowing',
      `Asked claims ${names} to grow to ${grown[0]?.size ?? ''}${then}`,
    );
  }
}

/** A delete whose object is gone already, or was replaced (its uid differs), is done. */
async function deleteIfStill(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
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
  { owned, desired, current }: PlannedChild,
  standing: { readonly resourceVersion?: string; readonly error: TerminalError } | undefined,
): Promise<{ object: KubeObject; applied: boolean } | Refusal> {
  if (standing && standing.resourceVersion === current?.metadata.resourceVersion)
    return { refused: standing.error, fresh: false };
  try {
    return await applyIfChanged(t.ctx.client, owned.type, desired, current);
  } catch (err) {
    if (!isRefusedWrite(err)) throw err;
    return { refused: refusalOf(err, owned.type.kind, desired, current), fresh: true };
  }
}
