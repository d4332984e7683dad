import { k8s } from 'cdk8s-plus-27';
import { backupCronJob, backupJobSpec } from '../core/backup-cron-job';
import { BACKUP_LIST_COMPONENT, backupListJob, backupListJobName } from '../core/backup-list';
import { reportBackupLine } from '../core/backup-records';
import { quantityMap, stepResources } from '../core/step-resources';
import { waitsFor } from '../contract/render';
import { Construct } from 'constructs';
import { selectorLabels, standardLabels, type StandardLabelsProps } from '../core/labels';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import type { DatabaseSpec } from './api';
import { DatabaseRestore, dumpSource } from './database-restore';
import { applicationRoleEnv, fromSecret } from './application-role';
import { type Primary, type PostgresSetup, postgresSetup } from './postgres-server';
import { replicationSecretName } from './replication';
import {
  instanceCount,
  instanceOrdinal,
  instancePod,
  POD_NAME_LABEL,
  ROLE_LABEL,
  STANDBY_ROLE,
} from './instance-names';

/** What differs between engines; everything else is shared. */
interface Engine {
  readonly image: (version: string) => string;
  readonly port: number;
  readonly dataPath: string;
  /** Directories the server writes besides its data (the root filesystem is read-only). */
  readonly scratchPaths: readonly string[];
  /** Environment of the server, from the credentials Secret's keys. */
  readonly env: (secret: string) => k8s.EnvVar[];
  /** Files, arguments and volumes beyond the image's defaults. @default none */
  readonly setup?: (spec: DatabaseSpec, names: DatabaseNames, primary: Primary) => PostgresSetup;
  /** Environment of each instance beyond `env`, for its start. @default none */
  readonly instanceEnv?: (names: DatabaseNames) => k8s.EnvVar[];
  /** Exits 0 once the server accepts connections (the readiness probe). */
  readonly ready: string;
  /** Shell command writing a dump to stdout, given host. */
  readonly dump: (host: string) => string;
}

/** The engines a Database can run. Their images run as uid 999. */
export const ENGINES: Record<DatabaseSpec['type'], Engine> = {
  postgresql: {
    image: (v) => `postgres:${v}`,
    port: 5432,
    dataPath: '/var/lib/postgresql/data',
    scratchPaths: ['/var/run/postgresql', '/tmp'],
    env: (s) => [
      // The image's bootstrap superuser (postgres) needs a password to start a new data directory;
      // the application role script takes it away again before anything listens on the network.
      fromSecret('POSTGRES_PASSWORD', s, 'password'),
      ...applicationRoleEnv(s),
      // A subdirectory, so the volume's lost+found does not upset initdb.
      { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
    ],
    setup: postgresSetup,
    instanceEnv: (names) => [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      fromSecret('REPLICATION_PASSWORD', names.replication, 'password'),
    ],
    ready: 'pg_isready -q -h 127.0.0.1',
    dump: (host) => `PGPASSWORD="$DB_PASSWORD" pg_dump -h ${host} -U "$DB_USER" "$DB_NAME"`,
  },
  mysql: {
    image: (v) => `mysql:${v}`,
    port: 3306,
    dataPath: '/var/lib/mysql',
    scratchPaths: ['/var/run/mysqld', '/tmp'],
    env: (s) => [
      fromSecret('MYSQL_USER', s, 'username'),
      fromSecret('MYSQL_PASSWORD', s, 'password'),
      fromSecret('MYSQL_DATABASE', s, 'database'),
      { name: 'MYSQL_RANDOM_ROOT_PASSWORD', value: 'yes' },
    ],
    ready: 'mysqladmin ping -h 127.0.0.1 -u"$MYSQL_USER" -p"$MYSQL_PASSWORD"',
    // --single-transaction: a consistent dump of InnoDB tables without locking them;
    // --no-tablespaces: MySQL 8 refuses a user without the PROCESS right the tablespaces' dump.
    dump: (host) =>
      `mysqldump --single-transaction --no-tablespaces -h ${host} -u"$DB_USER" -p"$DB_PASSWORD" "$DB_NAME"`,
  },
};

const DB_UID = 999;

export interface DatabaseResourcesProps {
  readonly name: string;
  /** @default the chart's namespace, if it has one */
  readonly namespace?: string;
  /** The spec, with the API server's defaults applied. */
  readonly spec: DatabaseSpec;
  /** Controller owner reference to the Database. @default none (a static render) */
  readonly owner?: k8s.OwnerReference;
  /** @default 'database-operator' */
  readonly managedBy?: string;
  /**
   * Whether the data volume is still to be seeded from `spec.restore`: then the data claim and a
   * restore Job are rendered, and the StatefulSet waits for the Job to complete. The operator says
   * so until the status records the restore (condition `Restored`). @default false
   */
  readonly restoring?: boolean;
  /**
   * Whether the dumps already on the backup claim (kept from a Database of this name deleted
   * before) are still to be listed into the status: then a Job lists them. The operator says so
   * until the status names the claim (`backupsListedFrom`). @default false
   */
  readonly listBackups?: boolean;
  /** The primary's pod, as the operator last made it. @default `<name>-0` */
  readonly primary?: string;
  /**
   * Whether the Database has never held data, so that its primary without any starts a new data
   * directory; once it has (the operator says so), a primary found empty refuses to, and a standby
   * is promoted. A Database of one instance always starts a new one. @default true
   */
  readonly initialize?: boolean;
}

/** The names `databaseNames` gives. */
export type DatabaseNames = ReturnType<typeof databaseNames>;

/** Names of a Database's children. */
export function databaseNames(name: string) {
  return {
    service: name,
    readWrite: `${name}-rw`,
    readOnly: `${name}-ro`,
    headless: `${name}-headless`,
    statefulSet: name,
    credentials: `${name}-credentials`,
    backup: `${name}-backup`,
    finalBackup: `${name}-final-backup`,
    retention: `${name}-retention`,
    config: `${name}-config`,
    tls: `${name}-tls`,
    replication: replicationSecretName(name),
    disruptionBudget: name,
  };
}

/**
 * A database server: a headless Service for the StatefulSet, a client Service, the StatefulSet
 * (data on a PVC from its claim template, credentials from the generated Secret), and with
 * backups a backup PVC and a CronJob dumping the database to it.
 *
 * Data safety follows `deletionPolicy`: with Retain (the default) the StatefulSet keeps its
 * claims and the backup claim carries no owner reference, so deleting the Database leaves every
 * volume; with Delete both go with it.
 *
 * The credentials Secret is created once by the controller (never rendered here: no secret is
 * ever in YAML) and owned by the retention ConfigMap `<name>-retention`, which is owned by the
 * Database only under Delete. The operator may create Secrets but never change them, so a later
 * change of policy moves the ownership of this ConfigMap, and the Secret follows it.
 */
export class DatabaseResources extends Construct {
  constructor(scope: Construct, id: string, props: DatabaseResourcesProps) {
    super(scope, id);
    const { spec } = props;
    const parts = databaseParts(props);
    const { engine, names, labelProps, owned, meta, selector, deleteData } = parts;

    new k8s.KubeConfigMap(this, 'Retention', {
      metadata: {
        ...meta(names.retention, standardLabels({ ...labelProps, component: 'retention' })),
        ownerReferences: deleteData ? owned : undefined,
      },
      data: {
        deletionPolicy: spec.deletionPolicy,
        note: deleteData
          ? 'Deleting the Database deletes this ConfigMap and, through it, the credentials Secret; the StatefulSet deletes the data claims.'
          : 'Deleting the Database keeps this ConfigMap, the credentials Secret it owns, and the data and backup claims.',
      },
    });
    this.addServices(parts);
    const setup = engine.setup?.(spec, names, parts.primary);
    if (setup) new k8s.KubeConfigMap(this, 'Config', { metadata: meta(names.config), data: setup.config });
    const server = this.addStatefulSet(parts, setup);
    if (spec.restore && props.restoring) {
      const restore = new DatabaseRestore(this, 'Restore', {
        name: props.name,
        namespace: props.namespace,
        source: dumpSource(spec.restore),
        image: engine.image(spec.version),
        env: engine.env(names.credentials),
        uid: DB_UID,
        labels: standardLabels({ ...labelProps, component: 'restore' }),
        ownerReferences: owned,
        dataClaim: {
          name: `data-${names.statefulSet}-0`,
          labels: selector,
          spec: dataClaimSpec(spec),
          // As the StatefulSet's retention policy does for its own claims.
          ownerReferences: deleteData ? owned : undefined,
        },
        dataPath: engine.dataPath,
      });
      // The server's first start finds the dump loaded: nothing is served half-restored.
      waitsFor(server, restore.job);
    }
    // Scheduled dumps of a server that does not run yet would only fail: the CronJob is made (and
    // changed) once the server's pod is ready.
    if (spec.backup.enabled) waitsFor(this.addBackups(parts), server);
  }

  /**
   * The Services: headless for the StatefulSet's pods; `<name>` and `<name>-rw` to the primary's
   * pod alone (a standby never takes a write through them); `<name>-ro` to the standbys, as the
   * operator labels them once each answers as one; and with standbys a PodDisruptionBudget.
   */
  private addServices(parts: DatabaseParts): void {
    const { props, engine, names, meta, selector } = parts;
    const { spec } = props;
    const portSpec = [{ name: 'db', port: engine.port, targetPort: k8s.IntOrString.fromString('db'), protocol: 'TCP' }];
    new k8s.KubeService(this, 'Headless', {
      metadata: meta(names.headless),
      // Every instance's name resolves, ready or not: the operator asks a standby still catching up.
      spec: { clusterIp: 'None', publishNotReadyAddresses: true, selector, ports: portSpec },
    });
    const primarySelector = { ...selector, [POD_NAME_LABEL]: parts.primary.pod };
    new k8s.KubeService(this, 'Service', {
      metadata: meta(names.service),
      spec: { type: 'ClusterIP', selector: primarySelector, ports: portSpec },
    });
    new k8s.KubeService(this, 'ReadWrite', {
      metadata: meta(names.readWrite),
      spec: { type: 'ClusterIP', selector: primarySelector, ports: portSpec },
    });
    if (spec.type === 'postgresql') {
      // The standbys, as the operator labels them once each answers as one.
      new k8s.KubeService(this, 'ReadOnly', {
        metadata: meta(names.readOnly),
        spec: { type: 'ClusterIP', selector: { ...selector, [ROLE_LABEL]: STANDBY_ROLE }, ports: portSpec },
      });
    }
    if (instanceCount(spec) > 1) {
      // A drain takes one instance at a time: the primary or one standby, never all.
      new k8s.KubePodDisruptionBudget(this, 'DisruptionBudget', {
        metadata: meta(names.disruptionBudget),
        spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
      });
    }
  }

  /** The server: one pod with its data on a claim, kept or deleted with the Database as its policy says. */
  private addStatefulSet(parts: DatabaseParts, setup: PostgresSetup | undefined): k8s.KubeStatefulSet {
    const { props, engine, names, labels, selector, meta, deleteData } = parts;
    const { spec } = props;
    const scratch = engine.scratchPaths.map((p, i) => ({ name: `scratch-${i}`, mountPath: p }));
    // Never fewer than the primary's ordinal needs: a scale-down switches over first.
    const replicas = Math.max(instanceCount(spec), (instanceOrdinal(props.name, parts.primary.pod) ?? 0) + 1);
    return new k8s.KubeStatefulSet(this, 'StatefulSet', {
      metadata: meta(names.statefulSet),
      spec: {
        serviceName: names.headless,
        replicas,
        // With standbys the operator rolls a template change itself — the standbys first, then a
        // switchover (instances.ts) — where the StatefulSet's own order could restart the primary
        // while a standby is down.
        ...(replicas > 1 ? { updateStrategy: { type: 'OnDelete' } } : {}),
        selector: { matchLabels: selector },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: deleteData ? 'Delete' : 'Retain', whenScaled: 'Retain' },
        template: {
          metadata: { labels, annotations: setup?.annotations },
          spec: {
            automountServiceAccountToken: false,
            securityContext: restrictedPodSecurityContext(DB_UID),
            containers: [
              {
                name: spec.type,
                image: engine.image(spec.version),
                command: setup?.command,
                args: setup?.args,
                env: [...engine.env(names.credentials), ...(engine.instanceEnv?.(names) ?? [])],
                ports: [{ name: 'db', containerPort: engine.port, protocol: 'TCP' }],
                // From the container's start and every 2 s: the Service sends clients to a server
                // within about a second of its accepting connections, not up to 10 s later.
                readinessProbe: {
                  exec: { command: ['sh', '-c', engine.ready] },
                  periodSeconds: 2,
                },
                livenessProbe: {
                  tcpSocket: { port: k8s.IntOrString.fromString('db') },
                  initialDelaySeconds: 30,
                  periodSeconds: 10,
                },
                resources: serverResources(spec),
                securityContext: restrictedContainerSecurityContext(),
                volumeMounts: [
                  { name: 'data', mountPath: engine.dataPath },
                  ...scratch,
                  ...(setup?.volumeMounts ?? []),
                ],
              },
            ],
            volumes: [...scratch.map((s) => ({ name: s.name, emptyDir: {} })), ...(setup?.volumes ?? [])],
          },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data', labels: selector }, spec: dataClaimSpec(spec) }],
      },
    });
  }

  /** Scheduled dumps into a backup claim, which is user data: owned only under Delete. */
  private addBackups(parts: DatabaseParts): k8s.KubeCronJob {
    const { props, names, meta, owned, deleteData } = parts;
    const { spec } = props;
    const dump = backupDump(parts, props.name, spec.backup.retention);
    new k8s.KubePersistentVolumeClaim(this, 'BackupClaim', {
      // Backups are user data: owned (and so deleted with the Database) only under Delete.
      metadata: { ...meta(names.backup, dump.labels), ownerReferences: deleteData ? owned : undefined },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: spec.storage.storageClassName,
        resources: {
          requests: { storage: k8s.Quantity.fromString(String(spec.backup.storageSize ?? spec.storage.size)) },
        },
      },
    });
    if (props.listBackups) {
      const listLabels = standardLabels({ ...parts.labelProps, component: BACKUP_LIST_COMPONENT });
      backupListJob(this, 'ListBackups', {
        metadata: meta(backupListJobName(props.name), listLabels),
        labels: listLabels,
        claim: names.backup,
        // The scheduled dumps and the final one (see backupDump).
        patterns: [`${props.name}-*.sql`, `final-${props.name}-*.sql`],
        image: parts.engine.image(spec.version),
        uid: DB_UID,
      });
    }
    return backupCronJob(this, 'Backup', {
      ...dump,
      metadata: meta(names.backup, dump.labels),
      schedule: spec.backup.schedule,
    });
  }
}

export interface FinalBackupJobProps extends DatabaseResourcesProps {
  /** Controller owner reference to the Database: the Job goes with it. */
  readonly owner: k8s.OwnerReference;
}

/**
 * The final dump of a Database being deleted (`spec.backup.finalSnapshot`): one Job like the
 * scheduled ones, writing `final-<name>-<time>.sql` to the backup volume, which is kept.
 */
export class FinalBackupJob extends Construct {
  constructor(scope: Construct, id: string, props: FinalBackupJobProps) {
    super(scope, id);
    const parts = databaseParts(props);
    const dump = backupDump(parts, `final-${props.name}`);
    new k8s.KubeJob(this, 'Job', {
      metadata: parts.meta(parts.names.finalBackup, dump.labels),
      spec: backupJobSpec(dump),
    });
  }
}

/** The server container's compute resources: `spec.resources` as given, else the defaults it documents. */
function serverResources(spec: DatabaseSpec): k8s.ResourceRequirements {
  if (spec.resources)
    return { requests: quantityMap(spec.resources.requests), limits: quantityMap(spec.resources.limits) };
  return {
    requests: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('256Mi') },
    limits: { memory: k8s.Quantity.fromString('1Gi') },
  };
}

/** The data claim: the StatefulSet's claim template, and a restore's claim before it. */
function dataClaimSpec(spec: DatabaseSpec): k8s.PersistentVolumeClaimSpec {
  return {
    accessModes: ['ReadWriteOnce'],
    storageClassName: spec.storage.storageClassName,
    resources: { requests: { storage: k8s.Quantity.fromString(String(spec.storage.size)) } },
  };
}

/** The shared parts of every Database resource. */
function databaseParts(props: DatabaseResourcesProps): DatabaseParts {
  const { name, spec } = props;
  const labelProps = {
    name: spec.type,
    instance: name,
    component: 'database',
    managedBy: props.managedBy ?? 'database-operator',
  };
  const labels = standardLabels(labelProps);
  const owned = props.owner ? [props.owner] : undefined;
  return {
    props,
    engine: ENGINES[spec.type],
    names: databaseNames(name),
    labelProps,
    labels,
    selector: selectorLabels(labelProps),
    owned,
    deleteData: spec.deletionPolicy === 'Delete',
    primary: {
      pod: props.primary ?? instancePod(name, 0),
      initialize: (props.initialize ?? true) || instanceCount(spec) === 1,
    },
    meta: (objectName, l = labels) => ({
      name: objectName,
      namespace: props.namespace,
      labels: l,
      ownerReferences: owned,
    }),
  };
}

/**
 * The shell line deleting all but the newest `retention` dumps named `<prefix>-<UTC time>.sql`
 * from /backup (the times sort as text); other files, final dumps among them, are never touched.
 */
export function dumpRotationLine(prefix: string, retention: number): string {
  return `ls -1 /backup/${prefix}-????????T??????Z.sql 2>/dev/null | sort -r | tail -n +${retention + 1} | while read -r old; do rm -f -- "$old"; done`;
}

/**
 * A backup Job's pod: one dump of the database to `/backup/<prefix>-<UTC time>.sql`, written whole
 * or not at all; with `retention`, the oldest dumps of that prefix beyond it deleted after.
 */
function backupDump({ props, engine, names, labelProps }: DatabaseParts, prefix: string, retention?: number) {
  const host = (service: string) => `${service}.${props.namespace}.svc`;
  // With standbys, dumped from one (<name>-ro), sparing the primary the dump's reads; from the
  // primary when none serves (or the standby cancels the dump, replaying a change it conflicts with).
  const fromStandby = props.spec.type === 'postgresql' && instanceCount(props.spec) > 1;
  const dump = fromStandby
    ? `if ${engine.dump(host(names.readOnly))} > "$f.partial"; then echo "dumped from a standby through ${names.readOnly}" >&2; else echo "no standby dumped it: dumping the primary through ${names.service}" >&2; ${engine.dump(host(names.service))} > "$f.partial"; fi`
    : `${engine.dump(host(names.service))} > "$f.partial"`;
  const labels = standardLabels({ ...labelProps, component: 'backup' });
  return {
    labels,
    uid: DB_UID,
    containers: [
      {
        name: 'dump',
        image: engine.image(props.spec.version),
        command: [
          'sh',
          '-c',
          [
            'set -e',
            `f=/backup/${prefix}-$(date -u +%Y%m%dT%H%M%SZ).sql`,
            dump,
            'mv "$f.partial" "$f"',
            ...(retention ? [dumpRotationLine(prefix, retention)] : []),
            reportBackupLine('"$f"', names.backup),
          ].join('; '),
        ],
        terminationMessagePolicy: 'FallbackToLogsOnError',
        env: [
          fromSecret('DB_USER', names.credentials, 'username'),
          fromSecret('DB_PASSWORD', names.credentials, 'password'),
          fromSecret('DB_NAME', names.credentials, 'database'),
        ],
        resources: stepResources('50m', '64Mi', '512Mi'),
        securityContext: restrictedContainerSecurityContext(),
        volumeMounts: [
          { name: 'backup', mountPath: '/backup' },
          { name: 'tmp', mountPath: '/tmp' },
        ],
      },
    ],
    volumes: [
      { name: 'backup', persistentVolumeClaim: { claimName: names.backup } },
      { name: 'tmp', emptyDir: {} },
    ],
  };
}

/** What the parts of one Database's resources share. */
interface DatabaseParts {
  readonly props: DatabaseResourcesProps;
  readonly engine: (typeof ENGINES)[keyof typeof ENGINES];
  readonly names: ReturnType<typeof databaseNames>;
  readonly labelProps: StandardLabelsProps;
  readonly labels: Record<string, string>;
  readonly selector: Record<string, string>;
  readonly owned: k8s.OwnerReference[] | undefined;
  readonly deleteData: boolean;
  readonly primary: Primary;
  readonly meta: (
    objectName: string,
    labels?: Record<string, string>,
  ) => {
    name: string;
    namespace: string | undefined;
    labels: Record<string, string>;
    ownerReferences: k8s.OwnerReference[] | undefined;
  };
}
