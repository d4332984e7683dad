import { type CustomResource, CustomResourceKind } from '../core/kind';
import { IMAGE_REFERENCE_MAX_LENGTH, IMAGE_REFERENCE_PATTERN } from '../core/formats';
import { conditionsSchema, type Static, t } from '../core/schema';

/** Desired state of a Memcached cluster. */
export const memcachedSpecSchema = t.object(
  {
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
  },
  { description: 'MemcachedSpec defines the desired state of Memcached.' },
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
export type MemcachedStatus = Static<typeof memcachedStatusSchema>;
export type Memcached = CustomResource<typeof memcachedSpecSchema, typeof memcachedStatusSchema>;

/**
 * `memcacheds.cache.example.com`. Served as v1alpha1 (seeds 001, 004) and v1 (seed 003) with
 * the same schema, so no conversion is needed; v1 is the storage version.
 */
export const memcachedKind = new CustomResourceKind({
  group: 'cache.example.com',
  kind: 'Memcached',
  versions: ['v1alpha1', 'v1'],
  storageVersion: 'v1',
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
