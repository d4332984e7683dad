/**
 * Whether `actual` already holds everything `desired` says: every field of desired is present
 * with an equal value (objects compared field by field, lists element by element with equal
 * length). Fields only in `actual` (server defaults, status, other managers' fields) are
 * ignored. A reconcile applies only when this is false, so a no-op reconcile writes nothing.
 */
export function isSubset(desired: unknown, actual: unknown): boolean {
  if (desired === null || typeof desired !== 'object') return desired === actual;
  if (Array.isArray(desired)) {
    return Array.isArray(actual) && actual.length === desired.length && desired.every((d, i) => isSubset(d, actual[i]));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const a = actual as Record<string, unknown>;
  return Object.entries(desired as Record<string, unknown>).every(([k, v]) => v === undefined || isSubset(v, a[k]));
}

/** Deep equality of JSON values, ignoring key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return isSubset(a, b) && isSubset(b, a);
}
