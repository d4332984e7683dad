import { sameJson } from './managed-fields';

/** Deep equality of JSON values, ignoring key order (list order counts; undefined is absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return sameJson(a, b);
}
