/** The writes a reconciler made, as the API server's audit log records them: read by upgrade and conformance tests. */
import * as fs from 'node:fs';
import { isJsonObject, jsonAt, parseJson, stringAt } from '../constructs/contract/json';

/**
 * The audit log's entries written whole: the API server may be writing the last one as it is
 * read, so what follows the last newline is left for the next read.
 */
function entries(log: string): string[] {
  const lines = fs.readFileSync(log, 'utf8').split('\n');
  lines.pop();
  return lines.filter(Boolean);
}

/** How many entries the audit log holds now: a mark to read the writes after. */
export function auditLength(log: string): number {
  return entries(log).length;
}

/** One request of the reconciler, as its audit entry's objectRef names it. */
export interface AuditedWrite {
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  /** A create names its object in the body, not the URI: the audit records it here too. */
  readonly name?: string;
}

/**
 * Every request the reconciler (its User-Agent) made after `mark`, reads and dry runs too, and
 * whether each was a dry run; with `identity`, only a reconciler whose identity (its POD_NAME and
 * a suffix, in its User-Agent) starts with it.
 */
export function reconcilerAuditRequests(
  log: string,
  mark: number,
  identity = '',
): (AuditedWrite & { readonly dryRun: boolean })[] {
  const lines = entries(log).slice(mark);
  const requests: (AuditedWrite & { readonly dryRun: boolean })[] = [];
  for (const line of lines) {
    const e = parseJson(line);
    const ref = (field: string) => stringAt(e, 'objectRef', field);
    const agent = stringAt(e, 'userAgent') ?? '';
    if (!agent.startsWith('cdk8s-operator-kit-reconciler') || !isJsonObject(jsonAt(e, 'objectRef'))) continue;
    if (identity && !agent.includes(`(${identity}`)) continue;
    requests.push({
      verb: stringAt(e, 'verb') ?? '',
      apiGroup: ref('apiGroup') ?? '',
      resource: ref('resource') ?? '',
      subresource: ref('subresource'),
      namespace: ref('namespace'),
      name: ref('name'),
      dryRun: stringAt(e, 'requestURI')?.includes('dryRun') ?? false,
    });
  }
  return requests;
}

const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/** The write requests (create, update, patch, delete, deletecollection) the reconciler (its User-Agent) made after `mark`, dry runs aside. */
export function reconcilerAuditWrites(log: string, mark: number): AuditedWrite[] {
  return reconcilerAuditRequests(log, mark)
    .filter((r) => WRITE_VERBS.includes(r.verb) && !r.dryRun)
    .map(({ dryRun: _, ...w }) => w);
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
