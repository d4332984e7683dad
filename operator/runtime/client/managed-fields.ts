import type { FieldSet, KubeObject, ManagedFieldsEntry } from '../../../constructs/contract/objects';
import { isJsonObject } from '../../../constructs/contract/json';
import { sameQuantity } from '../../../constructs/contract/quantity';

export type { FieldSet, ManagedFieldsEntry };

/** The entry recording what `manager` last applied (server-side apply) to the object itself. */
export function appliedEntry(obj: KubeObject, manager: string): ManagedFieldsEntry | undefined {
  return (obj.metadata.managedFields ?? []).find(
    (e) => e.manager === manager && e.operation === 'Apply' && !e.subresource && e.fieldsType === 'FieldsV1',
  );
}

/**
 * What `manager` last applied to `obj`: the live values of exactly the fields its Apply entry in
 * `managedFields` owns — the applied configuration, as client-go's Extract* functions compute
 * it. Undefined when the manager has applied nothing to this object (or at another apiVersion),
 * or when the field set uses a form this reader does not know: the caller must then apply.
 */
export function extractApplied(
  obj: KubeObject,
  manager: string,
  apiVersion?: string,
): Record<string, unknown> | undefined {
  const owned = extractOwned(obj, manager, apiVersion);
  return owned && unwrapObject(owned);
}

function unwrapObject(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, unwrap(x)]));
}

/** As extractApplied, with the values owned whole marked `Atomic`, for `matches`. */
function extractOwned(obj: KubeObject, manager: string, apiVersion?: string): Record<string, unknown> | undefined {
  const entry = appliedEntry(obj, manager);
  if (!entry?.fieldsV1) return undefined;
  if (apiVersion && entry.apiVersion && entry.apiVersion !== apiVersion) return undefined;
  try {
    return extractObject(obj, entry.fieldsV1);
  } catch (err) {
    if (err instanceof UnknownFieldSet) return undefined;
    throw err;
  }
}

class UnknownFieldSet extends Error {}

/**
 * A field our manager owns whose value the server dropped because it was empty (a Go zero value
 * under omitempty: "", 0, false): applying the zero value again would change nothing.
 */
class Dropped {
  toString(): string {
    return '<dropped by the server>';
  }
}
const DROPPED = new Dropped();

function unwrap(v: unknown): unknown {
  if (v instanceof Atomic) return v.value;
  if (v instanceof Dropped) return undefined;
  if (Array.isArray(v)) return v.map(unwrap);
  return isJsonObject(v) ? unwrapObject(v) : v;
}

function isLeaf(set: FieldSet): boolean {
  return Object.keys(set).every((k) => k === '.');
}

/**
 * A value owned whole: a scalar, or an atomic list or map (e.g. a StatefulSet's
 * `volumeClaimTemplates`). The API server fills defaults into atomic values too, so they are
 * compared as "what we applied is all there", not as equal.
 */
export class Atomic {
  constructor(readonly value: unknown) {}
}

function extractValue(value: unknown, set: FieldSet): unknown {
  if (isLeaf(set)) return value !== null && typeof value === 'object' ? new Atomic(value) : value;
  if (Array.isArray(value)) return extractList(value, set);
  if (isJsonObject(value)) return extractObject(value, set);
  // The set names sub-fields but the live value is a scalar: the shapes disagree.
  throw new UnknownFieldSet();
}

function extractObject(obj: Record<string, unknown>, set: FieldSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(set)) {
    if (key === '.') continue;
    if (!key.startsWith('f:')) throw new UnknownFieldSet();
    const name = key.slice(2);
    // Owned but absent: an empty value the server dropped.
    out[name] = name in obj ? extractValue(obj[name], child) : DROPPED;
  }
  return out;
}

function extractList(list: unknown[], set: FieldSet): unknown[] {
  const byKey: { match: (item: unknown, index: number) => boolean; set: FieldSet }[] = [];
  for (const [key, child] of Object.entries(set)) {
    if (key === '.') continue;
    const kind = key.slice(0, 2);
    const text = key.slice(2);
    if (kind === 'k:') {
      const wanted: unknown = JSON.parse(text);
      if (!isJsonObject(wanted)) throw new UnknownFieldSet();
      byKey.push({ match: (item) => isKeyMatch(item, wanted), set: child });
    } else if (kind === 'v:') {
      const wanted: unknown = JSON.parse(text);
      byKey.push({ match: (item) => sameJson(item, wanted), set: child });
    } else if (kind === 'i:') {
      const index = Number(text);
      byKey.push({ match: (_item, i) => i === index, set: child });
    } else {
      throw new UnknownFieldSet();
    }
  }
  const out: unknown[] = [];
  list.forEach((item, i) => {
    const owned = byKey.find((k) => k.match(item, i));
    if (owned) out.push(extractValue(item, owned.set));
  });
  return out;
}

function isKeyMatch(item: unknown, key: Record<string, unknown>): boolean {
  if (!isJsonObject(item)) return false;
  return Object.entries(key).every(([k, v]) => sameJson(item[k], v));
}

/**
 * Drops what the API server does not keep: undefined and null values, and empty maps and lists
 * (omitempty), recursively. Both sides of a comparison go through it, so `labels: {}` in a
 * desired object equals a live object without labels.
 */
export function pruneEmpty(v: unknown): unknown {
  if (v instanceof Dropped) return v;
  if (v instanceof Atomic) {
    const p = pruneEmpty(v.value);
    return p !== null && typeof p === 'object' && Object.keys(p).length === 0 ? p : new Atomic(p);
  }
  if (Array.isArray(v)) return v.map(pruneEmpty);
  if (!isJsonObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined || x === null) continue;
    const p = pruneEmpty(x);
    if (!isEmptyValue(p)) out[k] = p;
  }
  return out;
}

/**
 * `pruneEmpty` of a plain JSON value that shares what it leaves as it was: the value itself when
 * there is nothing to prune, else a copy of only the path to what is pruned. A kept render's side
 * of the change check is kept as long as the render, and a whole second copy of every render was
 * a tenth of the reconciler's heap at 1000 resources (bench/RESULTS.md).
 */
export function pruneEmptyShared(v: unknown): unknown {
  if (v instanceof Dropped || v instanceof Atomic) return pruneEmpty(v);
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    v.forEach((x: unknown, i) => {
      const p = pruneEmptyShared(x);
      if (p !== x) out ??= v.slice(0, i);
      out?.push(p);
    });
    return out ?? v;
  }
  if (!isJsonObject(v)) return v;
  let out: Record<string, unknown> | undefined;
  const entries = Object.entries(v);
  entries.forEach(([k, x], i) => {
    const p = x === undefined || x === null ? undefined : pruneEmptyShared(x);
    const kept = p !== undefined && !isEmptyValue(p);
    if (!out && (!kept || p !== x)) out = Object.fromEntries(entries.slice(0, i));
    if (out && kept) out[k] = p;
  });
  return out ?? v;
}

/** An empty map or list (not one the server dropped): what omitempty leaves out. */
function isEmptyValue(p: unknown): boolean {
  return p !== null && typeof p === 'object' && !(p instanceof Dropped) && Object.keys(p).length === 0;
}

/**
 * Deep equality of JSON values, ignoring the order of object keys: equal when their JSON is,
 * keys sorted (a key set to undefined is absent, an undefined list element null). Compared in
 * place rather than by serializing both sides: it runs on every status a reconcile computes and
 * every update an informer sees, and the sorted copies were a tenth of the reconciler's garbage.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && sameList(a, b);
  return isJsonObject(a) && isJsonObject(b) && sameObject(a, b);
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
  return true;
}

function sameObject(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  let keys = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k) || a[k] === undefined) continue;
    if (!sameJson(a[k], b[k])) return false;
    keys++;
  }
  for (const k in b) if (Object.hasOwn(b, k) && b[k] !== undefined) keys--;
  return keys === 0;
}

/**
 * Whether the desired value equals the applied one: same keys and values, lists element by
 * element — except inside an atomic value, where every desired field must be there with its
 * value but server defaults may be added. `at` names the field a value is in, so that
 * quantities compare by value (see sameScalar).
 */
function matches(desired: unknown, applied: unknown, at: FieldName = TOP): boolean {
  if (applied instanceof Atomic) return contains(applied.value, desired, at);
  if (applied instanceof Dropped) return isZeroValue(desired);
  if (Array.isArray(desired)) {
    if (!Array.isArray(applied) || applied.length !== desired.length) return false;
    for (let i = 0; i < desired.length; i++) if (!matches(desired[i], applied[i], at)) return false;
    return true;
  }
  if (isJsonObject(desired)) return isJsonObject(applied) && matchesObject(desired, applied, at);
  return sameScalar(desired, applied, at);
}

function matchesObject(desired: Record<string, unknown>, applied: Record<string, unknown>, at: FieldName): boolean {
  for (const k of Object.keys(desired)) {
    if (!(k in applied) || !matches(desired[k], applied[k], { name: k, parent: at.name })) return false;
  }
  // An owned field the server dropped as empty is absent either way when no longer desired.
  for (const k of Object.keys(applied)) if (!(k in desired) && !(applied[k] instanceof Dropped)) return false;
  return true;
}

/** Whether `live` holds every field of `desired` with an equal value (lists of equal length). */
function contains(live: unknown, desired: unknown, at: FieldName): boolean {
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) return false;
    for (let i = 0; i < desired.length; i++) if (!contains(live[i], desired[i], at)) return false;
    return true;
  }
  if (isJsonObject(desired)) {
    if (!isJsonObject(live)) return false;
    for (const k of Object.keys(desired))
      if (!contains(live[k], desired[k], { name: k, parent: at.name })) return false;
    return true;
  }
  return sameScalar(desired, live, at);
}

/**
 * Where a value is: its field's name and its parent's, all a comparison needs of its path (see
 * isQuantityField). Two names rather than the whole path, which was copied at every field.
 */
interface FieldName {
  readonly name?: string;
  readonly parent?: string;
}
const TOP: FieldName = {};

/** The zero values Go's omitempty drops: what an owned-but-absent field may have been applied as. */
function isZeroValue(v: unknown): boolean {
  return v === '' || v === 0 || v === false || v === null || v === undefined;
}

/**
 * Scalars are equal as JSON, except quantities (resource requests and limits, capacities,
 * hard quotas, limit ranges, overheads, `sizeLimit`, an autoscaler's metric targets): the API
 * server stores those canonically ("2048Mi" as "2Gi", "0.5" as "500m", 1 as "1"), so they
 * compare by value. Elsewhere a string that looks like
 * a quantity is kept as written, and compared as written.
 */
function sameScalar(desired: unknown, applied: unknown, at: FieldName): boolean {
  if (desired === applied) return true;
  const isScalar = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';
  return isScalar(desired) && isScalar(applied) && isQuantityField(at) && sameQuantity(desired, applied);
}

const QUANTITY_MAPS = new Set([
  'requests',
  'limits',
  'capacity',
  'allocatable',
  'hard',
  'overhead',
  'max',
  'min',
  'default',
  'defaultRequest',
  'maxLimitRequestRatio',
]);

/** Whether the field `at` holds a quantity in the built-in types. */
function isQuantityField({ name, parent }: FieldName): boolean {
  return (
    name === 'sizeLimit' ||
    (parent !== undefined && QUANTITY_MAPS.has(parent)) ||
    // A HorizontalPodAutoscaler's metric target (autoscaling/v2 MetricTarget).
    (parent === 'target' && (name === 'averageValue' || name === 'value'))
  );
}

/**
 * Whether applying `desired` as `manager` would change what that manager owns on `live`:
 * true when a desired value differs from the live one, when desired sets a field the manager
 * does not own yet, and when a field the manager owns is no longer desired (server-side apply
 * removes it — the case a "desired ⊆ live" check misses). False means the apply is a no-op and
 * may be skipped.
 */
export function needsApply(desired: KubeObject, live: KubeObject | undefined, manager: string): boolean {
  if (!live) return true;
  const { uid, resourceVersion } = live.metadata;
  // A frozen desired object (a kept render) cannot have changed, and a uid at a resourceVersion
  // names one state of the live object: the answer given for that pair still holds. A reconcile
  // asks twice (to hold a child, then to apply it), and again each time a pod's event brings its
  // owner back with the same render and child.
  const known = Object.isFrozen(desired) ? answers.get(desired) : undefined;
  if (
    known &&
    uid &&
    resourceVersion &&
    known.manager === manager &&
    known.uid === uid &&
    known.resourceVersion === resourceVersion
  )
    return known.answer;
  const answer = compareOwned(desired, live, manager);
  if (Object.isFrozen(desired) && uid && resourceVersion)
    answers.set(desired, { uid, resourceVersion, manager, answer });
  return answer;
}

/** needsApply's last answer for each frozen desired object, with the live state it was given for. */
const answers = new WeakMap<
  KubeObject,
  { readonly uid: string; readonly resourceVersion: string; readonly manager: string; readonly answer: boolean }
>();

function compareOwned(desired: KubeObject, live: KubeObject, manager: string): boolean {
  const applied = extractOwned(live, manager, desired.apiVersion);
  if (!applied) return true;
  return !matches(comparable(desired), pruneEmpty(applied));
}

/** The desired side of the comparison, made once for a frozen desired object (a kept render). */
const comparables = new WeakMap<KubeObject, unknown>();

function comparable(desired: KubeObject): unknown {
  const known = comparables.get(desired);
  if (known !== undefined) return known;
  // apiVersion, kind, name and namespace identify the object; they are not in the field set.
  const { apiVersion: _a, kind: _k, metadata, ...rest } = desired;
  const { name: _n, namespace: _ns, ...meta } = metadata;
  // Shared with the render where nothing is pruned: kept as long as the render is.
  const pruned = pruneEmptyShared({ ...rest, metadata: meta });
  if (Object.isFrozen(desired)) comparables.set(desired, pruned);
  return pruned;
}
