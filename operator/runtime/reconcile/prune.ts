/**
 * The prune step of a reconcile: the owned children of a deletable kind that the apply step
 * neither wrote, held nor saw refused are deleted, as kubectl's ApplySets prune — each by its uid,
 * so an object made again under its name since is not ours to delete.
 */
import { type KubeObject, type Observed, type ResourceType, ChildMap, childKey } from '../../../constructs/contract';
import { isConflict, isNotFound } from '../client';
import type { AppliedChildren, PrunedChildren } from './child-steps';
import type { ControllerParts, Target } from './controller-parts';

/** Prune, as kubectl's ApplySets do: owned children of a deletable kind that apply neither wrote, held nor saw refused. */
export async function pruneChildren(
  parts: Pick<ControllerParts, 'deletable'>,
  t: Target,
  applied: AppliedChildren,
): Promise<PrunedChildren> {
  const changes: Observed['changes'][number][] = [];
  const done = { before: new ChildMap(), changes };
  try {
    for (const { type, informer } of parts.deletable) {
      for (const o of informer.listControlledBy(t.uid)) {
        const name = o.metadata.name ?? '';
        const key = childKey(type.kind, name);
        if (applied.written.has(key) || applied.held.has(key) || applied.refused.has(key)) continue;
        done.before.set(key, o);
        await deleteChild(t, type, o);
        done.changes.push({ verb: 'Deleted', kind: type.kind, name });
        t.ctx.logger.info({ kind: type.kind, child: o.metadata.name }, 'deleted child no longer rendered');
      }
    }
  } catch (error) {
    return { ...done, error };
  }
  return done;
}

/** Deletes only this object: one made again under its name since is not ours to delete. Gone already is done. */
async function deleteChild(t: Target, type: ResourceType, o: KubeObject): Promise<void> {
  try {
    await t.ctx.client.delete(type, o.metadata.name ?? '', o.metadata.namespace, { uid: o.metadata.uid });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}
