/**
 * Storage grown in place, planned. Kubernetes refuses any change of a StatefulSet's claim
 * templates, and never changes a claim its StatefulSet made; so when a kind's StatefulSet asks for
 * larger volumes, the runtime does what CloudNativePG and Strimzi do for theirs:
 *
 * 1. every claim of a pod the StatefulSet keeps (ordinal below its replicas) smaller than asked,
 *    once bound, is patched to the new size — only where its StorageClass allows expansion
 *    (`allowVolumeExpansion: true`); where one does not, nothing at all is changed and the child
 *    is refused, saying so and what to do;
 * 2. the StatefulSet is deleted with its pods orphaned (`propagationPolicy: Orphan`): they keep
 *    running, and once it is gone the StatefulSet is made again with the new templates, adopting
 *    them unrestarted (their revision is the same);
 * 3. the status says `Progressing` until each claim's volume has the new size: a StatefulSet is
 *    not as asked while a claim is smaller (`claimSizeVerdict`).
 *
 * This module decides those writes (`planGrowth`), writing nothing; the executor makes them
 * through the gate, after a dry run of every claim patch and of the rest of the StatefulSet's
 * change with its claims' sizes as they are — so a change the StatefulSet cannot take in place
 * (its selector, serviceName…) made together with a larger size is refused as a whole, and a
 * claim patch that would be refused leaves every claim as it was. A template asking less than its
 * claims have is refused up front: a volume cannot shrink.
 */
import {
  BuiltinTypes,
  claimsOfStatefulSet,
  claimTemplateChanges,
  claimTemplateSizes,
  compareQuantities,
  shrinkRefusal,
  type KubeObject,
  type PersistentVolumeClaim,
  storageRequest,
  TerminalError,
  withCurrentClaimSizes,
} from '../../../constructs/contract';
import { isJsonObject } from '../../../constructs/contract/json';
import { isNotFound } from '../client';
import { cachedClaimsOf, type PlannedChild, type PlanReads, type PlanTarget } from './planned-child';
import type { ChildPlan, GrowClaim, RecreateStatefulSet } from './plan';
import { ChildRefusedUpFront } from './refusals';

/** How long a refusal that waits on a StorageClass (which the runtime does not watch) stands before it is asked again. */
export const STORAGE_CLASS_RECHECK_MS = 60_000;

/** The finalizer the garbage collector keeps on an object deleted with `propagationPolicy: Orphan`. */
const ORPHAN_FINALIZER = 'orphan';

/**
 * What a StatefulSet's storage growth plans: its claims grown and the StatefulSet made again, or
 * its claims grown alone (its templates ask the size already; any other change of it is the
 * planner's apply), or why it has no writes.
 */
export interface GrowthPlan {
  readonly actions: readonly (GrowClaim | RecreateStatefulSet)[];
  readonly decided?: ChildPlan['decided'];
  readonly restOfChange?: KubeObject;
}

/**
 * The storage growth of one StatefulSet child that exists (see the header), or undefined when it
 * has none and is applied as any other child. Reads the cache and the claims' StorageClasses;
 * writes nothing.
 */
export async function planGrowth(
  parts: Pick<PlanReads, 'claims'>,
  t: PlanTarget,
  child: PlannedChild,
): Promise<GrowthPlan | undefined> {
  const { desired, current } = child;
  if (!parts.claims || child.owned.type.kind !== 'StatefulSet' || !current) return undefined;
  const name = current.metadata.name ?? '';
  const key = `StatefulSet/${name}`;
  if (current.metadata.deletionTimestamp) return { actions: [], decided: { held: beingDeleted(current) } };
  const { grown, shrunk } = claimTemplateChanges(current, desired);
  const [shrink] = shrunk;
  if (shrink) return { actions: [], decided: { refused: refusal(shrinkRefusal(name, shrink)) } };
  const small = claimsToGrow(parts, desired, current);
  if (grown.length === 0 && small.length === 0) return undefined;
  const notExpandable = await classRefusal(t, small);
  if (notExpandable)
    return {
      actions: [],
      decided: { refused: refusal(`StatefulSet ${name}: ${notExpandable}`), recheckAfterMs: STORAGE_CLASS_RECHECK_MS },
    };
  const sizes = grown.map((g) => `${g.template} ${g.from} → ${g.to}`).join(', ');
  const claims = small.map(({ claim, size }) => ({
    type: 'GrowClaim' as const,
    key,
    claim,
    size,
    reason: `claim ${claim.metadata.name ?? ''} asks ${storageRequest(claim) ?? '?'}; StatefulSet ${name}'s template asks ${size}`,
  }));
  if (grown.length > 0) {
    const recreate = {
      type: 'RecreateStatefulSet' as const,
      key,
      current,
      grown,
      reason: `its claim templates grow (${sizes}), which a StatefulSet does not take in place: deleted with its pods kept, then made again`,
    };
    return { actions: [...claims, recreate], restOfChange: withCurrentClaimSizes(desired, current) };
  }
  // The templates already ask the new size (made again earlier): the claims grow, and the planner
  // applies the rest as for any other child.
  return { actions: claims };
}

/**
 * A StatefulSet being deleted, held until it is gone: made again by the operator when it is our
 * own orphaning delete (the garbage collector's `orphan` finalizer), or by someone else's.
 */
function beingDeleted(current: KubeObject) {
  const name = current.metadata.name ?? '';
  const finalizers = current.metadata.finalizers ?? [];
  if (finalizers.includes(ORPHAN_FINALIZER))
    return {
      kind: 'StatefulSet',
      name,
      readiness: 'InProgress' as const,
      reason: 'Recreating',
      message: 'the old StatefulSet is being deleted, its pods kept; it is made again once it is gone',
    };
  const how = finalizers.includes('foregroundDeletion') ? 'foreground deletion, ' : '';
  return {
    kind: 'StatefulSet',
    name,
    readiness: 'InProgress' as const,
    reason: 'Deleting',
    message: `being deleted (${how}not by this operator); it is made again once it is gone`,
  };
}

function refusal(message: string): TerminalError {
  return new TerminalError(message.slice(0, 1024), 'Invalid', { cause: new ChildRefusedUpFront(message) });
}

/**
 * The bound claims of the pods the desired StatefulSet keeps (ordinals below its replicas) smaller
 * than its templates ask, with the size each is to have. A claim of a scaled-down ordinal is left
 * as it is: it grows if its pod comes back.
 */
function claimsToGrow(
  parts: Pick<PlanReads, 'claims'>,
  desired: KubeObject,
  current: KubeObject,
): { claim: PersistentVolumeClaim; size: string }[] {
  const sizes = claimTemplateSizes(desired);
  const spec = isJsonObject(desired.spec) ? desired.spec : {};
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  return claimsOfStatefulSet(current, cachedClaimsOf(parts, current)).flatMap(({ claim, template, ordinal }) => {
    const size = sizes.get(template);
    const has = storageRequest(claim);
    // A claim not bound yet cannot be changed: it is grown once bound (its change reconciles again).
    if (ordinal >= replicas || !size || !has || claim.status?.phase !== 'Bound' || compareQuantities(has, size) >= 0)
      return [];
    return [{ claim, size }];
  });
}

/** Why the claims cannot grow (a StorageClass that does not allow it, or none), or undefined when each may. */
async function classRefusal(
  t: PlanTarget,
  claims: readonly { claim: PersistentVolumeClaim }[],
): Promise<string | undefined> {
  const classes = [...new Set(claims.map(({ claim }) => claim.spec?.storageClassName ?? ''))].sort();
  for (const name of classes) {
    const of = claims.filter(({ claim }) => (claim.spec?.storageClassName ?? '') === name).map(({ claim }) => claim);
    const first = of[0]?.metadata.name ?? '';
    const size = `${first} asks ${storageRequest(of[0]) ?? '?'}`;
    if (!name) return `claim ${first} has no StorageClass, so it cannot be expanded (${size}); set the size back`;
    let allowed: boolean | undefined;
    try {
      allowed = (await t.ctx.client.get(BuiltinTypes.StorageClass, name)).allowVolumeExpansion;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return `StorageClass ${name} of claim ${first} does not exist, so its claims cannot be expanded; set the size back`;
    }
    if (allowed !== true)
      return (
        `its claims would grow, but StorageClass ${name} does not allow volume expansion (allowVolumeExpansion is not true), ` +
        `so nothing was changed (${size}). A cluster admin can set allowVolumeExpansion: true on it if its provisioner can ` +
        `expand volumes (it is checked again within a minute); or set the size back`
      );
  }
  return undefined;
}

/** The fields of a StatefulSet's spec the API server changes in place; it refuses a change of any other. */
const IN_PLACE_FIELDS: ReadonlySet<string> = new Set([
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
]);

/**
 * The spec fields (`spec.selector`…) a desired StatefulSet sets otherwise than `current` has them,
 * of those the API server does not change in place: what its refusal of the change is about.
 */
export function fixedFieldsChanged(current: KubeObject, desired: KubeObject): string[] {
  const now = isJsonObject(current.spec) ? current.spec : {};
  const asked = isJsonObject(desired.spec) ? desired.spec : {};
  return Object.keys(asked)
    .filter((field) => !IN_PLACE_FIELDS.has(field) && !within(asked[field], now[field]))
    .map((field) => `spec.${field}`);
}

/** Whether every value `asked` sets is what `has` holds (the API server's defaults may add more). */
function within(asked: unknown, has: unknown): boolean {
  if (Array.isArray(asked))
    return Array.isArray(has) && asked.length === has.length && asked.every((a, i) => within(a, has[i]));
  if (isJsonObject(asked)) return isJsonObject(has) && Object.keys(asked).every((k) => within(asked[k], has[k]));
  return asked === has;
}
