/**
 * Invalid Memcached specs, each with the field the rejection must name. Shared by the unit tier
 * (offline schema validation) and the integration tier (the real API server).
 */
export const invalidMemcachedSpecs: [what: string, spec: unknown, field: string][] = [
  ['size 0', { size: 0 }, 'spec.size'],
  ['size 11', { size: 11 }, 'spec.size'],
  ['size as a string', { size: '3' }, 'spec.size'],
  ['size fractional', { size: 2.5 }, 'spec.size'],
  ['size negative', { size: -1 }, 'spec.size'],
  ['size missing', { image: 'memcached:1.6' }, 'spec.size'],
  ['image empty', { size: 1, image: '' }, 'spec.image'],
  ['image with spaces', { size: 1, image: 'memcached 1.6' }, 'spec.image'],
  ['image a number', { size: 1, image: 16 }, 'spec.image'],
  ['containerPort 0', { size: 1, containerPort: 0 }, 'spec.containerPort'],
  ['containerPort 70000', { size: 1, containerPort: 70000 }, 'spec.containerPort'],
  ['containerPort a string', { size: 1, containerPort: '11211' }, 'spec.containerPort'],
  ['unknown field', { size: 1, replicas: 3 }, 'spec.replicas'],
  ['spec a string', 'three', 'spec'],
  // Image references the kubelet could never pull: refused with the field named.
  ['a 200 KB image', { size: 1, image: `memcached:${'1'.repeat(200_000)}` }, 'spec.image'],
  ['an image with an upper-case repository', { size: 1, image: 'UPPER/Case:tag' }, 'spec.image'],
  ['an image with a malformed digest', { size: 1, image: 'memcached@sha256:xyz' }, 'spec.image'],
  ['an image with a tag too long', { size: 1, image: `memcached:${'t'.repeat(129)}` }, 'spec.image'],
];

export function memcachedWithSpec(name: string, spec: unknown, apiVersion = 'cache.example.com/v1'): object {
  return { apiVersion, kind: 'Memcached', metadata: { name }, spec };
}
