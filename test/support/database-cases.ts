/** Invalid Database specs, with the field each rejection must name (unit and integration tiers). */
const ok = { type: 'postgresql', version: '13', storage: { size: '10Gi' } };
export const invalidDatabaseSpecs: Array<[what: string, spec: unknown, field: string]> = [
  ['an unknown engine', { ...ok, type: 'oracle' }, 'spec.type'],
  ['no type', { version: '13', storage: { size: '1Gi' } }, 'spec.type'],
  ['a version with letters', { ...ok, version: 'latest' }, 'spec.version'],
  ['no storage', { type: 'postgresql', version: '13' }, 'spec.storage'],
  ['a storage size in GB', { ...ok, storage: { size: '10GB' } }, 'spec.storage.size'],
  ['a negative storage size', { ...ok, storage: { size: '-1Gi' } }, 'spec.storage.size'],
  ['a zero storage size', { ...ok, storage: { size: '0.0' } }, 'spec.storage.size'],
  ['a zero backup volume', { ...ok, backup: { enabled: true, storageSize: '0Mi' } }, 'spec.backup.storageSize'],
  ['backup enabled as a string', { ...ok, backup: { enabled: 'yes' } }, 'spec.backup.enabled'],
  ['a backup schedule that is not cron', { ...ok, backup: { enabled: true, schedule: 'every night' } }, 'spec.backup.schedule'],
  ['an unknown deletion policy', { ...ok, deletionPolicy: 'Archive' }, 'spec.deletionPolicy'],
];
