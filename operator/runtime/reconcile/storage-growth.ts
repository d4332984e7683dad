/**
 * Storage grown in place. Kubernetes refuses any change of a StatefulSet's claim templates, and
 * never changes a claim its StatefulSet made; so when a kind's StatefulSet asks for larger
 * volumes, the runtime does what CloudNativePG and Strimzi do for theirs:
 *
 * 1. every claim of the StatefulSet smaller than asked, once bound, is patched to the new size —
 *    only where its StorageClass allows expansion (`allowVolumeExpansion: true`); where one does
 *    not, nothing at all is changed and the child is refused, saying so and what to do;
 * 2. the StatefulSet is deleted with its pods orphaned (`propagationPolicy: Orphan`): they keep
 *    running, and once it is gone the StatefulSet is made again with the new templates, adopting
 *    them unrestarted (their revision is the same);
 * 3. the status says `Progressing` until each claim's volume has the new size: a StatefulSet is
 *    not as asked while a claim is smaller (`claimSizeVerdict`).
 *
 * A template asking less than its claims have is refused up front: a volume cannot shrink.
 */
import {
  BuiltinTypes,
  type ChildHealth,
  claimsOfStatefulSet,
  claimTemplateChanges,
  claimTemplateSizes,
  childKey,
  compareQuantities,
  shrinkRefusal,
  type KubeObject,
  type PersistentVolumeClaim,
  storageRequest,
} from '../../../constructs/contract';
import { isJsonObject } from '../../../constructs/contract/json';
import { isConflict, isForbidden, isInvalid, isNotFound } from '../client';
import { TerminalError } from '../controller';
import type { ControllerParts, Target } from './controller-parts';
import type { PlannedChild } from './child-steps';
import { ChildRefusedUpFront } from './refusals';

/** How long a refusal that waits on a StorageClass (which the runtime does not watch) stands before it is asked again. */
export const STORAGE_CLASS_RECHECK_MS = 60_000;

/** What storage growth made of one StatefulSet child: held while it is made again, or refused. */
export type GrowthStep =
  | { readonly held: ChildHealth; readonly refused?: undefined }
  | { readonly refused: TerminalError; readonly held?: undefined; readonly recheckAfterMs?: number };

/**
 * Storage growth for each StatefulSet child that exists, by `Kind/name`: the children it took
 * (held while the StatefulSet is made again, or refused); a child it did not take is applied as
 * any other.
 */
export async function growStorage(
  parts: Pick<ControllerParts, 'claims'>,
  t: Target,
  planned: readonly PlannedChild[],
): Promise<ReadonlyMap<string, GrowthStep>> {
  const steps = new Map<string, GrowthStep>();
  if (!parts.claims) return steps;
  for (const child of planned) {
    if (child.owned.type.kind !== 'StatefulSet' || !child.current) continue;
    const step = await growStatefulSet(parts, t, child.desired, child.current);
    if (step) steps.set(childKey('StatefulSet', child.desired.metadata.name ?? ''), step);
  }
  return steps;
}

async function growStatefulSet(
  parts: Pick<ControllerParts, 'claims'>,
  t: Target,
  desired: KubeObject,
  current: KubeObject,
): Promise<GrowthStep | undefined> {
  const name = current.metadata.name ?? '';
  if (current.metadata.deletionTimestamp) {
    const message = 'the old StatefulSet is being deleted, its pods kept; it is made again once it is gone';
    return { held: { kind: 'StatefulSet', name, readiness: 'InProgress', reason: 'Recreating', message } };
  }
  const { grown, shrunk } = claimTemplateChanges(current, desired);
  const [shrink] = shrunk;
  if (shrink) return { refused: refusal(shrinkRefusal(name, shrink)) };
  const small = claimsToGrow(parts, desired, current);
  if (grown.length === 0 && small.length === 0) return undefined;
  t.ctx.signal.throwIfAborted();
  const notExpandable = await classRefusal(t, small);
  if (notExpandable)
    return { refused: refusal(`StatefulSet ${name}: ${notExpandable}`), recheckAfterMs: STORAGE_CLASS_RECHECK_MS };
  try {
    for (const { claim, size } of small) await growClaim(t, claim, size);
  } catch (err) {
    // A quota on requests.storage, an admission plugin: the API server's words, nothing more done.
    if (!isInvalid(err) && !isForbidden(err)) throw err;
    return { refused: refusal(`StatefulSet ${name}: a claim could not grow: ${err.message}`) };
  }
  if (small.length > 0) await recordGrowth(t, name, small, grown.length > 0);
  if (grown.length === 0) return undefined;
  await deleteKeepingPods(t, current);
  t.ctx.logger.info(
    { statefulSet: name, grown },
    'claims grown; StatefulSet deleted with its pods kept, to be made again',
  );
  const sizes = grown.map((g) => `${g.template} ${g.from} → ${g.to}`).join(', ');
  return {
    held: {
      kind: 'StatefulSet',
      name,
      readiness: 'InProgress',
      reason: 'Recreating',
      message: `made again with larger claims (${sizes}), its pods kept`,
    },
  };
}

function refusal(message: string): TerminalError {
  return new TerminalError(message.slice(0, 1024), 'Invalid', { cause: new ChildRefusedUpFront(message) });
}

/** The bound claims of the StatefulSet's pods smaller than the desired templates ask, with the size each is to have. */
function claimsToGrow(
  parts: Pick<ControllerParts, 'claims'>,
  desired: KubeObject,
  current: KubeObject,
): { claim: PersistentVolumeClaim; size: string }[] {
  const sizes = claimTemplateSizes(desired);
  return claimsOfStatefulSet(current, cachedClaimsOf(parts, current)).flatMap(({ claim, template }) => {
    const size = sizes.get(template);
    const has = storageRequest(claim);
    // A claim not bound yet cannot be changed: it is grown once bound (its change reconciles again).
    if (!size || !has || claim.status?.phase !== 'Bound' || compareQuantities(has, size) >= 0) return [];
    return [{ claim, size }];
  });
}

/**
 * The cached claims a StatefulSet may have made: those carrying its selector's labels, as its
 * controller labels every claim it makes (by the label index, no scan of the namespace).
 */
export function cachedClaimsOf(
  parts: Pick<ControllerParts, 'claims'>,
  statefulSet: KubeObject,
): readonly PersistentVolumeClaim[] {
  const claims = parts.claims;
  if (!claims || statefulSet.kind !== 'StatefulSet') return [];
  const spec = isJsonObject(statefulSet.spec) ? statefulSet.spec : {};
  const selector =
    isJsonObject(spec.selector) && isJsonObject(spec.selector.matchLabels) ? spec.selector.matchLabels : {};
  const labels = Object.fromEntries(
    Object.entries(selector).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return Object.keys(labels).length > 0 ? claims.list(statefulSet.metadata.namespace, labels) : [];
}

/** Why the claims cannot grow (a StorageClass that does not allow it, or none), or undefined when each may. */
async function classRefusal(
  t: Target,
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

async function growClaim(t: Target, claim: PersistentVolumeClaim, size: string): Promise<void> {
  t.ctx.signal.throwIfAborted();
  const name = claim.metadata.name ?? '';
  await t.ctx.client.mergePatch(BuiltinTypes.PersistentVolumeClaim, name, claim.metadata.namespace, {
    spec: { resources: { requests: { storage: size } } },
  });
  t.ctx.logger.info({ claim: name, size }, 'claim grown');
}

async function recordGrowth(
  t: Target,
  statefulSet: string,
  grown: readonly { claim: PersistentVolumeClaim; size: string }[],
  recreate: boolean,
): Promise<void> {
  const names = grown.map(({ claim }) => claim.metadata.name ?? '').join(', ');
  const then = recreate ? `; StatefulSet ${statefulSet} is made again with its pods kept` : '';
  await t.ctx.recorder.record(
    t.resource,
    'Normal',
    'StorageGrowing',
    `Asked claims ${names} to grow to ${grown[0]?.size ?? ''}${then}`,
  );
}

/** Deletes this very StatefulSet (by uid), leaving its pods running for the one made again to adopt. */
async function deleteKeepingPods(t: Target, statefulSet: KubeObject): Promise<void> {
  t.ctx.signal.throwIfAborted();
  try {
    await t.ctx.client.delete(
      BuiltinTypes.StatefulSet,
      statefulSet.metadata.name ?? '',
      statefulSet.metadata.namespace,
      {
        uid: statefulSet.metadata.uid,
        propagationPolicy: 'Orphan',
      },
    );
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}
