/**
 * Renders of one kind are alike: a thousand Memcacheds' Deployments differ in their names, labels
 * and owner, while their pod template (containers, probes, resources, security contexts) is the
 * same. Kept one per resource (see RenderCache), each held its own copy of those parts: about
 * 3 KiB of heap per Memcached, most of the memory a reconciler adds per resource it keeps.
 *
 * `shareEqualParts(value, reference)` gives `value` with every part equal to the part of
 * `reference` at the same path replaced by that part of `reference`: the same JSON, sharing what
 * is the same. Both must be frozen once shared (a kept render is), since a part then belongs to
 * both. Only plain objects and arrays are shared; anything else is kept as it is (strings too: a
 * render's come mostly from its kind's code, held once already, and taking the reference's copies
 * of the rest measured no smaller).
 */
export function shareEqualParts<T>(value: T, reference: unknown): T {
  return share(value, reference) as T;
}

function share(value: unknown, reference: unknown): unknown {
  if (value === reference || reference === undefined || reference === null) return value;
  if (Array.isArray(value)) return Array.isArray(reference) ? shareArray(value, reference) : value;
  if (isPlainObject(value) && isPlainObject(reference)) return shareObject(value, reference);
  return value;
}

function shareArray(value: readonly unknown[], reference: readonly unknown[]): unknown[] {
  const parts = value.map((item, i) => share(item, reference[i]));
  if (parts.length === reference.length && parts.every((part, i) => part === reference[i]))
    return reference as unknown[];
  return parts.some((part, i) => part !== value[i]) ? parts : (value as unknown[]);
}

function shareObject(value: Record<string, unknown>, reference: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(value);
  const referenceKeys = Object.keys(reference);
  // The same keys in the same order: the JSON of the reference's part is the JSON of this one.
  let same = keys.length === referenceKeys.length;
  let changed = false;
  const parts = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const [i, key] of keys.entries()) {
    const part = share(value[key], Object.hasOwn(reference, key) ? reference[key] : undefined);
    parts[key] = part;
    same &&= referenceKeys[i] === key && part === reference[key];
    changed ||= part !== value[key];
  }
  if (same) return reference;
  // Nothing of it shared: itself, not a copy.
  return changed ? parts : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
