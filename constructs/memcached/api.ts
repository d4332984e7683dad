import { spokeVersion } from '../core/conversion';
import { type CustomResource, CustomResourceKind } from '../core/kind';
import { parseQuantity } from '../contract/quantity';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN } from '../core/formats';
import { conditionsSchema, type Static, t } from '../core/schema';

/** The fields every version of the spec has. */
const commonSpecFields = {
  size: t.integer({
    required: true,
    minimum: 1,
    maximum: 10,
    description: 'Number of memcached pods (Deployment replicas), from 1 to 10.',
  }),
  image: t.string({
    default: 'memcached:1.6',
    minLength: 1,
    maxLength: IMAGE_REFERENCE_MAX_LENGTH,
    pattern: IMAGE_REFERENCE_PATTERN,
    description:
      'Container image running memcached: [registry/]repository[:tag][@sha256:digest], the repository lower-case.',
  }),
  containerPort: t.integer({
    default: 11211,
    minimum: 1,
    maximum: 65535,
    description: 'Port memcached listens on inside each pod.',
  }),
};

/** The largest item memory a Memcached may ask for. */
const MAX_MEMORY = '64Gi';

/** Desired state of a Memcached cluster (v1, the storage version). */
export const memcachedSpecSchema = t.object(
  {
    ...commonSpecFields,
    memory: t.quantity({
      default: '64Mi',
      positive: true,
      maximum: MAX_MEMORY,
      description: `Memory for items in each pod (memcached -m, rounded up to whole MiB), e.g. 64Mi or 1Gi, at most ${MAX_MEMORY}. The pod requests it and is limited to twice it.`,
    }),
  },
  { description: 'MemcachedSpec defines the desired state of Memcached.' },
);

/**
 * The v1alpha1 spec: item memory as memcached's own flag has it, a whole number of megabytes
 * (`maxMemoryMB`), where v1 has a Kubernetes quantity (`memory`).
 */
export const memcachedV1alpha1SpecSchema = t.object(
  {
    ...commonSpecFields,
    maxMemoryMB: t.integer({
      default: 64,
      minimum: 1,
      maximum: 65536,
      description: 'Megabytes (MiB) of memory for items in each pod (memcached -m). In v1: memory, a quantity.',
    }),
  },
  { description: 'MemcachedSpec defines the desired state of Memcached (v1alpha1).' },
);

/** Observed state of a Memcached cluster, written by the reconciler. */
export const memcachedStatusSchema = t.object(
  {
    nodes: t.array(t.string(), { description: 'Names of the pods that currently belong to this Memcached, sorted.' }),
    replicas: t.integer({ minimum: 0, description: 'Pods the Deployment currently has.' }),
    readyReplicas: t.integer({ minimum: 0, description: 'Pods that are ready.' }),
    observedGeneration: t.integer({
      minimum: 0,
      description: 'The .metadata.generation the status was computed from.',
    }),
    conditions: conditionsSchema(),
  },
  { description: 'MemcachedStatus defines the observed state of Memcached.' },
);

export type MemcachedSpec = Static<typeof memcachedSpecSchema>;
export type MemcachedV1alpha1Spec = Static<typeof memcachedV1alpha1SpecSchema>;

/** Whole MiB for a memory quantity, rounded up: what memcached's -m takes. */
export function mebibytes(memory: string | number): number {
  return Math.ceil(parseQuantity(memory) / 2 ** 20);
}

/** Whole MiB as a quantity, in GiB when they are whole: 1024 → 1Gi, 1536 → 1536Mi. */
export function mebibyteQuantity(mebibytes: number): string {
  return mebibytes % 1024 === 0 ? `${mebibytes / 1024}Gi` : `${mebibytes}Mi`;
}

/**
 * `{ [name]: convert(value) }`, or nothing when the value is absent. The schemas default both
 * fields, so they are absent only from a spec converted before the API server defaults it; the
 * type says what the conversion's result is once it has.
 */
function field<K extends string, V, R>(name: K, value: V | undefined, convert: (v: V) => R): Record<K, R> {
  return (value === undefined ? {} : { [name]: convert(value) }) as Record<K, R>;
}
export type MemcachedStatus = Static<typeof memcachedStatusSchema>;
export type Memcached = CustomResource<typeof memcachedSpecSchema, typeof memcachedStatusSchema>;

/**
 * `memcacheds.cache.example.com`, served as v1alpha1 (seeds 001, 004) and v1 (seed 003); v1 is
 * the storage version. The two differ in one field — v1alpha1's `maxMemoryMB`, an integer, is
 * v1's `memory`, a quantity — so the operator converts between them; a quantity v1alpha1 can
 * only round (`1G`) comes back exactly (see spokeVersion).
 */
export const memcachedKind = new CustomResourceKind({
  group: 'cache.example.com',
  kind: 'Memcached',
  versions: ['v1alpha1', 'v1'],
  storageVersion: 'v1',
  conversions: {
    v1alpha1: spokeVersion<typeof memcachedV1alpha1SpecSchema, MemcachedSpec>({
      spec: memcachedV1alpha1SpecSchema,
      toHub: ({ maxMemoryMB, ...rest }) => ({ ...rest, ...field('memory', maxMemoryMB, mebibyteQuantity) }),
      fromHub: ({ memory, ...rest }) => ({ ...rest, ...field('maxMemoryMB', memory, mebibytes) }),
      examples: [
        { size: 3, image: 'memcached:1.6', containerPort: 11211, maxMemoryMB: 64 },
        { size: 1, image: 'memcached:1.6.38', containerPort: 11212, maxMemoryMB: 1024 },
      ],
    }),
  },
  description: 'Memcached is a memcached cluster kept at the requested size by the memcached operator.',
  spec: memcachedSpecSchema,
  status: memcachedStatusSchema,
  scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.readyReplicas' },
  printerColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'Requested pods' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready pods' },
  ],
  shortNames: ['mc'],
  categories: ['all'],
});
