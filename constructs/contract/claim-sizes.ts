/**
 * The sizes of a StatefulSet's claims, against what its claim templates ask. Kubernetes never
 * changes a claim a StatefulSet made once it exists, and refuses any change of the templates
 * themselves; so growing a kind's storage takes the claims grown one by one and the StatefulSet
 * made again (operator/runtime/reconcile/storage-growth.ts), and until each claim's volume
 * has the new size the workload is not as its spec asks. Pure functions of the objects as cached.
 */
import { quantityNanos } from './quantity';
import { isJsonObject } from './json';
import type { KubeObject, PersistentVolumeClaim } from './objects';
import type { Verdict } from './health';

/** One claim template whose storage request changes. */
export interface ClaimSizeChange {
  readonly template: string;
  readonly from: string;
  readonly to: string;
}

/** How a StatefulSet's claim templates' storage requests change from `current` to `desired`. */
export interface ClaimTemplateChanges {
  readonly grown: readonly ClaimSizeChange[];
  readonly shrunk: readonly ClaimSizeChange[];
}

/** A claim a StatefulSet made from one of its templates, with its ordinal. */
export interface TemplateClaim {
  readonly claim: PersistentVolumeClaim;
  readonly template: string;
  readonly ordinal: number;
}

/** The storage request of each claim template of a StatefulSet, by template name. */
export function claimTemplateSizes(statefulSet: KubeObject): ReadonlyMap<string, string> {
  const spec = isJsonObject(statefulSet.spec) ? statefulSet.spec : {};
  const templates = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [];
  const sizes = new Map<string, string>();
  for (const t of templates) {
    if (!isJsonObject(t) || !isJsonObject(t.metadata) || typeof t.metadata.name !== 'string') continue;
    const storage = storageRequest(t);
    if (storage !== undefined) sizes.set(t.metadata.name, storage);
  }
  return sizes;
}

/** The claim templates present in both whose storage request differs, grown or shrunk. */
export function claimTemplateChanges(current: KubeObject, desired: KubeObject): ClaimTemplateChanges {
  const before = claimTemplateSizes(current);
  const grown: ClaimSizeChange[] = [];
  const shrunk: ClaimSizeChange[] = [];
  for (const [template, to] of claimTemplateSizes(desired)) {
    const from = before.get(template);
    if (from === undefined) continue;
    const order = compareQuantities(to, from);
    if (order > 0) grown.push({ template, from, to });
    else if (order < 0) shrunk.push({ template, from, to });
  }
  return { grown, shrunk };
}

/** The names of a StatefulSet's claim templates, in order. */
export function claimTemplateNames(statefulSet: KubeObject): string[] {
  const spec = isJsonObject(statefulSet.spec) ? statefulSet.spec : {};
  const templates = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [];
  return templates.flatMap((t: unknown) =>
    isJsonObject(t) && isJsonObject(t.metadata) && typeof t.metadata.name === 'string' ? [t.metadata.name] : [],
  );
}

/**
 * The template and ordinal of a claim the StatefulSet's controller would name so
 * (`<template>-<statefulset>-<ordinal>`); undefined for any other name.
 */
export function claimTemplateOf(
  statefulSet: KubeObject,
  claimName: string,
): { readonly template: string; readonly ordinal: number } | undefined {
  const name = statefulSet.metadata.name ?? '';
  for (const template of claimTemplateNames(statefulSet)) {
    const prefix = `${template}-${name}-`;
    const ordinal = claimName.startsWith(prefix) ? claimName.slice(prefix.length) : '';
    if (/^(0|[1-9]\d*)$/.test(ordinal)) return { template, ordinal: Number(ordinal) };
  }
  return undefined;
}

/** The claims among `claims` a StatefulSet made from its templates (see `claimTemplateOf`). */
export function claimsOfStatefulSet(
  statefulSet: KubeObject,
  claims: readonly PersistentVolumeClaim[],
): TemplateClaim[] {
  return claims.flatMap((claim) => {
    const of = claimTemplateOf(statefulSet, claim.metadata.name ?? '');
    return of ? [{ claim, ...of }] : [];
  });
}

/** The storage a claim (or a claim template) asks for. */
export function storageRequest(claim: unknown): string | undefined {
  const spec = isJsonObject(claim) && isJsonObject(claim.spec) ? claim.spec : {};
  const requests = isJsonObject(spec.resources) && isJsonObject(spec.resources.requests) ? spec.resources.requests : {};
  const storage = requests.storage;
  return typeof storage === 'string' || typeof storage === 'number' ? String(storage) : undefined;
}

/** The storage a bound claim's volume has now. */
export function storageCapacity(claim: PersistentVolumeClaim): string | undefined {
  return claim.status?.capacity?.storage;
}

/** -1, 0 or 1 as `a` is less than, equal to or more than `b`; a text that is no quantity counts as 0. */
export function compareQuantities(a: string, b: string): number {
  const x = quantityNanos(a) ?? 0n;
  const y = quantityNanos(b) ?? 0n;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Whether a StatefulSet's claims hold what its templates ask: for each claim of a pod it keeps
 * (ordinal below its replicas) whose volume is smaller than its template's request, a verdict —
 * in progress while it grows (`Resizing`; `FileSystemResizePending` waits for its pod to start
 * again), failed when its resizer says it cannot (`ResizeInfeasible`). Undefined when every claim
 * is as large as asked, or not bound yet (then the claim's own rule speaks).
 */
export function claimSizeVerdict(
  statefulSet: KubeObject,
  claims: readonly PersistentVolumeClaim[],
): Verdict | undefined {
  const sizes = claimTemplateSizes(statefulSet);
  const spec = isJsonObject(statefulSet.spec) ? statefulSet.spec : {};
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const small = claimsOfStatefulSet(statefulSet, claims)
    .filter((c) => c.ordinal < replicas && c.claim.status?.phase === 'Bound')
    .flatMap((c) => {
      const asked = sizes.get(c.template);
      const has = storageCapacity(c.claim);
      return asked !== undefined && has !== undefined && compareQuantities(has, asked) < 0
        ? [{ ...c, asked, has }]
        : [];
    })
    .sort((a, b) => (a.claim.metadata.name ?? '').localeCompare(b.claim.metadata.name ?? ''));
  const first = small[0];
  if (!first) return undefined;
  const name = first.claim.metadata.name ?? '';
  const others = small.length > 1 ? ` (and ${small.length - 1} more)` : '';
  const infeasible = small.find((c) =>
    (c.claim.status?.allocatedResourceStatuses?.storage ?? '').endsWith('Infeasible'),
  );
  if (infeasible)
    return {
      readiness: 'Failed',
      reason: 'ResizeInfeasible',
      message: `claim ${infeasible.claim.metadata.name ?? ''} cannot grow to ${infeasible.asked}: its volume's resizer refused (${infeasible.claim.status?.allocatedResourceStatuses?.storage ?? ''}); set the size back to ${infeasible.has}`,
    };
  const pending = first.claim.status?.conditions?.some(
    (c) => c.type === 'FileSystemResizePending' && c.status === 'True',
  );
  const why = pending ? 'its file system grows when its pod next starts' : 'its volume is being expanded';
  return {
    readiness: 'InProgress',
    reason: 'Resizing',
    message: `claim ${name} has ${first.has} of the ${first.asked} asked${others}: ${why}`,
  };
}

/**
 * The desired StatefulSet with its claim templates asking what `current`'s ask: the part of a
 * change the API server takes in place, while larger claims are grown apart from it (see
 * operator/runtime/reconcile/storage-growth.ts). `render`'s preview, `diff` and `plan` dry-run this.
 */
export function withCurrentClaimSizes(desired: KubeObject, current: KubeObject): KubeObject {
  const sizes = claimTemplateSizes(current);
  const spec = isJsonObject(desired.spec) ? desired.spec : undefined;
  if (!spec || !Array.isArray(spec.volumeClaimTemplates)) return desired;
  const templates = spec.volumeClaimTemplates.map((t: unknown) => {
    const name = isJsonObject(t) && isJsonObject(t.metadata) ? t.metadata.name : undefined;
    const size = typeof name === 'string' ? sizes.get(name) : undefined;
    if (!size || !isJsonObject(t) || !isJsonObject(t.spec)) return t;
    const resources = isJsonObject(t.spec.resources) ? t.spec.resources : {};
    const requests = isJsonObject(resources.requests) ? resources.requests : {};
    return { ...t, spec: { ...t.spec, resources: { ...resources, requests: { ...requests, storage: size } } } };
  });
  return { ...desired, spec: { ...spec, volumeClaimTemplates: templates } };
}

/** Why a StatefulSet's smaller claim template is refused up front: a volume cannot shrink. */
export function shrinkRefusal(statefulSet: string, { template, from, to }: ClaimSizeChange): string {
  return (
    `StatefulSet ${statefulSet}: its claim template ${template} would ask ${to}, less than the ${from} it asks now: ` +
    `a volume cannot shrink, so nothing was changed. Set it back to ${from} or more; to start smaller, move the data to a new resource`
  );
}

/** What growing a StatefulSet's claims does, for previews: `data 2Gi → 5Gi` and how. */
export function growthNote(grown: readonly ClaimSizeChange[]): string {
  const sizes = grown.map((g) => `${g.template} ${g.from} → ${g.to}`).join(', ');
  return `claims grow (${sizes}): each patched where its StorageClass allows volume expansion, then the StatefulSet made again with its pods kept`;
}
