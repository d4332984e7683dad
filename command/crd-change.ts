/**
 * What applying a new version's CRD would change in the cluster's: versions added or removed,
 * the storage version, the conversion strategy, each version's schema (by field), and what the
 * API server would refuse of it. Read from the live CRD and the new code's kind; nothing is
 * written.
 */
import { stringify } from 'yaml';
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import type { LiveCrd } from './served-version';

/** A field of a version's schema that the new CRD adds, removes or defines otherwise. */
export interface SchemaChange {
  readonly version: string;
  /** `spec.resources.memory`; `[]` stands for an array's items. */
  readonly field: string;
  readonly change: 'added' | 'removed' | 'changed';
}

export interface CrdChange {
  readonly name: string;
  /** False when the cluster has no such CRD yet: all of it would be new. */
  readonly installed: boolean;
  readonly versionsAdded: readonly string[];
  readonly versionsRemoved: readonly string[];
  readonly storageVersion: { readonly from?: string; readonly to: string };
  readonly conversion: { readonly from: string; readonly to: string };
  readonly schemaChanges: readonly SchemaChange[];
  /** Why the API server would refuse the new CRD itself, if it would. */
  readonly refused: readonly string[];
}

/** The change from the live CRD (or none) to the one the new code's kind defines. */
export function crdChange(live: LiveCrd | undefined, decl: ControllerDeclaration): CrdChange {
  const kind = decl.for;
  const conversionTo = kind.needsConversion ? 'Webhook' : 'None';
  const liveVersions = live?.spec.versions ?? [];
  const names = liveVersions.map((v) => v.name);
  const stored = live?.status?.storedVersions ?? [];
  const schemaChanges = kind.versions.flatMap((version) => {
    const before = liveVersions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
    return before === undefined ? [] : schemaFieldChanges(version, before, kind.openApiSchema(version));
  });
  return {
    name: kind.crdName,
    installed: live !== undefined,
    versionsAdded: kind.versions.filter((v) => !names.includes(v)),
    versionsRemoved: names.filter((v) => !kind.versions.includes(v)),
    storageVersion: { from: liveVersions.find((v) => v.storage)?.name, to: kind.storageVersion },
    conversion: { from: live ? (live.spec.conversion?.strategy ?? 'None') : 'None', to: conversionTo },
    schemaChanges,
    refused: stored
      .map((v, i) => [v, i] as const)
      .filter(([v]) => !kind.versions.includes(v))
      .map(
        ([v, i]) =>
          `status.storedVersions[${i}]: Invalid value: "${v}": must appear in spec.versions (objects may still be stored as ${v}: keep serving it until they are migrated and storedVersions is trimmed)`,
      ),
  };
}

/** Whether applying the new CRD would change anything. */
export function crdChanges(change: CrdChange): boolean {
  return (
    !change.installed ||
    change.versionsAdded.length > 0 ||
    change.versionsRemoved.length > 0 ||
    change.storageVersion.from !== change.storageVersion.to ||
    change.conversion.from !== change.conversion.to ||
    change.schemaChanges.length > 0 ||
    change.refused.length > 0
  );
}

/** The change as report lines. */
export function crdChangeReport(change: CrdChange): string[] {
  if (!change.installed) return [`CRD ${change.name}: not installed; applying the new one installs it`];
  if (!crdChanges(change)) return [`CRD ${change.name}: unchanged`];
  const lines = [`CRD ${change.name}:`];
  if (change.versionsAdded.length) lines.push(`  versions added: ${change.versionsAdded.join(', ')}`);
  if (change.versionsRemoved.length) lines.push(`  versions removed: ${change.versionsRemoved.join(', ')}`);
  const { from, to } = change.storageVersion;
  if (from !== to) lines.push(`  storage version: ${from ?? '(none)'} → ${to}`);
  if (change.conversion.from !== change.conversion.to)
    lines.push(`  conversion: ${change.conversion.from} → ${change.conversion.to}`);
  for (const s of change.schemaChanges) lines.push(`  ${s.version} schema: ${s.field} ${s.change}`);
  for (const r of change.refused) lines.push(`  the API server would refuse it: ${r}`);
  return lines;
}

/** Each field of a schema (by path) with its definition, descriptions aside, children apart. */
function schemaFields(schema: unknown, path = '', out = new Map<string, string>()): Map<string, string> {
  if (typeof schema !== 'object' || schema === null) return out;
  const { properties, items, description: _d, ...own } = schema as Record<string, unknown>;
  if (path) out.set(path, stringify(own, { sortMapEntries: true }));
  if (typeof properties === 'object' && properties !== null)
    for (const [k, v] of Object.entries(properties)) schemaFields(v, path ? `${path}.${k}` : k, out);
  if (items !== undefined) schemaFields(items, `${path}[]`, out);
  return out;
}

/** The fields a version's schema adds, removes or defines otherwise. */
export function schemaFieldChanges(version: string, before: unknown, after: unknown): SchemaChange[] {
  const a = schemaFields(before);
  const b = schemaFields(after);
  const out: SchemaChange[] = [];
  for (const [field, definition] of b) {
    const was = a.get(field);
    if (was === undefined) out.push({ version, field, change: 'added' });
    else if (was !== definition) out.push({ version, field, change: 'changed' });
  }
  for (const field of a.keys()) if (!b.has(field)) out.push({ version, field, change: 'removed' });
  return out;
}
