/**
 * Versions of a kind with schemas of their own, converted through one hub (the storage version),
 * as kubebuilder's Hub/Convertible do: each other version (a spoke) says how its spec goes to
 * the hub's and back. The conversion of a whole object lives here, pure, so that the reconciler's
 * `/convert` endpoint, the checks at synth and the tests all run the same code.
 *
 * A spoke that cannot say everything the hub can loses nothing: when going to the spoke drops or
 * rounds a value, the hub's spec rides along in an annotation, and coming back restores it — in
 * every field a change made as the spoke left alone.
 */
import type { KubeObject } from '../contract/objects';
import type { Schema, Static } from './schema';

/** How one version other than the storage version converts to and from it. */
export interface SpokeVersion<Hub = unknown> {
  /** The spec schema of this version. */
  readonly spec: Schema<unknown>;
  /** This version's spec as the storage version's. */
  toHub(spec: never): Hub;
  /** The storage version's spec as this version's. */
  fromHub(hub: Hub): unknown;
  /**
   * Specs of this version that must survive a round trip through the hub unchanged; checked
   * at synth, as the kind's samples are in the other direction. @default none
   */
  readonly examples?: readonly unknown[];
}

/**
 * Declares a version with its own spec schema and typed conversions to and from the storage
 * version's spec (`Hub`). Status is the same in every version: the reconciler writes it in the
 * storage version.
 *
 * @example
 * conversions: {
 *   v1alpha1: spokeVersion<typeof v1alpha1Spec, MemcachedSpec>({
 *     spec: v1alpha1Spec,
 *     toHub: ({ maxMemoryMB, ...rest }) => ({ ...rest, memory: `${maxMemoryMB}Mi` }),
 *     fromHub: ({ memory, ...rest }) => ({ ...rest, maxMemoryMB: mebibytes(memory) }),
 *   }),
 * }
 */
export function spokeVersion<S extends Schema<unknown>, Hub>(version: {
  readonly spec: S;
  readonly toHub: (spec: Static<S>) => Hub;
  readonly fromHub: (hub: Hub) => Static<S>;
  readonly examples?: readonly Static<S>[];
}): SpokeVersion<Hub> {
  return version;
}

/** What conversion needs to know of a kind (a CustomResourceKind has all of it). */
export interface ConvertibleKind {
  readonly group: string;
  readonly kind: string;
  readonly versions: readonly string[];
  readonly storageVersion: string;
  /** The spokes by version; versions without one have the storage version's schema. */
  readonly conversions: Readonly<Record<string, SpokeVersion | undefined>>;
}

/** The annotation that carries the hub's spec through a version that cannot hold all of it. */
export function conversionAnnotation(kind: { readonly group: string }): string {
  return `${kind.group}/conversion-data`;
}

type Spec = unknown;

/**
 * The object at another version of its kind. Metadata is kept but for the conversion
 * annotation (the only change the API server allows a conversion to make there); status passes
 * through; throws for a version the kind does not serve.
 */
export function convertObject<T extends KubeObject>(kind: ConvertibleKind, object: T, apiVersion: string): T {
  const from = versionOf(kind, String(object.apiVersion));
  const to = versionOf(kind, apiVersion);
  if (from === to) return { ...object, apiVersion };
  const key = conversionAnnotation(kind);
  const { [key]: kept, ...annotations } = object.metadata.annotations ?? {};
  const spec = object.spec;
  const hubSpec = spec === undefined ? undefined : toHub(kind, from, spec, kept);
  let outSpec = hubSpec;
  if (hubSpec !== undefined && to !== kind.storageVersion) {
    outSpec = fromHub(kind, to, hubSpec);
    // Lossy (a field the version lacks, a value it rounds): carry the hub's spec along.
    if (!deepEqual(toHub(kind, to, outSpec, undefined), hubSpec)) annotations[key] = JSON.stringify(hubSpec);
  }
  const metadata = { ...object.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const converted: KubeObject = { ...object, apiVersion, metadata };
  if (outSpec !== undefined) converted.spec = outSpec;
  return converted as T;
}

/**
 * What is wrong with the kind's conversions for a spec of the storage version: each spoke's
 * spec must pass that version's schema and come back as the same spec. Empty when all is well.
 */
export function hubRoundTripProblems(
  kind: ConvertibleKind,
  hubSpec: unknown,
  violations: (spec: unknown, version: string) => string[],
): string[] {
  const problems: string[] = [];
  for (const version of spokes(kind)) {
    try {
      const spoke = fromHub(kind, version, hubSpec);
      problems.push(...violations(spoke, version).map((v) => `as ${version}: ${v}`));
      const object = { apiVersion: `${kind.group}/${kind.storageVersion}`, metadata: {}, spec: hubSpec };
      const back = convertObject(kind, convertObject(kind, object, `${kind.group}/${version}`), object.apiVersion);
      if (!deepEqual(back.spec, hubSpec))
        problems.push(
          `${kind.storageVersion} → ${version} → ${kind.storageVersion} gives ${JSON.stringify(back.spec)}`,
        );
    } catch (err) {
      problems.push(`converting to ${version} throws: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/** The same for a spoke's own examples: the hub's spec must pass its schema, and come back unchanged. */
export function spokeRoundTripProblems(
  kind: ConvertibleKind,
  version: string,
  spokeSpec: unknown,
  violations: (spec: unknown, version: string) => string[],
): string[] {
  try {
    const hub = toHub(kind, version, spokeSpec, undefined);
    const problems = violations(hub, kind.storageVersion).map((v) => `as ${kind.storageVersion}: ${v}`);
    const back = fromHub(kind, version, hub);
    if (!deepEqual(back, spokeSpec))
      problems.push(`${version} → ${kind.storageVersion} → ${version} gives ${JSON.stringify(back)}`);
    return problems;
  } catch (err) {
    return [`converting to ${kind.storageVersion} throws: ${err instanceof Error ? err.message : String(err)}`];
  }
}

/** The served versions that convert through the hub. */
export function spokes(kind: ConvertibleKind): string[] {
  return kind.versions.filter((v) => v !== kind.storageVersion && kind.conversions[v] !== undefined);
}

function versionOf(kind: ConvertibleKind, apiVersion: string): string {
  const [group, version] = apiVersion.split('/');
  if (group !== kind.group || version === undefined || !kind.versions.includes(version))
    throw new Error(
      `${kind.kind}.${kind.group} is not served as ${JSON.stringify(apiVersion)}; it is served as ${kind.versions
        .map((v) => `${kind.group}/${v}`)
        .join(', ')}`,
    );
  return version;
}

/** A spec of `version` as the hub's; with `kept` (the annotation), what the version could not hold is restored. */
function toHub(kind: ConvertibleKind, version: string, spec: Spec, kept: string | undefined): Spec {
  const spoke = kind.conversions[version];
  if (!spoke) return spec;
  const hub = spoke.toHub(spec as never);
  if (kept === undefined) return hub;
  let previous: unknown;
  try {
    previous = JSON.parse(kept);
  } catch {
    // Not ours to understand (edited by hand): the conversion stands as it is.
    return hub;
  }
  // What the hub would be had the spec not been changed since it was converted from `previous`:
  // every field the change left alone is the previous hub's, exactly (a value the version could
  // only round, a field it lacks); every field it changed is the change's.
  const unchanged = spoke.toHub(spoke.fromHub(previous) as never);
  return mergeEdits(previous, unchanged, hub);
}

function fromHub(kind: ConvertibleKind, version: string, hub: Spec): Spec {
  const spoke = kind.conversions[version];
  return spoke ? spoke.fromHub(hub) : hub;
}

/**
 * A three-way merge: `edited` where it differs from `base`, `previous` where it does not (and
 * for the fields neither has), at any depth of objects.
 */
function mergeEdits(previous: unknown, base: unknown, edited: unknown): unknown {
  if (deepEqual(base, edited)) return previous;
  if (!isPlainObject(previous) || !isPlainObject(base) || !isPlainObject(edited)) return edited;
  const out: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(previous), ...Object.keys(edited)])) {
    const merged = k in base || k in edited ? mergeEdits(previous[k], base[k], edited[k]) : previous[k];
    if (merged !== undefined) out[k] = merged;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality of JSON values; a field set to undefined is a field absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!deepEqual(a[k], b[k])) return false;
  return true;
}
