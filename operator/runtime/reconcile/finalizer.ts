/**
 * The finalize step of a declared controller: the finalizer put on a resource that needs it, and
 * what the runtime does when such a resource is deleted (see `ControllerDeclaration.finalize`).
 */
import { type EventSpec, type FinalizeOutcome, finalizerName } from '../../../constructs/contract';
import { controllerReference } from '../children';
import { applyStatus } from './status-pacing';
import { type Condition, findCondition, setCondition } from '../../../constructs/contract/conditions';
import { type Request, type Result, asTerminal } from '../controller';
import { sameJson, objectKey } from '../client';
import { type ControllerParts, forget, keptByTarget, prepareApi, type Resource, type Target } from './controller-parts';
import { cachedChildren } from '../plan';

/** The reason of `Degraded` when a finalize step throws an error that names none. */
export const FINALIZE_FAILED = 'FinalizeFailed';

/** A resource being deleted whose finalizer is ours to take off: it is finalized, not reconciled. */
export function deletingWithFinalizer(
  parts: Pick<ControllerParts, 'decl' | 'resources'>,
  req: Request,
): Resource | undefined {
  const resource = parts.resources.get(objectKey(req));
  if (!parts.decl.finalize || !resource?.metadata.deletionTimestamp) return undefined;
  return hasFinalizer(parts, resource) ? resource : undefined;
}

/**
 * Puts the finalizer on a resource that needs it, before any child is made (so none is made
 * that nothing cleans up after), or takes it off one that no longer needs it.
 */
export async function keepFinalizer(parts: Pick<ControllerParts, 'decl' | 'type'>, t: Target): Promise<void> {
  const { decl } = parts;
  if (!decl.finalize) return;
  const needs = decl.needsFinalizer ? decl.needsFinalizer(t.resource) : true;
  if (needs === hasFinalizer(parts, t.resource)) return;
  await patchFinalizers(parts, t, needs);
  t.ctx.logger.info({ finalizer: finalizerName(decl.for) }, needs ? 'added finalizer' : 'removed finalizer');
}

/**
 * Runs the finalize step of a deleted resource: on `done` the finalizer comes off and the
 * resource goes; while it waits the `Finalizing` condition says for what; when it throws,
 * `Degraded` says why (with a Warning Event) and the error is retried with backoff — never taken
 * as terminal, since the finalizer would then hold the resource forever.
 */
export async function finalizeResource(
  parts: Pick<
    ControllerParts,
    | 'blockers'
    | 'clock'
    | 'decl'
    | 'owned'
    | 'pacer'
    | 'reads'
    | 'refused'
    | 'refusedChildren'
    | 'renders'
    | 'type'
    | 'written'
  >,
  t: Target,
): Promise<Result | undefined> {
  const { decl, type } = parts;
  if (!decl.finalize) return undefined;
  const finalizer = finalizerName(decl.for);
  let outcome: FinalizeOutcome;
  try {
    outcome = await decl.finalize(t.resource, {
      children: cachedChildren(parts, t.uid),
      owner: controllerReference(t.resource, type),
      api: prepareApi(t.ctx.client, t.ctx.signal, keptByTarget(parts, t)),
      existing: (type, name, namespace = t.namespace) =>
        (parts.owned.get(type.kind)?.informer ?? parts.reads.get(`${type.group}/${type.kind}`))?.get(
          objectKey({ namespace, name }),
        ),
      signal: t.ctx.signal,
    });
  } catch (err) {
    if (t.ctx.signal.aborted) throw err;
    const reason = asTerminal(err)?.reason ?? FINALIZE_FAILED;
    const cause = err instanceof Error ? err.message : String(err);
    const message = `${cause}; the finalizer ${finalizer} stays, and deletion waits, until the finalize step succeeds`;
    await report(parts, t, { type: 'Degraded', status: 'True', reason, message }, [
      { type: 'Warning', reason, message },
    ]);
    // Not a TerminalError (which would not be retried): the finalizer would hold the resource.
    throw new Error(`finalize: ${cause}`, { cause: err });
  }
  if (!outcome.done) {
    await report(
      parts,
      t,
      { type: 'Finalizing', status: 'True', reason: outcome.reason, message: outcome.message },
      outcome.events ?? [],
      { type: 'Degraded', status: 'False', reason: 'Finalizing', message: 'waiting for the finalize step' },
    );
    return outcome.requeueAfterMs ? { requeueAfterMs: outcome.requeueAfterMs } : undefined;
  }
  for (const e of outcome.events ?? []) await t.ctx.recorder.record(t.resource, e.type, e.reason, e.message);
  await patchFinalizers(parts, t, false);
  t.ctx.logger.info({ finalizer }, 'finalized; removed the finalizer');
  forget(parts, t.key);
  return undefined;
}

function hasFinalizer(parts: Pick<ControllerParts, 'decl'>, resource: Resource): boolean {
  return (resource.metadata.finalizers ?? []).includes(finalizerName(parts.decl.for));
}

/**
 * Adds or removes our finalizer, keeping everyone else's: a merge patch of the whole list with
 * the cached resourceVersion as precondition, so a list changed meanwhile is a 409 Conflict
 * (retried from the newer object) rather than a lost finalizer.
 */
async function patchFinalizers(
  parts: Pick<ControllerParts, 'decl' | 'type'>,
  t: Target,
  present: boolean,
): Promise<void> {
  const finalizer = finalizerName(parts.decl.for);
  const others = (t.resource.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  await t.ctx.client.mergePatch(parts.type, t.resource.metadata.name, t.namespace, {
    metadata: {
      finalizers: present ? [...others, finalizer] : others,
      resourceVersion: t.resource.metadata.resourceVersion,
    },
  });
}

/**
 * Writes conditions of a deleted resource (when its kind's status has conditions, even if none
 * was written yet: it may be deleted before its first status) — `Available` turned False — and,
 * for a change,
 * its Events: an Event is recorded only when the first condition changes, not on every retry.
 */
async function report(
  parts: Pick<ControllerParts, 'clock' | 'decl' | 'type'>,
  t: Target,
  condition: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>,
  events: readonly EventSpec[],
  ...more: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>[]
): Promise<void> {
  const before = t.resource.status?.conditions;
  const known = findCondition(before, condition.type);
  const changed =
    known?.status !== condition.status || known.reason !== condition.reason || known.message !== condition.message;
  if (changed) {
    for (const e of events) await t.ctx.recorder.record(t.resource, e.type, e.reason, e.message);
  }
  if (!parts.decl.for.statusHasConditions) return;
  const now = new Date(parts.clock.now());
  // A resource on its way out is not available, whatever its children still are.
  const unavailable = {
    type: 'Available',
    status: 'False' as const,
    reason: 'Deleting',
    message: `being deleted: ${condition.message}`,
  };
  const conditions = [condition, ...more, unavailable].reduce(
    (list, c) =>
      setCondition(list, { ...c, message: c.message.slice(0, 32768), observedGeneration: t.generation }, now),
    before ?? [],
  );
  if (!sameJson(conditions, before ?? [])) {
    await applyStatus(t.ctx.client, parts.type, t.resource, { ...t.resource.status, conditions });
  }
}
