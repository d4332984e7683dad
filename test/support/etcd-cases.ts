/** Invalid EtcdCluster specs and the field each rejection must name (unit and integration tiers). */
export const invalidEtcdSpecs: Array<[what: string, spec: unknown, field: string]> = [
  ['replicas 0', { replicas: 0 }, 'spec.replicas'],
  ['replicas 10', { replicas: 10 }, 'spec.replicas'],
  ['replicas as a string', { replicas: '3' }, 'spec.replicas'],
  ['replicas fractional', { replicas: 1.5 }, 'spec.replicas'],
  ['version without patch', { version: '3.5' }, 'spec.version'],
  ['version with a v', { version: 'v3.5.21' }, 'spec.version'],
  ['storage in GB', { storage: '10GB' }, 'spec.storage'],
  ['a negative storage size', { storage: '-1Gi' }, 'spec.storage'],
  ['a zero storage size', { storage: '0Gi' }, 'spec.storage'],
  ['a zero storage size as an integer', { storage: 0 }, 'spec.storage'],
  ['a negative resource quantity', { resources: { limits: { memory: '-512Mi' } } }, 'spec.resources.limits.memory'],
  ['storage as an object', { storage: { size: '1Gi' } }, 'spec.storage'],
  ['empty storageClassName', { storageClassName: '' }, 'spec.storageClassName'],
  ['a bad resource quantity', { resources: { requests: { cpu: 'lots' } } }, 'spec.resources.requests.cpu'],
  ['an unknown field', { size: 3 }, 'spec.size'],
];
