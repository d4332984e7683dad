/**
 * Which fields of an object a write changes, by path (`spec.template.spec.containers[0].image`):
 * what `plan` predicts for each child and what an upgrade test checks the reconciler then wrote.
 */
import type { KubeObject } from '../../../constructs/contract';
import { extractApplied } from './managed-fields';
import { withoutBookkeeping } from './resource';

/** One field a write adds, removes or changes. */
export interface FieldChange {
  readonly field: string;
  readonly change: 'added' | 'removed' | 'changed';
}

/**
 * An object as a reconcile would change it: without the bookkeeping of every write, its
 * generation (it follows the spec) and its status (an apply leaves it alone).
 */
export function changeableFields(o: KubeObject): object {
  const { generation: _g, ...metadata } = withoutBookkeeping(o).metadata;
  const { status: _s, ...rest } = o;
  return { ...rest, metadata };
}

/** The fields that differ between an object and what it would be, by path (status and bookkeeping aside). */
export function fieldChanges(before: KubeObject, after: KubeObject): FieldChange[] {
  return leafChanges(changeableFields(before), changeableFields(after));
}

/**
 * The fields of what `manager` applies (its managed fields) that differ between two versions of
 * an object: what its writes changed, and nothing another controller did (a Deployment's
 * revision annotation, defaults). Falls back to every field when the managed fields cannot be read.
 */
export function appliedFieldChanges(before: KubeObject, after: KubeObject, manager: string): FieldChange[] {
  const a = extractApplied(before, manager);
  const b = extractApplied(after, manager);
  return a && b ? leafChanges(a, b) : fieldChanges(before, after);
}

function leafChanges(before: unknown, after: unknown): FieldChange[] {
  const a = flatten(before);
  const b = flatten(after);
  const out: FieldChange[] = [];
  for (const [field, value] of b) {
    const was = a.get(field);
    if (was === undefined) out.push({ field, change: 'added' });
    else if (was !== value) out.push({ field, change: 'changed' });
  }
  for (const field of a.keys()) if (!b.has(field)) out.push({ field, change: 'removed' });
  return out;
}

/** Leaf paths to their JSON values. */
function flatten(value: unknown, path = '', out = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(path, '[]');
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, out));
  } else if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) out.set(path, '{}');
    for (const [k, v] of entries) flatten(v, path ? `${path}.${k}` : k, out);
  } else if (value !== undefined) {
    // Undefined: a field the server dropped as empty (see extractApplied), on this side not there.
    // Kept, a dropped field on both sides read as added (Map.get said undefined for it and for none).
    out.set(path, JSON.stringify(value));
  }
  return out;
}
