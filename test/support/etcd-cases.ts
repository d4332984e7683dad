/** Invalid EtcdCluster specs and the field each rejection must name (unit and integration tiers). */
export const invalidEtcdSpecs: [what: string, spec: unknown, field: string][] = [
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
  ['storageClassName not a DNS name', { storageClassName: 'Bad_Class' }, 'spec.storageClassName'],
  [
    'a backup storageClassName not a DNS name',
    { backup: { schedule: '@daily', storageClassName: 'Bad_Class' } },
    'spec.backup.storageClassName',
  ],
  ['a backup schedule at minute 61', { backup: { schedule: '61 * * * *' } }, 'spec.backup.schedule'],
  ['a backup schedule with step 0', { backup: { schedule: '*/0 * * * *' } }, 'spec.backup.schedule'],
  ['a resource named gpu', { resources: { limits: { gpu: '1' } } }, 'spec.resources.limits.gpu'],
  ['version 9.9.9, a release with no image', { version: '9.9.9' }, 'spec.version'],
  ['storage 1e100', { storage: '1e100' }, 'spec.storage'],
  ['a client entry that selects nothing (everyone)', { network: { clients: [{}] } }, 'spec.network.clients'],
  [
    'a client selector with an unknown operator',
    { network: { clients: [{ podSelector: { matchExpressions: [{ key: 'a', operator: 'Is' }] } }] } },
    'spec.network.clients',
  ],
  ['a restore backup not named as snapshots are', { restore: { backup: 'latest' } }, 'spec.restore.backup'],
  ['a restore path climbing out of its claim', { restore: { claim: 'snaps', path: '../x.db' } }, 'spec.restore.path'],
  ['a restore path from the root', { restore: { claim: 'snaps', path: '/x.db' } }, 'spec.restore.path'],
  ['a restore claim not a DNS name', { restore: { claim: 'Snaps', path: 'x.db' } }, 'spec.restore.claim'],
];

/** Refused by the CRD's CEL rules (the API server; the unit tier's offline validator has no CEL). */
export const etcdSpecsRefusedByRules: [what: string, spec: unknown, field: string][] = [
  ['storage 1000Pi', { storage: '1000Pi' }, 'spec.storage'],
  ['limits.memory 1000Pi', { resources: { limits: { memory: '1000Pi' } } }, 'spec.resources.limits.memory'],
  [
    'requests.cpu 2 over limits.cpu 1',
    { resources: { requests: { cpu: 2 }, limits: { cpu: '1' } } },
    'spec.resources.requests.cpu',
  ],
  [
    'requests.memory 2Gi over limits.memory 1024Mi',
    { resources: { requests: { memory: '2Gi' }, limits: { memory: '1024Mi' } } },
    'spec.resources.requests.memory',
  ],
  ['a backup volume of 1000Pi', { backup: { schedule: '@daily', storage: '1000Pi' } }, 'spec.backup.storage'],
  ['an empty restore source', { restore: {} }, 'spec.restore.backup'],
  [
    'a restore from both a backup and a claim',
    { restore: { backup: 'kv-20261129T020000Z.db', claim: 'snaps', path: 'x.db' } },
    'spec.restore.backup',
  ],
  ['a restore claim without a path', { restore: { claim: 'snaps' } }, 'spec.restore.claim'],
];
