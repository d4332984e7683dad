import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import { stepResources } from '../core/step-resources';
import { retriedOnDisruption } from '../core/pods';
import { reportRestoreLine } from '../core/restore-status';
import type { DatabaseSpec } from './api';
import { applicationRoleCommand } from './application-role';

/** Where a restore reads its dump: the backup claim of a Database, and a dump by name or the newest. */
export interface DumpSource {
  readonly claim: string;
  /** The dump's file name; undefined: the newest dump in the claim. */
  readonly dump?: string;
}

/** The backup claim of a Database (see `databaseNames`). */
function backupClaimOf(database: string): string {
  return `${database}-backup`;
}

/**
 * The dump `spec.restore` names: a backup with its claim (as status.backups lists them) is read
 * from that claim; a backup by name alone lives in the backup claim of the Database that wrote it
 * (`[final-]<database>-<time>.sql` in `<database>-backup` — read off the name, which a Database
 * whose own name starts with `final-` makes ambiguous: give the claim); `fromDatabase` is the
 * newest dump in that Database's claim.
 */
export function dumpSource(restore: NonNullable<DatabaseSpec['restore']>): DumpSource {
  // Where status.backups says the dump is: nothing read off its name.
  if (restore.backup && restore.claim) return { claim: restore.claim, dump: restore.backup };
  if (restore.backup) {
    const database = restore.backup.replace(/^final-/, '').replace(/-\d{8}T\d{6}Z\.sql$/, '');
    return { claim: backupClaimOf(database), dump: restore.backup };
  }
  return { claim: backupClaimOf(restore.fromDatabase ?? '') };
}

/** What a dump source is, in words. */
export function describeDumpSource(source: DumpSource): string {
  return source.dump ? `dump ${source.dump} from PVC ${source.claim}` : `the newest dump in PVC ${source.claim}`;
}

export interface DatabaseRestoreProps {
  readonly name: string;
  readonly namespace?: string;
  readonly source: DumpSource;
  /** The server's image: the Job runs the same PostgreSQL. */
  readonly image: string;
  /** The server's environment (the application role's DATABASE_USER, DATABASE_PASSWORD and DATABASE_NAME from the credentials Secret, PGDATA). */
  readonly env: k8s.EnvVar[];
  readonly uid: number;
  readonly labels: Record<string, string>;
  readonly ownerReferences?: k8s.OwnerReference[];
  /** The data claim, named and shaped as the StatefulSet's claim template makes it. */
  readonly dataClaim: { readonly name: string; readonly labels: Record<string, string> } & {
    readonly spec: k8s.PersistentVolumeClaimSpec;
    readonly ownerReferences?: k8s.OwnerReference[];
  };
  /** Where the data volume is mounted (PGDATA is a directory inside it). */
  readonly dataPath: string;
}

/** The restore Job of a Database. */
export function restoreJobName(database: string): string {
  return `${database}-restore`;
}

/**
 * The seeding of a new PostgreSQL Database from a dump, before its server first starts: the
 * data claim (as the StatefulSet's claim template names it, so the StatefulSet takes it up) and
 * a Job that builds the database in it as the server's first start would — initdb, the
 * application's role owning its database (`applicationRoleCommand`), remote logins by password — then
 * loads the dump in one transaction (a failing statement loads nothing), and only then moves the
 * result to where the server reads it. A failure leaves no database behind; a volume that already
 * holds one is refused. It runs once (a pod evicted or drained is made again,
 * `retriedOnDisruption`); its log's tail is the termination message the status reports.
 */
export class DatabaseRestore extends Construct {
  readonly job: k8s.KubeJob;

  constructor(scope: Construct, id: string, props: DatabaseRestoreProps) {
    super(scope, id);
    const { dataClaim } = props;
    new k8s.KubePersistentVolumeClaim(this, 'DataClaim', {
      metadata: {
        name: dataClaim.name,
        namespace: props.namespace,
        labels: dataClaim.labels,
        ownerReferences: dataClaim.ownerReferences,
      },
      spec: dataClaim.spec,
    });
    this.job = new k8s.KubeJob(this, 'Job', {
      metadata: {
        name: restoreJobName(props.name),
        namespace: props.namespace,
        labels: props.labels,
        ownerReferences: props.ownerReferences,
      },
      spec: {
        backoffLimit: 0,
        podFailurePolicy: retriedOnDisruption(),
        template: {
          metadata: { labels: props.labels },
          spec: {
            restartPolicy: 'Never',
            automountServiceAccountToken: false,
            securityContext: restrictedPodSecurityContext(props.uid),
            containers: [
              {
                name: 'restore',
                image: props.image,
                command: ['sh', '-c', postgresRestoreScript(props.source, dataClaim.name, props.dataPath)],
                env: props.env,
                terminationMessagePolicy: 'FallbackToLogsOnError',
                resources: stepResources('100m', '256Mi', '1Gi'),
                securityContext: restrictedContainerSecurityContext(),
                volumeMounts: [
                  { name: 'data', mountPath: props.dataPath },
                  { name: 'backup', mountPath: '/backup', readOnly: true },
                  { name: 'run', mountPath: '/var/run/postgresql' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'data', persistentVolumeClaim: { claimName: dataClaim.name } },
              { name: 'backup', persistentVolumeClaim: { claimName: props.source.claim, readOnly: true } },
              { name: 'run', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
      },
    });
  }
}

/**
 * The restore, in the postgres image's shell: pick the dump, refuse a volume with a database,
 * build the database aside, load the dump in one transaction, stop, move it into PGDATA.
 */
export function postgresRestoreScript(source: DumpSource, dataClaim: string, dataPath: string): string {
  const work = `${dataPath}/.restoring`;
  const pick = source.dump
    ? `dump='${source.dump}'`
    : // Names are [final-]<database>-<time>.sql: the newest by the time, the last part of the name.
      `dump=$(for f in /backup/*.sql; do [ -f "$f" ] || continue; b=\${f##*/}; s=\${b%.sql}; echo "\${s##*-} $b"; done | sort | tail -n 1 | cut -d ' ' -f 2)`;
  return [
    'set -eu',
    pick,
    `if [ -z "$dump" ] || [ ! -f "/backup/$dump" ]; then echo "${source.dump ? `dump ${source.dump} not found` : 'no dump'} in PVC ${source.claim}" >&2; exit 1; fi`,
    `if [ -s "$PGDATA/PG_VERSION" ]; then echo "PVC ${dataClaim} already holds a database: not restoring over it" >&2; exit 1; fi`,
    `rm -rf ${work}`,
    // --auth=trust: inside the pod, over its socket and loopback, as the image's own initdb leaves
    // it (its default), said aloud so initdb does not warn; other addresses need the password.
    // The superuser gets none, as on the server's own first start.
    `initdb -D ${work} --username=postgres --auth=trust > /dev/null`,
    // As the image's own first start: listening on every address, remote logins by password.
    `printf "\\nlisten_addresses = '*'\\n" >> ${work}/postgresql.conf`,
    `printf '\\nhost all all all scram-sha-256\\n' >> ${work}/pg_hba.conf`,
    `pg_ctl -D ${work} -l /tmp/server.log -o "-c listen_addresses='' -c unix_socket_directories=/tmp" -w start > /dev/null`,
    applicationRoleCommand('-h /tmp --username postgres --dbname postgres'),
    'echo "loading $dump"',
    // As the application's role: the dump makes nothing it could not make itself.
    'psql -h /tmp -U "$DATABASE_USER" -d "$DATABASE_NAME" -v ON_ERROR_STOP=1 --single-transaction -q -f "/backup/$dump" > /dev/null',
    `pg_ctl -D ${work} -m fast -w stop > /dev/null`,
    `mv ${work} "$PGDATA"`,
    reportRestoreLine('"$dump"', source.claim),
  ].join('\n');
}
