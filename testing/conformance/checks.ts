/** What the conformance checks judge, as pure functions of objects. */
import { BuiltinTypes, type KubeObject, type ResourceType } from '../../constructs/contract';
import { isJsonObject } from '../../constructs/contract/json';
import { BINARY_EXPONENT, DECIMAL_EXPONENT, quantityNanos } from '../../constructs/contract/quantity';
import type { JsonSchema, PolicyRule } from '../../constructs';
import type { AuditedWrite } from '../audit-log';

/** A condition's reason as metav1.Condition constrains it: CamelCase, what kstatus and kubectl wait read. */
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const STATUSES = ['True', 'False', 'Unknown'];

/**
 * Why a resource is not Ready at its generation in words kstatus reads — empty when it is: its
 * conditions well-formed (type, status, a CamelCase reason, lastTransitionTime) and of its
 * generation, none of Stalled or Degraded True, and Ready (else Available) True.
 */
export function conditionProblems(resource: KubeObject | undefined): string[] {
  if (!resource) return ['it does not exist'];
  const generation = resource.metadata.generation;
  const status = isJsonObject(resource.status) ? resource.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isJsonObject) : [];
  if (conditions.length === 0) return ["no status.conditions: kstatus reads a resource's readiness from them"];
  const problems: string[] = [];
  if (typeof status.observedGeneration === 'number' && status.observedGeneration !== generation)
    problems.push(`status.observedGeneration is ${status.observedGeneration}, its generation ${String(generation)}`);
  for (const c of conditions) problems.push(...conditionShapeProblems(c, generation));
  for (const c of conditions)
    if ((c.type === 'Stalled' || c.type === 'Degraded') && c.status === 'True') problems.push(said(c));
  const ready = conditions.find((c) => c.type === 'Ready') ?? conditions.find((c) => c.type === 'Available');
  if (!ready) problems.push('no Ready or Available condition');
  else if (ready.status !== 'True') problems.push(said(ready));
  return problems;
}

/** A condition as `Type=Status Reason: message`. */
function said(c: Record<string, unknown>): string {
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  return `${text(c.type)}=${text(c.status)} ${text(c.reason)}: ${text(c.message)}`;
}

/** What of metav1.Condition's shape a condition lacks, and whether it is of the resource's generation. */
function conditionShapeProblems(c: Record<string, unknown>, generation: number | undefined): string[] {
  const type = typeof c.type === 'string' ? c.type : '(no type)';
  const problems: string[] = [];
  if (typeof c.status !== 'string' || !STATUSES.includes(c.status))
    problems.push(`condition ${type}: status ${JSON.stringify(c.status)} is not True, False or Unknown`);
  if (typeof c.reason !== 'string' || !REASON.test(c.reason))
    problems.push(`condition ${type}: reason ${JSON.stringify(c.reason)} is not CamelCase`);
  if (typeof c.lastTransitionTime !== 'string') problems.push(`condition ${type}: no lastTransitionTime`);
  if (typeof c.observedGeneration === 'number' && c.observedGeneration !== generation)
    problems.push(
      `condition ${type} is of generation ${c.observedGeneration}, the resource's is ${String(generation)}`,
    );
  return problems;
}

/** The kinds a stand-in of someone else's can be made of without side effects (no pods, no addresses taken). */
const STAND_INS: readonly ResourceType[] = [BuiltinTypes.ConfigMap, BuiltinTypes.ServiceAccount, BuiltinTypes.Service];

/**
 * An object of someone else's (owned by nobody) of one of an example's children's kinds, named
 * as that child of a resource named `newName` would be (the example's name `name` in it
 * replaced), to be created before that resource: undefined when no child is of a kind it can
 * stand in for or none carries the resource's name.
 */
export function foreignStandIn(
  children: readonly KubeObject[],
  name: string,
  newName: string,
): { type: ResourceType; object: KubeObject } | undefined {
  for (const type of STAND_INS) {
    const child = children.find((c) => c.kind === type.kind && (c.metadata.name ?? '').includes(name));
    if (!child) continue;
    const metadata = {
      name: (child.metadata.name ?? '').replace(name, newName),
      labels: { 'conformance.cdk8s-operator-kit/foreign': 'true' },
    };
    const spec = isJsonObject(child.spec) ? child.spec : {};
    const ports = Array.isArray(spec.ports)
      ? spec.ports.filter(isJsonObject).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol }))
      : [];
    const object: KubeObject = {
      apiVersion: type.version,
      kind: type.kind,
      metadata,
      ...(type.kind === 'ConfigMap' ? { data: { owner: 'someone else' } } : {}),
      ...(type.kind === 'Service'
        ? { spec: { ports, selector: { 'conformance.cdk8s-operator-kit/foreign': 'true' } } }
        : {}),
    };
    return { type, object };
  }
  return undefined;
}

/** Quantity suffixes of one kind, smallest first, each with its size in billionths (quantity.ts's tables). */
const DECIMAL_UNITS = Object.entries(DECIMAL_EXPONENT)
  .map(([u, e = 0]) => [u, e] as const)
  .sort(([, a], [, b]) => a - b)
  .map(([u, e]) => [u, 10n ** BigInt(e + 9)] as const);
const BINARY_UNITS = Object.entries(BINARY_EXPONENT)
  .map(([u, e = 0n]) => [u, e] as const)
  .sort(([, a], [, b]) => Number(a - b))
  .map(([u, e]) => [u, 1_000_000_000n << e] as const);

/**
 * The same amount as `q`, spelled as the API server never writes it back: in the next smaller
 * unit of its own kind, which the server turns back into the larger (`1Gi` as `1024Mi`, `2` as
 * `2000m`, `100m` as `100000u`), else with a zero added to its digits (`1Ki` as `1.0Ki`).
 * Undefined for what is no quantity, or is written with an exponent.
 */
export function respelledQuantity(q: string | number): string | undefined {
  const nanos = quantityNanos(q);
  if (nanos === undefined || nanos < 0n) return undefined;
  const m = /^(\d*(?:\.\d*)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$/.exec(String(q).trim());
  if (!m) return undefined;
  const [, digits = '', suffix = ''] = m;
  const units = suffix.endsWith('i') ? BINARY_UNITS : DECIMAL_UNITS;
  const smaller = units[units.findIndex(([u]) => u === suffix) - 1];
  if (smaller && nanos % smaller[1] === 0n) return `${nanos / smaller[1]}${smaller[0]}`;
  return `${digits.includes('.') ? digits : `${digits}.`}0${suffix}`;
}

/** Whether a schema node is a quantity: an int-or-string with a pattern, as `t.quantity()` makes one. */
function isQuantity(schema: JsonSchema): boolean {
  return schema['x-kubernetes-int-or-string'] === true && typeof schema.pattern === 'string';
}

/**
 * `spec` with every quantity it sets (a field its schema says is one, in objects, maps and arrays)
 * spelled otherwise (`respelledQuantity`), and the changes as `spec.<path>: <from> → <to>`.
 */
export function respelledQuantities(schema: JsonSchema, spec: unknown): { spec: unknown; changes: string[] } {
  const changes: string[] = [];
  const walk = (node: JsonSchema, value: unknown, at: string): unknown => {
    if (isQuantity(node) && (typeof value === 'string' || typeof value === 'number')) {
      const to = respelledQuantity(value);
      if (to === undefined) return value;
      changes.push(`${at}: ${String(value)} → ${to}`);
      return to;
    }
    if (Array.isArray(value) && node.items) {
      const items = node.items;
      return value.map((v, i) => walk(items, v, `${at}[${i}]`));
    }
    if (isJsonObject(value)) {
      const { properties = {}, additionalProperties } = node;
      const of = (k: string) =>
        properties[k] ?? (isJsonObject(additionalProperties) ? additionalProperties : undefined);
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => {
          const child = of(k);
          return [k, child ? walk(child, v, `${at}.${k}`) : v];
        }),
      );
    }
    return value;
  };
  return { spec: walk(schema, spec, 'spec'), changes };
}

/** A grant or a request as `verb group/resource[/subresource]` (`verb resource` in the core group). */
function access(verb: string, group: string, resource: string): string {
  return `${verb} ${group ? `${group}/` : ''}${resource}`;
}

/**
 * The controller's rights against what it did: each request it made that `rules` do not grant
 * (Forbidden in a cluster where it runs with them), and each grant it never used.
 */
export function rbacFindings(
  requests: readonly Pick<AuditedWrite, 'verb' | 'apiGroup' | 'resource' | 'subresource'>[],
  rules: readonly PolicyRule[],
): { ungranted: string[]; unused: string[] } {
  // A rule of non-resource URLs alone (e.g. /metrics) names no group or resource.
  const granted = new Set(
    rules.flatMap(({ apiGroups = [], resources = [], verbs }: Partial<PolicyRule>) =>
      apiGroups.flatMap((g) => resources.flatMap((res) => (verbs ?? []).map((v) => access(v, g, res)))),
    ),
  );
  const used = new Set(
    requests.map((r) => access(r.verb, r.apiGroup, r.subresource ? `${r.resource}/${r.subresource}` : r.resource)),
  );
  return {
    ungranted: [...used].filter((u) => !granted.has(u)).sort(),
    unused: [...granted].filter((g) => !used.has(g)).sort(),
  };
}

/** The checks that found nothing to put the kind to (`undefined` from their step). */
export function notChecked(
  adopts: string[] | undefined,
  quantities: string[] | undefined,
  restarts: string[] | undefined,
): string[] {
  return [
    ...(restarts
      ? []
      : [
          'apiserver-restart: the control plane is not one the test kit started (OPKIT_KUBECONFIG?): it has no spare API server to restart',
        ]),
    ...(adopts
      ? []
      : [
          `never-adopts: no child of the first example is a ConfigMap, ServiceAccount or Service named after it, which an object of someone else's could stand in for`,
        ]),
    ...(quantities ? [] : ['quantities: the first example sets no quantity field (none its schema says is one)']),
  ];
}

/**
 * Where `after` differs from `before`, as `path: before → after` (JSON values; `absent` where a
 * side has none), walked field by field and item by item under `at`; at most `most` of them,
 * then how many more. What a settled resource's status write changed, for the `settled` check.
 */
export function changedFields(before: unknown, after: unknown, at: string, most = 5): string[] {
  const changes: string[] = [];
  walkChanges(before, after, at, changes);
  return changes.length > most ? [...changes.slice(0, most), `${changes.length - most} more`] : changes;
}

function walkChanges(before: unknown, after: unknown, at: string, changes: string[]): void {
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++)
      walkChanges(before[i], after[i], `${at}[${i}]`, changes);
    return;
  }
  if (isJsonObject(before) && isJsonObject(after)) {
    for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort())
      walkChanges(before[key], after[key], `${at}.${key}`, changes);
    return;
  }
  const text = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v));
  changes.push(`${at}: ${text(before)} → ${text(after)}`);
}

/**
 * The `settled` check's problem for `write`, made when a settled resource was touched and
 * reconciled again; `changed` is what it changed of the resource's own status (a status write).
 */
export function settledWriteProblem(write: string, changed: readonly string[]): string {
  const what = changed.length ? ` (${changed.join('; ')})` : '';
  return `${write} when a settled resource was reconciled again with nothing changed${what}: its render or status is not a function of its spec and children alone (a time, a random value, an order that varies?) — compare the object before and after, or run \`cdk8s-operator-kit diff\` twice`;
}

/** How often one object written since a mark makes a loop: more than a reconcile and its echo would. */
const LOOP_WRITES = 4;

/** The writes made `LOOP_WRITES` times or more, with their counts. */
export function repeatedWrites(writes: readonly string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const w of writes) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts].filter(([, n]) => n >= LOOP_WRITES);
}

/** A write loop's problems: each object written again and again, how often and when. */
export function loopProblems(repeated: readonly [string, number][], when: string): string[] {
  return repeated.map(
    ([w, n]) =>
      `${w}: written ${n} times ${when} and not at rest — a write loop: each write changes what the next reconcile renders (a time, a counter, a random value, a quantity the API server spells otherwise?)`,
  );
}
