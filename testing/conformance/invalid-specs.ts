/**
 * Invalid specs made from a kind's schema, for the conformance check that the API server refuses
 * each naming its field: one change to an example's spec per variant — a value of the wrong type,
 * one out of range, a string its pattern misses, a choice not in the enum, a list longer or shorter
 * than its bounds, a field the schema does not know, and an immutable field changed on update, in
 * the objects the example sets, the first item of each list and the first key's value of each map
 * it sets — made by pure functions of the schema and the example, and sent as dry runs by
 * `invalidSpecProblems`.
 */
import type { KubeObject, ResourceType } from '../../constructs/contract';
import { isJsonObject } from '../../constructs/contract/json';
import { type JsonSchema, t } from '../../constructs';
import { ApiError, type HttpKubeClient, resourcePath } from '../../operator/runtime/client';

/** One invalid spec: the example's with one change. */
export interface InvalidSpec {
  /** The field the change is in, as the API server names it in its refusal: `spec.size`. */
  readonly field: string;
  /** What is wrong with it, in words: `a string where an integer is`. */
  readonly what: string;
  /** The whole spec with the change. */
  readonly spec: unknown;
  /** Sent as an update of the live example (an immutable field changed), not as a new resource. */
  readonly update?: true;
}

/** A field's name no schema of a kind has: the unknown-field variant sets it. */
export const UNKNOWN_FIELD = 'conformanceUnknownField';

/** The rule `t.…({ immutable: true })` gives a field, read from `t` itself (`self == oldSelf`). */
const IMMUTABLE_RULE = t.string({ immutable: true }).json['x-kubernetes-validations']?.[0]?.rule;

/** Strings a pattern may miss, tried in turn; the first it misses is the variant's. */
const PATTERN_MISSES = ['', '-', ' x ', 'UPPER_CASE!', '0'.repeat(300), 'ü'];

/**
 * The invalid variants of `spec` under `schema` (the kind's spec schema). The live example (its
 * spec as the API server keeps it, defaults applied) gives the values an immutable field is
 * changed from.
 */
export function invalidSpecs(schema: JsonSchema, spec: unknown, live: unknown = spec): InvalidSpec[] {
  const variants: InvalidSpec[] = [];
  const base = isJsonObject(spec) ? spec : {};
  variants.push({
    field: `spec.${UNKNOWN_FIELD}`,
    what: 'a field its schema does not have (a misspelt one)',
    spec: { ...base, [UNKNOWN_FIELD]: 'x' },
  });
  const walk = (node: JsonSchema, path: readonly Step[], liveValue: unknown): void => {
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      const at = [...path, key];
      const current = isJsonObject(liveValue) ? liveValue[key] : undefined;
      variants.push(...fieldVariants(child, at, base));
      variants.push(...immutableChange(child, at, current, live));
      // Into objects the example has, so the variant changes that one field and no required one is missing.
      const value = valueAt(base, at);
      if (child.type === 'object' && child.properties && isJsonObject(value)) walk(child, at, current);
      // Into the first item of a list (`spec.members[0].name`) or the first value of a map (`spec.labels.team`) it has.
      const inner = firstInner(child, value, current);
      if (inner) into(inner.node, [...at, inner.step], inner.value, inner.live);
    }
  };
  /** A list's first item or a map's first value that the example has: its variants, and its fields' if an object. */
  const into = (node: JsonSchema, at: readonly Step[], value: unknown, liveValue: unknown): void => {
    variants.push(...fieldVariants(node, at, base));
    if (node.type === 'object' && node.properties && isJsonObject(value)) walk(node, at, liveValue);
  };
  walk(schema, [], live);
  return variants;
}

/**
 * Of a list the example has, its first item; of a map, its first key's value (the key a field's
 * name): each with its schema, where it is, and the live example's value there.
 */
function firstInner(
  node: JsonSchema,
  value: unknown,
  live: unknown,
): { node: JsonSchema; step: Step; value: unknown; live: unknown } | undefined {
  if (node.items && Array.isArray(value) && value.length > 0)
    return { node: node.items, step: 0, value: value[0], live: Array.isArray(live) ? (live[0] as unknown) : undefined };
  const values = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  const key = isJsonObject(value) ? Object.keys(value)[0] : undefined;
  if (!values || !isJsonObject(value) || key === undefined) return undefined;
  return { node: values, step: key, value: value[key], live: isJsonObject(live) ? live[key] : undefined };
}

/** An immutable field's value (`current`, in the live example) changed, as an update of it; none when not immutable. */
function immutableChange(node: JsonSchema, at: readonly Step[], current: unknown, live: unknown): InvalidSpec[] {
  const changed = isImmutable(node) && current !== undefined ? otherValidValue(node, current) : undefined;
  if (changed === undefined) return [];
  return [
    {
      field: fieldName(at),
      what: `an immutable field changed (${JSON.stringify(current)} → ${JSON.stringify(changed)})`,
      spec: withValue(isJsonObject(live) ? live : {}, at, changed),
      update: true,
    },
  ];
}

/** One step of a path into a spec: a field's name, or a list item's index. */
type Step = string | number;

/** A path as the API server names its field in a refusal: `spec.members[0].name`. */
function fieldName(at: readonly Step[]): string {
  return at.reduce<string>((name, step) => (typeof step === 'number' ? `${name}[${step}]` : `${name}.${step}`), 'spec');
}

/** The variants of one field at `at` in `base`: each wrong value its schema refuses, and a list's count past its bounds. */
function fieldVariants(node: JsonSchema, at: readonly Step[], base: Record<string, unknown>): InvalidSpec[] {
  const field = fieldName(at);
  const variants = wrongValues(node).map(({ value, what }) => ({ field, what, spec: withValue(base, at, value) }));
  const list = valueAt(base, at);
  if (node.type === 'array' && Array.isArray(list) && list.length > 0) {
    const first: unknown = list[0];
    if (node.maxItems !== undefined)
      variants.push({
        field,
        what: `${node.maxItems + 1} items, more than its ${node.maxItems} at most`,
        spec: withValue(
          base,
          at,
          Array.from({ length: node.maxItems + 1 }, () => first),
        ),
      });
    if (node.minItems !== undefined && node.minItems > 0)
      variants.push({
        field,
        what: `${node.minItems - 1} items, fewer than its ${node.minItems} at least`,
        spec: withValue(base, at, list.slice(0, node.minItems - 1)),
      });
  }
  return variants;
}

/** Whether a field's schema makes it immutable (`self == oldSelf`). */
function isImmutable(node: JsonSchema): boolean {
  return (node['x-kubernetes-validations'] ?? []).some((v) => v.rule.replace(/\s+/g, ' ').trim() === IMMUTABLE_RULE);
}

/** The values `node` refuses, each with what is wrong with it. */
export function wrongValues(node: JsonSchema): { value: unknown; what: string }[] {
  const out: { value: unknown; what: string }[] = [];
  const type = node['x-kubernetes-int-or-string'] ? 'int-or-string' : node.type;
  const wrongType: Record<string, { value: unknown; what: string }> = {
    'int-or-string': { value: true, what: 'a boolean where an integer or a string is' },
    integer: { value: 'not-a-number', what: 'a string where an integer is' },
    number: { value: 'not-a-number', what: 'a string where a number is' },
    string: { value: 12345, what: 'a number where a string is' },
    boolean: { value: 'yes', what: 'a string where a boolean is' },
    object: { value: 'not-an-object', what: 'a string where an object is' },
    array: { value: 'not-a-list', what: 'a string where a list is' },
  };
  if (type && wrongType[type]) out.push(wrongType[type]);
  if (type === 'integer' || type === 'number') out.push(...outOfRange(node));
  if (type === 'string' || type === 'int-or-string') out.push(...badStrings(node));
  return out;
}

/** Numbers just past `node`'s bounds. */
function outOfRange(node: JsonSchema): { value: unknown; what: string }[] {
  const step = node.type === 'integer' ? 1 : 0.5;
  const out: { value: unknown; what: string }[] = [];
  if (node.minimum !== undefined) {
    const value = node.exclusiveMinimum ? node.minimum : node.minimum - step;
    out.push({ value, what: `${value}, below its minimum ${node.minimum}` });
  }
  if (node.maximum !== undefined) {
    const value = node.exclusiveMaximum ? node.maximum : node.maximum + step;
    out.push({ value, what: `${value}, above its maximum ${node.maximum}` });
  }
  return out;
}

/** Strings `node` refuses: too short or long, a pattern's miss, a choice not in its enum. */
function badStrings(node: JsonSchema): { value: unknown; what: string }[] {
  const out: { value: unknown; what: string }[] = [];
  if (node.minLength !== undefined && node.minLength > 0)
    out.push({ value: 'x'.repeat(node.minLength - 1), what: `shorter than its ${node.minLength} characters at least` });
  if (node.maxLength !== undefined)
    out.push({ value: 'x'.repeat(node.maxLength + 1), what: `longer than its ${node.maxLength} characters at most` });
  const miss = node.pattern === undefined ? undefined : PATTERN_MISSES.find((s) => matches(node.pattern, s) === false);
  if (miss !== undefined) out.push({ value: miss, what: `${shown(miss)}, which its pattern ${node.pattern} misses` });
  const notAChoice = 'not-one-of-them';
  if (node.enum && node.enum.length > 0 && !node.enum.includes(notAChoice))
    out.push({ value: notAChoice, what: `${shown(notAChoice)}, not one of ${JSON.stringify(node.enum)}` });
  return out;
}

/**
 * Whether `pattern` matches `s`, its syntax read as JavaScript's (which the patterns of Kubernetes
 * schemas share); undefined for no pattern, or one JavaScript cannot read.
 */
function matches(pattern: string | undefined, s: string): boolean | undefined {
  if (pattern === undefined) return undefined;
  try {
    return new RegExp(pattern, 'u').test(s);
  } catch {
    return undefined;
  }
}

/** A string as a problem shows it: quoted, a long one cut. */
function shown(s: string): string {
  return s.length > 40 ? `${JSON.stringify(s.slice(0, 12))}… (${s.length} characters)` : JSON.stringify(s);
}

/** A value other than `current` that `node` takes, for an immutable field's change; undefined when none is sure. */
function otherValidValue(node: JsonSchema, current: unknown): unknown {
  if (node.enum) return node.enum.find((v) => JSON.stringify(v) !== JSON.stringify(current));
  if (typeof current === 'boolean') return !current;
  if (typeof current === 'number' && (node.type === 'integer' || node.type === 'number'))
    return otherNumber(node, current);
  if (typeof current === 'string' && node.type === 'string' && !node.format) return otherString(node, current);
  return undefined;
}

/** A number beside `current` within `node`'s bounds. */
function otherNumber(node: JsonSchema, current: number): number | undefined {
  if (node.maximum === undefined || current + 1 < node.maximum) return current + 1;
  if (node.minimum === undefined || current - 1 > node.minimum) return current - 1;
  return undefined;
}

/** `current` with its last character made `x` (or one added), if its length and pattern allow. */
function otherString(node: JsonSchema, current: string): string | undefined {
  const changed = `${current.slice(0, Math.max(0, (node.maxLength ?? 64) - 1))}x`;
  if (changed === current) return undefined;
  if (node.pattern !== undefined && matches(node.pattern, changed) !== true) return undefined;
  return changed;
}

function valueAt(obj: unknown, at: readonly Step[]): unknown {
  return at.reduce<unknown>((o, k) => {
    if (typeof k === 'number') return Array.isArray(o) ? (o[k] as unknown) : undefined;
    return isJsonObject(o) ? o[k] : undefined;
  }, obj);
}

/** `obj` with the value at `at` set to `value` (the objects and lists on the way copied, or made). */
function withValue(obj: Record<string, unknown>, at: readonly Step[], value: unknown): Record<string, unknown> {
  return setAt(obj, at, value) as Record<string, unknown>;
}

function setAt(container: unknown, at: readonly Step[], value: unknown): unknown {
  const [step, ...rest] = at;
  if (step === undefined) return value;
  if (typeof step === 'number') {
    const list: unknown[] = Array.isArray(container) ? [...(container as unknown[])] : [];
    list[step] = setAt(list[step], rest, value);
    return list;
  }
  const object = isJsonObject(container) ? container : {};
  return { ...object, [step]: setAt(object[step], rest, value) };
}

/** Where a refusal names its fields: its message, and its causes' `field`s. */
function namesField(err: ApiError, field: string): boolean {
  const causes = isJsonObject(err.details) && Array.isArray(err.details.causes) ? err.details.causes : [];
  return err.message.includes(field) || causes.some((c) => isJsonObject(c) && c.field === field);
}

/**
 * The invalid-specs check: each variant of the first example sent as a server-side dry run (never
 * stored; with strict field validation, as kubectl sends) must be refused — 400 or 422 — naming
 * its field. `live` is the example as stored, the base of an immutable field's update.
 */
export async function invalidSpecProblems(
  client: HttpKubeClient,
  type: ResourceType,
  example: KubeObject,
  live: KubeObject,
  schema: JsonSchema,
): Promise<string[]> {
  const namespace = live.metadata.namespace;
  const name = `${example.metadata.name ?? ''}-invalid`.slice(0, 63);
  const problems: string[] = [];
  for (const v of invalidSpecs(schema, example.spec, live.spec)) {
    const [method, path, body] = v.update
      ? ([
          'PUT',
          resourcePath(type, namespace, live.metadata.name),
          { ...live, metadata: { ...live.metadata, managedFields: undefined }, spec: v.spec },
        ] as const)
      : ([
          'POST',
          resourcePath(type, namespace),
          { ...example, metadata: { ...example.metadata, name }, spec: v.spec },
        ] as const);
    const how = v.update ? `an update of ${live.metadata.name ?? ''}` : `a new ${type.kind}`;
    const refusal = await client
      .request(method, path, {
        body,
        query: { dryRun: 'All', fieldValidation: 'Strict', fieldManager: client.fieldManager },
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    if (refusal === undefined)
      problems.push(
        `${v.field}: ${v.what} was taken (a dry run of ${how}) — the CRD's schema lets it through to the reconciler: give the field its type, bounds or pattern in the kind's schema (and no x-kubernetes-preserve-unknown-fields)`,
      );
    else if (!(refusal instanceof ApiError) || (refusal.status !== 400 && refusal.status !== 422))
      problems.push(
        `${v.field}: ${v.what}, sent as a dry run of ${how}, failed otherwise: ${refusal instanceof Error ? refusal.message : JSON.stringify(refusal)}`,
      );
    else if (!namesField(refusal, v.field))
      problems.push(
        `${v.field}: ${v.what} was refused, but not naming ${v.field}: "${refusal.message}" — a rule on the object around it wants a fieldPath, or the field a rule of its own`,
      );
  }
  return problems;
}
