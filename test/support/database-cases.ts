/** Invalid Database specs, with the field each rejection must name (unit and integration tiers). */
const ok = { type: 'postgresql', version: '13', storage: { size: '10Gi' } };
export const invalidDatabaseSpecs: [what: string, spec: unknown, field: string][] = [
  ['an unknown engine', { ...ok, type: 'oracle' }, 'spec.type'],
  ['no type', { version: '13', storage: { size: '1Gi' } }, 'spec.type'],
  ['a version with letters', { ...ok, version: 'latest' }, 'spec.version'],
  ['no storage', { type: 'postgresql', version: '13' }, 'spec.storage'],
  ['a storage size in GB', { ...ok, storage: { size: '10GB' } }, 'spec.storage.size'],
  ['a negative storage size', { ...ok, storage: { size: '-1Gi' } }, 'spec.storage.size'],
  ['a zero storage size', { ...ok, storage: { size: '0.0' } }, 'spec.storage.size'],
  ['a zero backup volume', { ...ok, backup: { enabled: true, storageSize: '0Mi' } }, 'spec.backup.storageSize'],
  ['backup enabled as a string', { ...ok, backup: { enabled: 'yes' } }, 'spec.backup.enabled'],
  [
    'a backup schedule that is not cron',
    { ...ok, backup: { enabled: true, schedule: 'every night' } },
    'spec.backup.schedule',
  ],
  ['an unknown deletion policy', { ...ok, deletionPolicy: 'Archive' }, 'spec.deletionPolicy'],
  ['version 99, a release with no image', { ...ok, version: '99' }, 'spec.version'],
  [
    'a backup schedule at minute 61',
    { ...ok, backup: { enabled: true, schedule: '61 * * * *' } },
    'spec.backup.schedule',
  ],
  ['a backup schedule with L', { ...ok, backup: { enabled: true, schedule: '0 0 L * *' } }, 'spec.backup.schedule'],
  [
    'storageClassName not a DNS name',
    { ...ok, storage: { size: '1Gi', storageClassName: 'Bad_Class' } },
    'spec.storage.storageClassName',
  ],
  ['a restore backup not named as dumps are', { ...ok, restore: { backup: 'latest.sql' } }, 'spec.restore.backup'],
  ['a backup retention of 0', { ...ok, backup: { enabled: true, retention: 0 } }, 'spec.backup.retention'],
  ['a gpu among the resources', { ...ok, resources: { limits: { gpu: '1' } } }, 'spec.resources.limits'],
  ['a memory request in GB', { ...ok, resources: { requests: { memory: '2GB' } } }, 'spec.resources.requests.memory'],
  ['10 instances', { ...ok, instances: 10 }, 'spec.instances'],
  ['9 synchronous standbys', { ...ok, instances: 9, synchronousStandbys: 9 }, 'spec.synchronousStandbys'],
  ['a restore fromDatabase not a name', { ...ok, restore: { fromDatabase: 'Old_DB' } }, 'spec.restore.fromDatabase'],
  [
    'a restore claim not a name',
    { ...ok, restore: { backup: 'a-20261129T020000Z.sql', claim: 'A_B' } },
    'spec.restore.claim',
  ],
];

/** Refused by the CRD's CEL rules (the API server; the unit tier's offline validator has no CEL). */
export const databaseSpecsRefusedByRules: [what: string, spec: unknown, field: string][] = [
  ['a storage size of 1000Pi', { ...ok, storage: { size: '1000Pi' } }, 'spec.storage.size'],
  [
    'a memory request above its limit',
    { ...ok, resources: { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } } },
    'spec.resources.requests.memory',
  ],
  ['a backup volume of 1000Pi', { ...ok, backup: { enabled: true, storageSize: '1000Pi' } }, 'spec.backup.storageSize'],
  ['a mysql version for postgresql', { ...ok, version: '8.4' }, 'spec.version'],
  ['a postgresql version for mysql', { ...ok, type: 'mysql', version: '16' }, 'spec.version'],
  ['a final snapshot without backups', { ...ok, backup: { finalSnapshot: true } }, 'spec.backup.finalSnapshot'],
  [
    'a final snapshot under deletionPolicy Delete',
    { ...ok, backup: { enabled: true, finalSnapshot: true }, deletionPolicy: 'Delete' },
    'spec.backup.finalSnapshot',
  ],
  ['an empty restore source', { ...ok, restore: {} }, 'spec.restore.backup'],
  [
    'a restore from both a dump and a Database',
    { ...ok, restore: { backup: 'a-20261129T020000Z.sql', fromDatabase: 'a' } },
    'spec.restore.backup',
  ],
  [
    'a restore claim without a backup',
    { ...ok, restore: { fromDatabase: 'a', claim: 'a-backup' } },
    'spec.restore.claim',
  ],
  ['a restore into mysql', { ...ok, type: 'mysql', version: '8.4', restore: { fromDatabase: 'a' } }, 'spec.restore'],
  ['3 instances of mysql', { ...ok, type: 'mysql', version: '8.4', instances: 3 }, 'spec.instances'],
  ['a synchronous standby of a Database of one', { ...ok, synchronousStandbys: 1 }, 'spec.synchronousStandbys'],
  [
    '3 synchronous standbys of 3 instances (2 standbys)',
    { ...ok, instances: 3, synchronousStandbys: 3 },
    'spec.synchronousStandbys',
  ],
];
