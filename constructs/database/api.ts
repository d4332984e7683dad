import { type CustomResource, CustomResourceKind, NAME_FIELD } from '../core/kind';
import {
  CRON_MAX_LENGTH,
  CRON_SCHEDULE_PATTERN,
  DNS_SUBDOMAIN_MAX_LENGTH,
  DNS_SUBDOMAIN_PATTERN,
} from '../core/formats';
import { computeResourcesSchema, conditionsSchema, type Static, t } from '../core/schema';
import { backupRecordsSchema } from '../core/backup-records';
import { backupsListedFromSchema } from '../core/backup-list';

/** Releases with an official image: postgres 12–18, mysql 5.7, 8.0, 8.4 and 9.x (a minor or patch may follow). */
const POSTGRESQL_VERSION = '1[2-8](\\.[0-9]{1,3})?';
const MYSQL_VERSION = '(5\\.7|8\\.[04]|9\\.[0-9])(\\.[0-9]{1,3})?';
const MAX_VOLUME = '64Ti';
/** A primary and up to eight standbys. */
export const MAX_INSTANCES = 9;
/** The backup CronJob is `<name>-backup` and its Jobs add 11 characters: 52 - 7. */
export const MAX_DATABASE_NAME_WITH_BACKUP = 45;
/** A dump the backup Jobs named: `<database>-<UTC time>.sql`, or `final-…` for the final one. */
export const DUMP_NAME_PATTERN = '^(final-)?[a-z]([-a-z0-9]*[a-z0-9])?-[0-9]{8}T[0-9]{6}Z\\.sql$';

export const databaseSpecSchema = t.object(
  {
    type: t.enum(['postgresql', 'mysql'] as const, {
      required: true,
      // The data directory is the engine's own: another engine cannot read it.
      immutable: true,
      description: 'Database engine: postgresql or mysql. It cannot change once set.',
    }),
    version: t.string({
      required: true,
      pattern: `^(${POSTGRESQL_VERSION}|${MYSQL_VERSION})$`,
      description:
        'Engine version, the image tag: 12 to 18 (e.g. 13 or 16.4) for postgresql; 5.7, 8.0, 8.4 or 9.x for mysql.',
    }),
    instances: t.integer({
      default: 1,
      minimum: 1,
      maximum: MAX_INSTANCES,
      description:
        'How many PostgreSQL servers: one primary, which takes the writes (Services <name> and <name>-rw), and instances - 1 standbys streaming its changes, each cloned from it (Service <name>-ro). With standbys, a primary not ready for failoverDelay is replaced by the most advanced standby. mysql: 1.',
    }),
    failoverDelay: t.integer({
      default: 30,
      minimum: 0,
      maximum: 3600,
      description:
        'Seconds the primary may be not ready before a standby is promoted in its place (instances > 1). A restart of its pod usually takes a few.',
    }),
    synchronousStandbys: t.integer({
      default: 0,
      minimum: 0,
      maximum: MAX_INSTANCES - 1,
      description:
        'How many standbys must have written a transaction to disk before the primary acknowledges its commit (any of them). 0, the default: the primary alone, so a failover may lose the last acknowledged writes. With n, a failover loses none, and writes wait while fewer than n standbys stream. Below instances; a change restarts the instances.',
    }),
    storage: t.object(
      {
        size: t.quantity({
          required: true,
          positive: true,
          maximum: MAX_VOLUME,
          description: 'Size of the data volume, e.g. 10Gi.',
        }),
        storageClassName: t.string({
          minLength: 1,
          maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
          pattern: DNS_SUBDOMAIN_PATTERN,
          // A claim's class cannot change: the StatefulSet's claim template would be refused.
          immutable: true,
          description:
            'StorageClass of the data and backup volumes (a DNS name). Default: the cluster default. It cannot change once set.',
        }),
      },
      { required: true, description: 'The data volume.' },
    ),
    backup: t.object(
      {
        enabled: t.boolean({ default: false, description: 'Run scheduled dumps to a backup volume.' }),
        schedule: t.string({
          default: '0 2 * * *',
          maxLength: CRON_MAX_LENGTH,
          pattern: CRON_SCHEDULE_PATTERN,
          description:
            'When to dump, as a 5-field cron expression (each field in its range) or a macro. Default: 02:00 daily.',
        }),
        storageSize: t.quantity({
          positive: true,
          maximum: MAX_VOLUME,
          description: 'Size of the backup volume. Default: the data volume size.',
        }),
        retention: t.integer({
          minimum: 1,
          maximum: 1000,
          description:
            'How many scheduled dumps to keep: after each new one, the oldest beyond this many are deleted from the backup volume (final dumps are never deleted). Omitted: every dump is kept.',
        }),
        finalSnapshot: t.boolean({
          default: false,
          description:
            'Dump the database once more to the backup volume when the Database is deleted; the deletion waits until that Job has succeeded. Needs enabled and deletionPolicy Retain.',
        }),
      },
      {
        rules: [
          {
            rule: '!has(self.finalSnapshot) || !self.finalSnapshot || (has(self.enabled) && self.enabled)',
            message: 'finalSnapshot needs enabled: the final dump goes to the backup volume',
            fieldPath: '.finalSnapshot',
          },
        ],
        default: {},
        description:
          'Scheduled backups: a CronJob dumping the database to its own volume. Disabling removes the CronJob; the backup volume stays.',
      },
    ),
    restore: t.object(
      {
        backup: t.string({
          maxLength: 253,
          pattern: DUMP_NAME_PATTERN,
          description:
            "A dump by the name status.backups shows, e.g. my-db-20261129T020000Z.sql or final-my-db-20261129T020000Z.sql: read from that Database's backup volume <database>-backup, which outlives it under deletionPolicy Retain.",
        }),
        fromDatabase: t.string({
          minLength: 1,
          maxLength: 52,
          pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$',
          description:
            'The newest dump (scheduled or final) of the Database of this name in this namespace, deleted or not, instead of backup.',
        }),
        claim: t.string({
          minLength: 1,
          maxLength: 253,
          pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
          description:
            "With backup: the PersistentVolumeClaim holding it, as status.backups lists it (claim). Given, the dump is read from it as it is, nothing being read off the dump's name.",
        }),
      },
      {
        rules: [
          {
            rule: 'has(self.backup) != has(self.fromDatabase)',
            message: 'give either backup or fromDatabase',
            fieldPath: '.backup',
          },
          {
            rule: '!has(self.claim) || has(self.backup)',
            message: "claim names where backup is: give it with backup (fromDatabase reads that Database's own claim)",
            fieldPath: '.claim',
          },
        ],
        description:
          'Seed a new Database from a dump of its backups: the dump is loaded into a new data volume (in one transaction) before the server first starts, so nothing is served half-restored. A failed load is Degraded=True (RestoreFailed) naming the dump and the error; a data volume that already holds a database is never written over. postgresql only; it cannot change once the Database exists.',
      },
    ),
    tls: t.object(
      {
        enabled: t.boolean({
          default: true,
          description:
            "Serve TLS (PostgreSQL): the server presents a certificate for its Services' names from a CA the operator makes once, both in the Secret <name>-tls (ca.crt for clients: sslmode=verify-full).",
        }),
        required: t.boolean({
          default: false,
          description:
            'Refuse every network connection without TLS (hostssl); with false, a client that asks for none still gets in. Changing it restarts the server.',
        }),
      },
      {
        default: {},
        rules: [
          {
            rule: '!has(self.required) || !self.required || !has(self.enabled) || self.enabled',
            message: 'required needs enabled: a server without TLS could accept no connection',
            fieldPath: '.required',
          },
        ],
        description: 'TLS between clients and the server (postgresql).',
      },
    ),
    resources: computeResourcesSchema(
      "Compute resources of the database server's container, as given (Kubernetes takes a limit alone as the request too). Omitted: requests of 100m CPU and 256Mi memory, a 1Gi memory limit.",
    ),
    deletionPolicy: t.enum(['Retain', 'Delete'] as const, {
      default: 'Retain',
      description:
        'What deleting the Database does to its data: Retain keeps the data and backup volumes and the credentials Secret; Delete removes them too.',
    }),
  },
  {
    description: 'DatabaseSpec defines the desired database.',
    extra: {
      'x-kubernetes-validations': [
        {
          // Raw strings (r'…'): CEL's plain strings take no backslash escapes such as a dot's.
          rule: `self.type == 'postgresql' ? self.version.matches(r'^${POSTGRESQL_VERSION}$') : self.version.matches(r'^${MYSQL_VERSION}$')`,
          message:
            'version must be a release of the engine in type: 12 to 18 for postgresql; 5.7, 8.0, 8.4 or 9.x for mysql',
          fieldPath: '.version',
        },
        {
          rule: `self.type == 'postgresql' || !has(self.tls) || !has(self.tls.required) || !self.tls.required`,
          message: 'tls.required is for postgresql: mysql serves the TLS of its own image',
          fieldPath: '.tls.required',
        },
        {
          rule: `self.type == 'postgresql' || !has(self.instances) || self.instances == 1`,
          message: 'instances above 1 are for postgresql: its standbys stream from the primary',
          fieldPath: '.instances',
        },
        {
          rule: '!has(self.synchronousStandbys) || self.synchronousStandbys == 0 || (has(self.instances) && self.synchronousStandbys < self.instances)',
          message: 'synchronousStandbys must be below instances: it counts standbys, and a Database has instances - 1',
          fieldPath: '.synchronousStandbys',
        },
        {
          rule: `!has(self.restore) || self.type == 'postgresql'`,
          message: 'restore loads a PostgreSQL dump: type must be postgresql',
          fieldPath: '.restore',
        },
        {
          // On the spec, not on restore: a rule there would not run when restore is added or removed.
          rule: 'has(self.restore) == has(oldSelf.restore) && (!has(self.restore) || self.restore == oldSelf.restore)',
          message: 'restore cannot be added, changed or removed once the Database exists: it seeds a new one',
          fieldPath: '.restore',
          reason: 'FieldValueForbidden',
        },
        {
          rule: `!has(self.backup) || !has(self.backup.finalSnapshot) || !self.backup.finalSnapshot || !has(self.deletionPolicy) || self.deletionPolicy == 'Retain'`,
          message:
            'backup.finalSnapshot needs deletionPolicy Retain: under Delete the backup volume is deleted with the Database',
          fieldPath: '.backup.finalSnapshot',
        },
      ],
    },
  },
);

export const databaseStatusSchema = t.object(
  {
    phase: t.enum(['Creating', 'Restoring', 'Ready', 'Unavailable', 'Failed'] as const, {
      description:
        "Summary of the database's state: Unavailable when a server that was ready is not (a restart, a lost node).",
    }),
    readyReplicas: t.integer({ minimum: 0, description: 'Database pods ready.' }),
    primary: t.string({
      description: 'The instance (pod) that takes the writes: the Services <name> and <name>-rw send clients to it.',
    }),
    lastSwitchover: t.string({
      description:
        'The instance the annotation database.example.com/switchover-to named when its switchover began: that annotation is not acted on again (name another, or remove it first).',
    }),
    instances: t.array(
      t.object({
        name: t.string({ required: true, description: "The instance's pod." }),
        role: t.enum(['primary', 'standby', 'unknown'] as const, {
          required: true,
          description: 'What the server says it is; unknown while it does not answer.',
        }),
        ready: t.boolean({ description: "Whether its pod is ready (in its Service's endpoints)." }),
        lsn: t.string({
          description: "Where its WAL is: the primary's write position, a standby's position received.",
        }),
        lagBytes: t.integer({
          minimum: 0,
          description: 'How far a standby has replayed behind the primary, in bytes.',
        }),
        timeline: t.integer({ minimum: 1, description: 'Its timeline: each promotion begins a new one.' }),
      }),
      {
        maxItems: MAX_INSTANCES,
        description: 'Each instance as the operator last asked it (a Database of more than one instance).',
      },
    ),
    endpoint: t.string({ description: 'Where clients connect, host:port.' }),
    credentialsSecret: t.string({ description: 'Secret with username, password and database name, generated once.' }),
    replicationSecret: t.string({
      description:
        "Secret with the replication role's password (standbys stream as it; the operator asks the instances as it), generated once.",
    }),
    tlsSecret: t.string({
      description:
        "Secret with the server's certificate and key (tls.crt, tls.key) and the CA that signed it (ca.crt, for clients), generated once.",
    }),
    backupCronJob: t.string({ description: 'The backup CronJob, when backups are enabled.' }),
    lastBackupTime: t.dateTime({ description: 'When the last scheduled backup finished successfully.' }),
    backups: backupRecordsSchema('dump'),
    backupsListedFrom: backupsListedFromSchema(),
    restoredFrom: t.string({
      description:
        'The dump the Database was seeded from (spec.restore), as claim/file: the file its restore Job reports it loaded (claim/ while it has not picked the newest).',
    }),
    observedGeneration: t.integer({
      minimum: 0,
      description: 'The .metadata.generation the status was computed from.',
    }),
    conditions: conditionsSchema(),
  },
  { description: 'DatabaseStatus is the observed state of a Database.' },
);

export type DatabaseSpec = Static<typeof databaseSpecSchema>;
export type DatabaseStatus = Static<typeof databaseStatusSchema>;
export type Database = CustomResource<typeof databaseSpecSchema, typeof databaseStatusSchema>;

/** `databases.database.example.com`, v1alpha1 (seed 001). */
export const databaseKind = new CustomResourceKind({
  group: 'database.example.com',
  kind: 'Database',
  versions: ['v1alpha1'],
  // The StatefulSet takes the Database's name (its pods' revision label adds 11 characters) and Services take it too.
  maxNameLength: 52,
  dns1035Name: true,
  description:
    'Database runs a PostgreSQL or MySQL server as a StatefulSet with its data on a volume, generated credentials, and optional scheduled backups.',
  spec: databaseSpecSchema,
  status: databaseStatusSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'Instances', type: 'integer', jsonPath: '.spec.instances' },
    { name: 'Primary', type: 'string', jsonPath: '.status.primary' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint', priority: 1 },
  ],
  shortNames: ['db'],
  categories: ['all'],
  validations: [
    {
      rule: `!has(self.spec.backup) || !has(self.spec.backup.enabled) || !self.spec.backup.enabled || size(self.metadata.name) <= ${MAX_DATABASE_NAME_WITH_BACKUP}`,
      message: `must be at most ${MAX_DATABASE_NAME_WITH_BACKUP} characters when spec.backup.enabled is true: the backup CronJob is <name>-backup, and its Jobs add 11 characters`,
      fieldPath: NAME_FIELD,
    },
  ],
});
