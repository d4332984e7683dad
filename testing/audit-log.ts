/** The writes a reconciler made, as the API server's audit log records them: read by upgrade and conformance tests. */
import * as fs from 'node:fs';
import { isJsonObject, jsonAt, parseJson, stringAt } from '../constructs/contract/json';

/** How many entries the audit log holds now: a mark to read the writes after. */
export function auditLength(log: string): number {
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
}

/** One write request of the reconciler, as its audit entry's objectRef names it. */
export interface AuditedWrite {
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  /** A create names its object in the body, not the URI: the audit records it here too. */
  readonly name?: string;
}

/** The write requests (create, update, patch, delete, deletecollection) the reconciler (its User-Agent) made after `mark`, dry runs aside. */
export function reconcilerAuditWrites(log: string, mark: number): AuditedWrite[] {
  const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).slice(mark);
  const writes: AuditedWrite[] = [];
  for (const line of lines) {
    const e = parseJson(line);
    const ref = (field: string) => stringAt(e, 'objectRef', field);
    if (!stringAt(e, 'userAgent')?.startsWith('cdk8s-operator-kit-reconciler') || !isJsonObject(jsonAt(e, 'objectRef')))
      continue;
    const verb = stringAt(e, 'verb') ?? '';
    if (!['create', 'update', 'patch', 'delete', 'deletecollection'].includes(verb)) continue;
    if (stringAt(e, 'requestURI')?.includes('dryRun')) continue;
    writes.push({
      verb,
      apiGroup: ref('apiGroup') ?? '',
      resource: ref('resource') ?? '',
      subresource: ref('subresource'),
      namespace: ref('namespace'),
      name: ref('name'),
    });
  }
  return writes;
}

/**
 * Each write the reconciler made in `namespace` after `mark`, as
 * `<verb> <resource>[/<subresource>] <name>` — its Events and leader Lease aside, which it writes
 * whatever its kinds do.
 */
export function reconcilerWrites(log: string, mark: number, namespace: string): string[] {
  return reconcilerAuditWrites(log, mark)
    .filter((w) => w.namespace === namespace && w.resource !== 'events' && w.resource !== 'leases')
    .map((w) => `${w.verb} ${w.resource}${w.subresource ? `/${w.subresource}` : ''} ${w.name ?? ''}`);
}
