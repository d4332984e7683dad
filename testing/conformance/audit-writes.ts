/** The writes a reconciler made, as the API server's audit log records them. */
import * as fs from 'node:fs';
import { isJsonObject, jsonAt, parseJson, stringAt } from '../../constructs/contract/json';

/** How many entries the audit log holds now: a mark to read the writes after. */
export function auditLength(log: string): number {
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
}

/**
 * Each write the reconciler (its User-Agent) made in `namespace` after `mark`, as
 * `<verb> <resource>[/<subresource>] <name>` — its Events and leader Lease aside, which it writes
 * whatever its kinds do, and dry runs, which write nothing.
 */
export function reconcilerWrites(log: string, mark: number, namespace: string): string[] {
  const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).slice(mark);
  const writes: string[] = [];
  for (const line of lines) {
    const e = parseJson(line);
    const ref = (field: string) => stringAt(e, 'objectRef', field);
    if (!stringAt(e, 'userAgent')?.startsWith('cdk8s-operator-kit-reconciler') || !isJsonObject(jsonAt(e, 'objectRef')))
      continue;
    const verb = stringAt(e, 'verb') ?? '';
    if (!['create', 'update', 'patch', 'delete', 'deletecollection'].includes(verb)) continue;
    if (stringAt(e, 'requestURI')?.includes('dryRun') || ref('namespace') !== namespace) continue;
    const resource = ref('resource') ?? '';
    if (resource === 'events' || resource === 'leases') continue;
    const sub = ref('subresource');
    writes.push(`${verb} ${resource}${sub ? `/${sub}` : ''} ${ref('name') ?? ''}`);
  }
  return writes;
}
