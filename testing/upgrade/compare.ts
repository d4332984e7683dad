/** What an upgrade test compares: the children before and after, the audit log's writes, and conversion round trips. */
import { type ControllerDeclaration, customResourceType, type KubeObject } from '../../constructs/contract';
import { type KubeClient, appliedFieldChanges, type FieldChange, sameJson } from '../../operator/runtime/client';
import { reconcilerAuditWrites } from '../audit-log';

/** One child the plan said the new version would write (`plan -o json`'s `changes`). */
export interface PlannedChange {
  readonly resource: string;
  readonly child: string;
  readonly verb: 'created' | 'changed' | 'pruned';
  readonly fields: readonly FieldChange[];
}

/** The children of the kinds' owned types in a namespace, by `Kind/name`. */
export async function snapshotChildren(
  client: KubeClient,
  decls: readonly ControllerDeclaration[],
  namespace: string,
): Promise<Map<string, KubeObject>> {
  const out = new Map<string, KubeObject>();
  const types = new Map(decls.flatMap((d) => d.owns ?? []).map((t) => [`${t.group}/${t.kind}`, t]));
  for (const type of types.values())
    for (const o of (await client.list(type, namespace)).items) out.set(`${type.kind}/${o.metadata.name ?? ''}`, o);
  return out;
}

/** `Kind/name` of each child the reconciler wrote after `mark` (dry runs, status and Events aside). */
function childWrites(auditLog: string, mark: number, owned: readonly ControllerDeclaration[]): Set<string> {
  const kinds = new Map(owned.flatMap((d) => d.owns ?? []).map((t) => [`${t.group}/${t.resource}`, t.kind]));
  const written = new Set<string>();
  for (const w of reconcilerAuditWrites(auditLog, mark)) {
    if (w.subresource || w.verb === 'deletecollection') continue;
    const kind = kinds.get(`${w.apiGroup}/${w.resource}`);
    if (kind && w.name) written.add(`${kind}/${w.name}`);
  }
  return written;
}

const spell = (changes: readonly FieldChange[]) => changes.map((c) => `${c.field} ${c.change}`).sort();

/**
 * The plan against what happened: the children written (from the audit log) against those it
 * named, and in each changed child the fields of the reconciler's apply against those it named.
 */
export function compareWrites(o: {
  readonly plan: { readonly changes: readonly PlannedChange[] };
  readonly before: ReadonlyMap<string, KubeObject>;
  readonly after: ReadonlyMap<string, KubeObject>;
  readonly auditLog: string;
  readonly mark: number;
  readonly fieldManager: string;
  readonly owned: readonly ControllerDeclaration[];
}): { written: string[]; problems: string[] } {
  const written = childWrites(o.auditLog, o.mark, o.owned);
  const planned = new Map(o.plan.changes.map((c) => [c.child, c]));
  const problems: string[] = [];
  for (const child of written)
    if (!planned.has(child)) problems.push(`${child}: written by the new version, but the plan said unchanged`);
  for (const [child, change] of planned) {
    if (!written.has(child)) {
      problems.push(`${child}: the plan said ${change.verb}, but the new version did not write it`);
      continue;
    }
    const [before, after] = [o.before.get(child), o.after.get(child)];
    if (change.verb !== 'changed' || !before || !after) continue;
    const happened = spell(appliedFieldChanges(before, after, o.fieldManager));
    const said = spell(change.fields);
    if (JSON.stringify(happened) !== JSON.stringify(said))
      problems.push(`${child}: the plan said ${said.join(', ')}; the new version changed ${happened.join(', ')}`);
  }
  return { written: [...written].sort(), problems };
}

/**
 * Every stored object read through every served version (the API server calls the new code's
 * conversion) and converted back by the new code: its spec must come back as stored.
 */
export async function roundTripProblems(
  client: KubeClient,
  decl: ControllerDeclaration,
  namespace: string,
): Promise<string[]> {
  const k = decl.for;
  const stored = (await client.list(customResourceType(k), namespace)).items;
  const problems: string[] = [];
  for (const version of k.versions.filter((v) => v !== k.storageVersion)) {
    const served = new Map(
      (await client.list(customResourceType(k, version), namespace)).items.map((o) => [o.metadata.name, o]),
    );
    for (const object of stored) {
      const seen = served.get(object.metadata.name);
      const back = seen && k.convert({ ...seen, apiVersion: `${k.group}/${version}` }, k.apiVersion);
      if (!sameJson(back?.spec, object.spec))
        problems.push(
          `${k.kind} ${object.metadata.name}: ${k.storageVersion} → ${version} → ${k.storageVersion} gives ${JSON.stringify(back?.spec)}, stored ${JSON.stringify(object.spec)}`,
        );
    }
  }
  return problems;
}
