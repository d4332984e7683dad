import type { CustomResourceObject, KubeObject } from '../contract/objects';
import type { KindDescriptor } from '../contract/kind';
import { withSchemaDefaults } from './defaults';
import { convertObject, hubRoundTripProblems, type SpokeVersion, spokes } from './conversion';
import { type JsonSchema, type Schema, type Static } from './schema';
import { validateKind } from './kind-validation';
import { schemaViolations } from './validate-object';

/** A column `kubectl get` prints for the kind. */
export interface PrinterColumn {
  /** Column header, e.g. `Ready`. */
  readonly name: string;
  /** `integer`, `number`, `string`, `boolean` or `date`. */
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** A simple JSONPath into the object, e.g. `.spec.size`. */
  readonly jsonPath: string;
  readonly description?: string;
  /** 0 shows by default; higher values only with `-o wide`. @default 0 */
  readonly priority?: number;
  readonly format?: string;
}

/**
 * Binds `kubectl scale` (and HorizontalPodAutoscalers) to a replica field of the kind. Only the
 * spec's path is needed: the status fields the scale subresource reads are then written by the
 * runtime, from the resource's workload children (Deployment, StatefulSet, DaemonSet, ReplicaSet).
 */
export interface ScaleSubresource {
  /** @example '.spec.size' */
  readonly specReplicasPath: string;
  /**
   * The status field of the current replica count.
   * @default '.status.replicas', added to the status schema and written by the runtime: the sum of
   * the workload children's `status.replicas`
   */
  readonly statusReplicasPath?: string;
  /**
   * The status field of the pods' label selector (serialized, `app=x,tier=web`), which
   * HorizontalPodAutoscalers need.
   * @default '.status.selector', added to the status schema and written by the runtime: the
   * `matchLabels` of the first workload child
   */
  readonly labelSelectorPath?: string;
}

/** The scale status fields the runtime writes when a kind's scale leaves them to it. */
export const RUNTIME_SCALE_PATHS = { replicas: '.status.replicas', selector: '.status.selector' } as const;

/** Everything that defines a custom kind: its names, versions and schema. */
export interface CustomResourceKindProps<S extends Schema<unknown>, St extends Schema<unknown>> {
  /** API group, a DNS subdomain with at least one dot, e.g. `cache.example.com`. */
  readonly group: string;
  /** CamelCase kind, e.g. `Memcached`. */
  readonly kind: string;
  /**
   * Lower-case plural used in URLs.
   * @default the English plural of the kind lower-cased (Redis → redises, Policy → policies,
   * Memcached → memcacheds); where English is irregular or in doubt (…f, …fe, …o, …is, …um,
   * person, child) giving it is required
   */
  readonly plural?: string;
  /** @default kind lower-cased */
  readonly singular?: string;
  /**
   * Versions served, oldest first. Each has the storage version's schema (`spec`), unless
   * `conversions` gives it one of its own.
   */
  readonly versions: readonly string[];
  /** The version objects are stored in, the hub the others convert through. @default the last of `versions` */
  readonly storageVersion?: string;
  /**
   * Versions whose spec differs from the storage version's, each with its schema and typed
   * conversions to and from the storage version's spec (build one with `spokeVersion`). The
   * API server then calls the operator's `/convert` webhook to serve them; the Operator
   * construct sets that up. Checked at synth: every sample goes to each version and back
   * unchanged. @default none: every version has the same schema and needs no conversion
   */
  readonly conversions?: Readonly<Record<string, SpokeVersion<Static<S>>>>;
  /** @default 'Namespaced' */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** What the kind is, shown by `kubectl explain`. */
  readonly description: string;
  readonly spec: S;
  readonly status: St;
  /** Whether `spec` itself must be given. @default true */
  readonly specRequired?: boolean;
  /** The scale subresource (`kubectl scale`): the spec and status fields that hold replicas. @default none */
  readonly scale?: ScaleSubresource;
  /** Columns `kubectl get` shows besides NAME and AGE. @default none */
  readonly printerColumns?: readonly PrinterColumn[];
  /** Short names for `kubectl get`, e.g. `mc`. @default none */
  readonly shortNames?: readonly string[];
  /** Groups such as `all` that `kubectl get <category>` expands to. @default none */
  readonly categories?: readonly string[];
  /**
   * The longest name a resource of this kind may have, checked by the API server (a CEL rule on
   * `metadata.name`). Set it to what the children need: a StatefulSet's pods carry a
   * `controller-revision-hash` label of its name plus 11 characters, so a StatefulSet (or a
   * CronJob, whose Jobs get 11 characters more) named after the resource needs at most 52; a
   * label value (such as `app.kubernetes.io/instance`) holds at most 63.
   * @default 63
   */
  readonly maxNameLength?: number;
  /**
   * Whether names must be DNS-1035 labels (start with a letter), as names of Services must be.
   * Set it when a child Service takes the resource's name.
   * @default false
   */
  readonly dns1035Name?: boolean;
  /**
   * More CEL rules on the whole resource, for what one field cannot say alone, e.g. a shorter
   * name when an optional child with a longer name is asked for. Each message names the field.
   * @default none
   */
  readonly validations?: NonNullable<JsonSchema['x-kubernetes-validations']>;
}

/** The `fieldPath` of a rule about the resource's name: `metadata.name` is declared in every kind's schema for it. */
export const NAME_FIELD = '.metadata.name';

/**
 * The single definition of a custom kind. The CRD construct, the typed sample resources and the
 * reconciler all read it, so names, versions and schema are written down exactly once.
 */
export class CustomResourceKind<
  S extends Schema<unknown> = Schema<unknown>,
  St extends Schema<unknown> = Schema<unknown>,
> implements KindDescriptor {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly versions: readonly string[];
  readonly storageVersion: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly props: CustomResourceKindProps<S, St>;
  /** The versions with a schema of their own, by version (see `conversions`). */
  readonly conversions: Readonly<Record<string, SpokeVersion | undefined>>;

  constructor(props: CustomResourceKindProps<S, St>) {
    this.props = props;
    this.group = props.group;
    this.kind = props.kind;
    this.plural = props.plural ?? englishPlural(props.kind);
    this.singular = props.singular ?? props.kind.toLowerCase();
    this.versions = props.versions;
    // validate() refuses an empty version list.
    this.storageVersion = props.storageVersion ?? props.versions.at(-1) ?? '';
    this.scope = props.scope ?? 'Namespaced';
    this.conversions = props.conversions ?? {};
    validateKind(this);
  }

  /** `<plural>.<group>`, the CRD's name. */
  get crdName(): string {
    return `${this.plural}.${this.group}`;
  }

  /** `group/version` of the storage version, e.g. `cache.example.com/v1`. */
  get apiVersion(): string {
    return `${this.group}/${this.storageVersion}`;
  }

  get namespaced(): boolean {
    return this.scope === 'Namespaced';
  }

  /** Whether some version has a schema of its own, so the API server needs the `/convert` webhook. */
  get needsConversion(): boolean {
    return spokes(this).length > 0;
  }

  /** Whether the status schema has `conditions`: only then does the reconciler write them. */
  get statusHasConditions(): boolean {
    return this.props.status.json.properties?.conditions !== undefined;
  }

  /** The scale subresource with the runtime's paths for what it leaves out. */
  get scale(): Required<ScaleSubresource> | undefined {
    const scale = this.props.scale;
    if (!scale) return undefined;
    return {
      specReplicasPath: scale.specReplicasPath,
      statusReplicasPath: scale.statusReplicasPath ?? RUNTIME_SCALE_PATHS.replicas,
      labelSelectorPath: scale.labelSelectorPath ?? RUNTIME_SCALE_PATHS.selector,
    };
  }

  /** Which of the scale subresource's status fields the runtime writes (those the kind leaves to it). */
  get scaleStatus(): { readonly replicas: boolean; readonly selector: boolean } | undefined {
    const scale = this.props.scale;
    if (!scale) return undefined;
    return { replicas: scale.statusReplicasPath === undefined, selector: scale.labelSelectorPath === undefined };
  }

  /** The object at another served version of this kind (`group/version`), through the hub. */
  convert<T extends KubeObject>(object: T, apiVersion: string): T {
    return convertObject(this, object, apiVersion);
  }

  /** The spec schema of a version. */
  specSchema(version: string = this.storageVersion): JsonSchema {
    return (this.conversions[version]?.spec ?? this.props.spec).json;
  }

  /**
   * The full `openAPIV3Schema` of the kind at a version: apiVersion, kind, metadata, spec and
   * status. @default the storage version
   */
  openApiSchema(version: string = this.storageVersion): JsonSchema {
    return {
      type: 'object',
      description: this.props.description,
      properties: {
        apiVersion: {
          type: 'string',
          description: 'APIVersion defines the versioned schema of this representation of an object.',
        },
        kind: {
          type: 'string',
          description: 'Kind is a string value representing the REST resource this object represents.',
        },
        // Declared so that rules on the name can report it as their field (`fieldPath`), where
        // the API server otherwise says `<nil>`.
        metadata: { type: 'object', properties: { name: { type: 'string' } } },
        spec: this.specSchema(version),
        status: statusAsCreated(withRuntimeScaleFields(this.props.status.json, this.scaleStatus)),
      },
      ...((this.props.specRequired ?? true) ? { required: ['spec'] } : {}),
      'x-kubernetes-validations': [...this.nameRules(), ...(this.props.validations ?? [])],
    };
  }

  /**
   * What the API server's schema validation would refuse in a spec of this kind, offline (CEL
   * rules aside), each message naming the field (`spec.size: Invalid value: 11: should be less
   * than or equal to 10`); empty when it would pass. Samples and examples are checked with it
   * at synth. @default the storage version
   */
  specViolations(spec: unknown, version: string = this.storageVersion): string[] {
    if (spec === undefined) return (this.props.specRequired ?? true) ? ['spec: Required value'] : [];
    return schemaViolations(this.specSchema(version), spec, 'spec');
  }

  /**
   * What would go wrong converting a spec of the storage version to the other versions: a spec
   * that a version's schema refuses, or one that does not come back unchanged. Empty for a kind
   * without conversions. Samples are checked with it at synth, as the API server would store
   * them: with the storage version's defaults applied first, as it applies them before it
   * converts.
   */
  conversionProblems(spec: unknown): string[] {
    const stored = withSchemaDefaults(this.specSchema(), spec);
    return hubRoundTripProblems(this, stored, (s, v) => this.specViolations(s, v));
  }

  /** CEL rules on metadata.name: what the names of the children this kind makes require. */
  private nameRules(): NonNullable<JsonSchema['x-kubernetes-validations']> {
    const max = this.props.maxNameLength ?? 63;
    const rules = [
      {
        rule: `size(self.metadata.name) <= ${max}`,
        message: `must be at most ${max} characters: the objects this ${this.kind} makes are named after it`,
        fieldPath: NAME_FIELD,
      },
    ];
    if (this.props.dns1035Name) {
      rules.push({
        rule: "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
        message: `must start with a letter and contain only lower-case letters, digits and dashes: a Service is named after the ${this.kind}`,
        fieldPath: NAME_FIELD,
      });
    }
    return rules;
  }
}

/** A resource of a custom kind as the reconciler reads it: its spec and status typed by the kind's schemas. */
export interface CustomResource<S extends Schema<unknown>, St extends Schema<unknown>> extends CustomResourceObject<
  Static<S>,
  Partial<Static<St>>
> {
  apiVersion: string;
  kind: string;
}

/** Endings and words whose plural a rule would get wrong as often as right: say it explicitly. */
const DOUBTFUL_ENDINGS = [
  'f',
  'fe',
  'o',
  'is',
  'um',
  'person',
  'child',
  'man',
  'mouse',
  'goose',
  'foot',
  'tooth',
  'index',
  'matrix',
  'vertex',
  'criterion',
];

/** The regular English plural of a kind, lower-cased; throws where English is in doubt. */
export function englishPlural(kind: string): string {
  const word = kind.toLowerCase();
  // "Redis" is a name, not a Latin word: its plural is regular.
  const doubtful = word !== 'redis' && DOUBTFUL_ENDINGS.find((e) => word.endsWith(e));
  if (doubtful) {
    throw new Error(
      `custom kind ${JSON.stringify(kind)}: its plural is not certain from English rules (words ending in "${doubtful}" vary); set plural explicitly, e.g. plural: '${word}s'`,
    );
  }
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/**
 * The status schema, with a default that a resource is created with when its status has an
 * `observedGeneration`: `{observedGeneration: 0}`, older than any generation. A resource no
 * reconcile has seen then reads as on its way (kstatus: InProgress, "generation is 1, but latest
 * observed generation is 0") rather than, with no status at all, as `Current`, which Helm 4's
 * `--wait`, Flux and kpt would take for ready.
 */
function statusAsCreated(status: JsonSchema): JsonSchema {
  const observed = status.properties?.observedGeneration;
  if (!observed || status.default !== undefined) return status;
  return { ...status, default: { observedGeneration: 0 } };
}

/**
 * The status schema with the scale fields the runtime writes (see `ScaleSubresource`), where the
 * kind's own schema does not already declare them.
 */
function withRuntimeScaleFields(
  status: JsonSchema,
  writes: { readonly replicas: boolean; readonly selector: boolean } | undefined,
): JsonSchema {
  const properties = { ...(status.properties ?? {}) };
  if (writes?.replicas && !('replicas' in properties))
    properties.replicas = {
      type: 'integer',
      minimum: 0,
      description: 'Pods of its workloads, as the scale subresource reports them (written by the operator).',
    };
  if (writes?.selector && !('selector' in properties))
    properties.selector = {
      type: 'string',
      description:
        'The label selector of its pods, serialized, for HorizontalPodAutoscalers (written by the operator).',
    };
  return writes ? { ...status, properties } : status;
}
