import type { Condition as ContractCondition } from '../contract/conditions';
/**
 * A small typed builder for the OpenAPI v3 schemas that CRDs carry.
 *
 * Why: each custom kind must have exactly one definition of its spec and status. Writing the
 * schema with these helpers yields both the JSON schema (for the CRD) and the TypeScript type
 * (via `Static<typeof schema>`, for the reconciler), so the two cannot drift.
 *
 * Every node the builder emits is structural (it carries a `type`, or an explicit
 * `x-kubernetes-int-or-string` / `x-kubernetes-preserve-unknown-fields`), which is what
 * `apiextensions.k8s.io/v1` requires.
 */

/** The subset of JSON-Schema-Props that structural CRD schemas use, in their wire spelling. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: { rule: string; message?: string; fieldPath?: string; reason?: string }[];
}

/**
 * A schema node that also carries, at the type level only, the TypeScript type of the values it
 * accepts (`T`) and whether an object that holds it always has it once defaults are applied (`P`).
 */
export interface Schema<T, P extends boolean = boolean> {
  readonly json: JsonSchema;
  /** Whether the field is required, or defaulted by the API server (so always present when read). */
  readonly present: P;
  /** Type carrier only; never set at run time. */
  readonly __type?: T;
}

/** The TypeScript type of values a schema accepts, as read back from the API server. */
export type Static<S> = S extends Schema<infer T> ? T : never;

type PresentKeys<P> = { [K in keyof P]: P[K] extends Schema<unknown, true> ? K : never }[keyof P];
type OptionalKeys<P> = Exclude<keyof P, PresentKeys<P>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<P extends Record<string, Schema<unknown>>> = Simplify<
  { [K in PresentKeys<P>]: Static<P[K]> } & { [K in OptionalKeys<P>]?: Static<P[K]> }
>;

/** Options every field shares. */
export interface FieldOptions<D> {
  /** Shown by `kubectl explain`. Every field should have one. @default none */
  readonly description?: string;
  /** The API server fills this in when the field is absent. @default none */
  readonly default?: D;
  /** The field must be present. (A defaulted field need not be required.) @default false */
  readonly required?: boolean;
  /**
   * Once set, the field cannot change: the API server refuses an update that changes it (a CEL
   * transition rule, `self == oldSelf`), naming the field. For what the operator cannot change
   * in place, such as a database's engine. Adding the field later is still allowed.
   * @default false
   */
  readonly immutable?: boolean;
  /**
   * CEL rules on this field, checked by the API server: `self` is the field's value and, in a
   * transition rule, `oldSelf` its value before the update.
   * @default none
   */
  readonly rules?: NonNullable<JsonSchema['x-kubernetes-validations']>;
  /** Extra schema keywords, for the rare constraint the helpers do not cover. @default none */
  readonly extra?: JsonSchema;
}

type PresentFlag<O> = O extends { required: true } ? true : O extends { default: unknown } ? true : false;

export interface StringOptions extends FieldOptions<string> {
  /** @default no minimum */
  readonly minLength?: number;
  /** @default no maximum */
  readonly maxLength?: number;
  /** A regular expression the whole value must match. @default none */
  readonly pattern?: string;
  /** An OpenAPI format the API server checks, e.g. `date-time`. @default none */
  readonly format?: string;
}

export interface NumberOptions extends FieldOptions<number> {
  /** @default no minimum */
  readonly minimum?: number;
  /** @default no maximum */
  readonly maximum?: number;
}

export interface QuantityOptions extends FieldOptions<string> {
  /**
   * Reject zero as well as negative values: for sizes, where a zero-byte volume would be
   * admitted here and then fail forever in the controller that provisions it.
   * @default false (zero allowed, negative rejected)
   */
  readonly positive?: boolean;
  /**
   * The largest value accepted, as a quantity (e.g. `64Ti`): checked by the API server with a
   * CEL rule, so that a size no volume or node can have is refused at the door.
   * @default no maximum
   */
  readonly maximum?: string;
}

/** Longer than any quantity a person writes. */
const QUANTITY_MAX_LENGTH = 64;

/** A quantity's mantissa: digits with an optional fraction. No sign: negative quantities are never wanted. */
const MANTISSA = '(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))';
/** The same with at least one non-zero digit. */
const NONZERO_MANTISSA = '(([0-9]*[1-9][0-9]*(\\.[0-9]*)?)|(0*\\.[0-9]*[1-9][0-9]*))';
// An exponent of at most two digits: 1e100 is a valid quantity, but no size or count.
const QUANTITY_SUFFIX = '(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?[0-9]{1,2}))?';

export interface ArrayOptions<T> extends FieldOptions<T[]> {
  /** @default no minimum */
  readonly minItems?: number;
  /** @default no maximum */
  readonly maxItems?: number;
  /** `set` for lists of unique scalars, `map` (with `mapKeys`) for lists of keyed objects. @default 'atomic', as Kubernetes takes an unmarked list */
  readonly listType?: 'atomic' | 'set' | 'map';
  /** The keys of a `map` list. @default none */
  readonly mapKeys?: string[];
}

export interface ObjectOptions extends FieldOptions<Record<string, unknown>> {
  /** @default no minimum */
  readonly minProperties?: number;
}

// eslint-disable-next-line complexity -- copies each optional field option into the schema: a `?.`/`??` per option, no branching logic
function node<T, O extends FieldOptions<unknown>>(base: JsonSchema, options: O | undefined): Schema<T, PresentFlag<O>> {
  const json: JsonSchema = { ...base };
  if (options?.description !== undefined) json.description = options.description;
  if (options?.default !== undefined) json.default = options.default;
  const rules = [
    ...(json['x-kubernetes-validations'] ?? []),
    ...(options?.immutable
      ? [{ rule: 'self == oldSelf', message: 'is immutable: it cannot change once set', reason: 'FieldValueForbidden' }]
      : []),
    ...(options?.rules ?? []),
  ];
  if (rules.length > 0) json['x-kubernetes-validations'] = rules;
  Object.assign(json, options?.extra ?? {});
  const present = (options?.required === true || options?.default !== undefined) as PresentFlag<O>;
  return { json, present };
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Builders for schema nodes. */
export const t = {
  string<const O extends StringOptions>(options?: O): Schema<string, PresentFlag<O>> {
    return node(
      {
        type: 'string',
        ...defined({
          minLength: options?.minLength,
          maxLength: options?.maxLength,
          pattern: options?.pattern,
          format: options?.format,
        }),
      },
      options,
    );
  },

  /** A string restricted to the given values. */
  enum<const V extends readonly string[], const O extends FieldOptions<V[number]>>(
    values: V,
    options?: O,
  ): Schema<V[number], PresentFlag<O>> {
    if (values.length === 0) throw new Error('t.enum() needs at least one allowed value');
    return node({ type: 'string', enum: [...values] }, options);
  },

  integer<const O extends NumberOptions>(options?: O): Schema<number, PresentFlag<O>> {
    return node({ type: 'integer', ...defined({ minimum: options?.minimum, maximum: options?.maximum }) }, options);
  },

  number<const O extends NumberOptions>(options?: O): Schema<number, PresentFlag<O>> {
    return node({ type: 'number', ...defined({ minimum: options?.minimum, maximum: options?.maximum }) }, options);
  },

  boolean<const O extends FieldOptions<boolean>>(options?: O): Schema<boolean, PresentFlag<O>> {
    return node({ type: 'boolean' }, options);
  },

  /**
   * A non-negative Kubernetes quantity such as `10Gi` or `500m`: a string or an integer, as core
   * types accept; with `positive`, zero is rejected too.
   */
  quantity<const O extends QuantityOptions>(options?: O): Schema<string | number, PresentFlag<O>> {
    const max = options?.maximum;
    return node(
      {
        'x-kubernetes-int-or-string': true,
        pattern: `^${options?.positive ? NONZERO_MANTISSA : MANTISSA}${QUANTITY_SUFFIX}$`,
        maxLength: QUANTITY_MAX_LENGTH,
        // For the integer form (the pattern only checks strings).
        minimum: options?.positive ? 1 : 0,
        ...(max ? { 'x-kubernetes-validations': [quantityAtMost('self', max)] } : {}),
      },
      options,
    );
  },

  /** An RFC 3339 timestamp, as metav1.Time serializes. */
  dateTime<const O extends FieldOptions<string>>(options?: O): Schema<string, PresentFlag<O>> {
    return node({ type: 'string', format: 'date-time' }, options);
  },

  array<I, const O extends ArrayOptions<I>>(items: Schema<I>, options?: O): Schema<I[], PresentFlag<O>> {
    return node(
      {
        type: 'array',
        items: items.json,
        ...defined({
          minItems: options?.minItems,
          maxItems: options?.maxItems,
          'x-kubernetes-list-type': options?.listType,
          'x-kubernetes-list-map-keys': options?.mapKeys,
        }),
      },
      options,
    );
  },

  /** An object with known properties. Fields marked `required: true` go to the schema's `required`. */
  object<P extends Record<string, Schema<unknown>>, const O extends ObjectOptions>(
    properties: P,
    options?: O,
  ): Schema<ObjectOf<P>, PresentFlag<O>> {
    const required = Object.entries(properties)
      .filter(([, s]) => s.present && s.json.default === undefined)
      .map(([k]) => k);
    const props = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, s.json]));
    return node(
      {
        type: 'object',
        properties: props,
        ...(required.length > 0 ? { required } : {}),
        ...defined({ minProperties: options?.minProperties }),
      },
      options,
    );
  },

  /** A string-keyed map whose values share one schema (labels, annotations, env maps). */
  map<V, const O extends FieldOptions<Record<string, V>>>(
    values: Schema<V>,
    options?: O,
  ): Schema<Record<string, V>, PresentFlag<O>> {
    return node({ type: 'object', additionalProperties: values.json }, options);
  },

  /**
   * An object whose contents the API server keeps as given (for embedded resources whose schema
   * is not ours to restate, such as a StatefulSet override). Use sparingly: it disables pruning.
   */
  opaqueObject<const O extends FieldOptions<Record<string, unknown>>>(
    options?: O,
  ): Schema<Record<string, unknown>, PresentFlag<O>> {
    return node({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, options);
  },
};

/**
 * A CEL rule: the quantity at `path` (relative to the node the rule sits on) is at most `max`.
 * int-or-string values are read as strings, so `5` and `"5"` alike.
 */
function quantityAtMost(
  path: string,
  max: string,
  fieldPath?: string,
): NonNullable<JsonSchema['x-kubernetes-validations']>[number] {
  const q = `string(${path})`;
  return {
    rule: `isQuantity(${q}) && quantity(${q}).compareTo(quantity('${max}')) <= 0`,
    message: `must be a quantity of at most ${max}`,
    ...(fieldPath ? { fieldPath } : {}),
  };
}

/** The resources a container may ask for in a kind's spec, with their sane maxima. */
const COMPUTE_RESOURCE_MAXIMA = { cpu: '512', memory: '16Ti', 'ephemeral-storage': '64Ti' } as const;

/**
 * A container's `requests` and `limits` of cpu, memory and ephemeral-storage (others are not
 * fields, so `gpu` is refused naming it), each at most a sane maximum, and a request never
 * above its limit (CEL rules; the Pod would be refused otherwise, long after the resource was
 * accepted).
 */
export function computeResourcesSchema(description: string) {
  const amounts = (what: string) =>
    t.object(
      {
        cpu: t.quantity({ maximum: COMPUTE_RESOURCE_MAXIMA.cpu, description: `CPU ${what}, e.g. 500m or 2.` }),
        memory: t.quantity({ maximum: COMPUTE_RESOURCE_MAXIMA.memory, description: `Memory ${what}, e.g. 256Mi.` }),
        'ephemeral-storage': t.quantity({
          maximum: COMPUTE_RESOURCE_MAXIMA['ephemeral-storage'],
          description: `Local scratch space ${what}, e.g. 1Gi.`,
        }),
      },
      { description: `The ${what} of each container.` },
    );
  const schema = t.object({ requests: amounts('requested'), limits: amounts('limit') }, { description });
  const rules = Object.keys(COMPUTE_RESOURCE_MAXIMA).map((name) => {
    // CEL spells a property with a dash with __dash__.
    const field = name.replace(/-/g, '__dash__');
    const both = `has(self.requests) && has(self.limits) && has(self.requests.${field}) && has(self.limits.${field})`;
    const request = `string(self.requests.${field})`;
    const limit = `string(self.limits.${field})`;
    return {
      rule: `!(${both}) || !isQuantity(${request}) || !isQuantity(${limit}) || quantity(${request}).compareTo(quantity(${limit})) <= 0`,
      message: `requests.${name} must not be more than limits.${name}`,
      fieldPath: name.includes('-') ? `.requests['${name}']` : `.requests.${name}`,
    };
  });
  return { ...schema, json: { ...schema.json, 'x-kubernetes-validations': rules } } as typeof schema;
}

/** The `metav1.Condition` shape, as `status.conditions` lists it. */
export const conditionSchema = t.object(
  {
    type: t.string({
      required: true,
      maxLength: 316,
      description: 'Type of condition in CamelCase, e.g. Available, Progressing, Degraded.',
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: t.enum(['True', 'False', 'Unknown'] as const, { required: true, description: 'Status of the condition.' }),
    observedGeneration: t.integer({
      minimum: 0,
      description: 'The .metadata.generation that the condition was set from.',
    }),
    lastTransitionTime: t.dateTime({
      required: true,
      description: 'When the condition last changed from one status to another.',
    }),
    reason: t.string({
      required: true,
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: 'Programmatic identifier for the last transition, in CamelCase.',
    }),
    message: t.string({
      required: true,
      maxLength: 32768,
      description: 'Human-readable details about the last transition.',
    }),
  },
  { description: 'A metav1.Condition.' },
);

export type Condition = ContractCondition;

// The schema and the contract's `Condition` are one shape: tsc stops here if either drifts.
type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const conditionSchemaMatchesContract: SameShape<Static<typeof conditionSchema>, ContractCondition> = true;

/** `status.conditions`: a list keyed by `type`, so server-side apply merges one condition at a time. */
export function conditionsSchema(
  description = "The latest observations of the resource's state (Available, Progressing, Degraded).",
) {
  return t.array(conditionSchema, { description, listType: 'map', mapKeys: ['type'] });
}
