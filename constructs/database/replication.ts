/**
 * Streaming replication of a PostgreSQL Database: the replication role and its Secret, and how
 * each instance starts — the primary as itself, a standby cloned from the primary (pg_basebackup)
 * and streaming from it, a former primary rewound (pg_rewind) onto the new primary's timeline.
 * Which instance is the primary is the operator's word, in the ConfigMap `<name>-config`; a
 * standby becomes the primary only by the operator's `pg_promote()` (a new timeline), never by a
 * restart.
 */
import type { KubeObject, Secret } from '../contract';
import type { Database } from './api';

/** The role standbys stream as and the operator asks the instances as. */
export const REPLICATION_USER = 'replicator';
/** The ConfigMap's keys this module reads at a start. */
export const START_SCRIPT = 'start.sh';
export const PRIMARY_KEY = 'primary';
export const INITIALIZE_KEY = 'initialize';
/** Where the passfile of the replication role is written at each start (an emptyDir). */
const PASSFILE = '/tmp/replication.pgpass';

/**
 * How long a standby waits on a silent primary before connecting again (PostgreSQL's default,
 * 60 s, would hold a synchronous primary's commits that long after a failover).
 */
const WAL_RECEIVER_TIMEOUT = '5s';

/** The Secret of the replication role: `<name>-replication`. */
export const replicationSecretName = (database: string) => `${database}-replication`;

/** The shell lines setting `keep_wal`: how much WAL to keep, in the setting of the server's version (12 counts segments). */
const KEEP_WAL_LINES = [
  // `postgres (PostgreSQL) 15.18 …` to 15, by the shell alone (an image may have no sed).
  'version=$(postgres -V); version=${version#*) }; major=${version%%.*}',
  `if [ "$major" -ge 13 ]; then keep_wal="wal_keep_size = '512MB'"; else keep_wal='wal_keep_segments = 32'; fi`,
];

/** Whether the server's last checkpoint is on the timeline it writes now (true after a promotion's first). */
const CHECKPOINTED_ON_TIMELINE =
  "SELECT (SELECT timeline_id FROM pg_control_checkpoint()) = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int";

/** The password the operator generates: base64url, so the start script may check it is no other. */
const PASSWORD_CHARACTERS = 'A-Za-z0-9_-';

/**
 * The replication role's Secret a Database of PostgreSQL gets, made once by the operator with a
 * random password and controlled by the Database (the operator reads it back to ask the
 * instances; it goes with the Database — a Database made again over kept data gets a new one,
 * which its primary sets at its next start).
 */
export function newReplicationSecret(db: Database): Secret {
  const { name, namespace } = db.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: replicationSecretName(name),
      namespace,
      labels: {
        'app.kubernetes.io/name': db.spec.type,
        'app.kubernetes.io/instance': name,
        'app.kubernetes.io/component': 'replication',
        'app.kubernetes.io/managed-by': 'database-operator',
      },
      ownerReferences: [
        {
          apiVersion: db.apiVersion,
          kind: db.kind,
          name,
          uid: db.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    type: 'Opaque',
    stringData: {
      username: REPLICATION_USER,
      password: Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url'),
    },
  };
}

/** The replication role's password from its Secret as the operator read it back. */
export function replicationPassword(secret: KubeObject): string | undefined {
  const data = (secret as Secret).data?.password;
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

/**
 * The replication role as the Secret says, made or changed by the superuser: it logs in, streams
 * (REPLICATION), reads the servers' statistics (pg_monitor) and may promote a standby and read
 * the files pg_rewind compares — nothing of the application's data but through replication; and
 * hint bits logged, which pg_rewind needs.
 * `password` is a shell word holding a checked password (no quote in it). Each statement ends
 * with an empty line, as postgres's single-user mode (-j) reads them.
 */
function replicationRoleSql(password: string): string[] {
  return [
    "SET password_encryption = 'scram-sha-256';",
    // In a here-document the shell reads: its dollars escaped.
    `DO \\$\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${REPLICATION_USER}') THEN CREATE ROLE ${REPLICATION_USER} LOGIN REPLICATION; END IF; END \\$\\$;`,
    `ALTER ROLE ${REPLICATION_USER} LOGIN REPLICATION PASSWORD '${password}';`,
    `GRANT pg_monitor TO ${REPLICATION_USER};`,
    // pg_rewind needs it, read from the control file, which every start writes — pg_rewind's own
    // crash recovery too, which has no command line of ours: so in the data directory's settings.
    'ALTER SYSTEM SET wal_log_hints = on;',
    // The WAL back to the checkpoint before a divergence, for pg_rewind (and a standby behind):
    // kept by every start too, pg_rewind's crash recovery among them. `$keep_wal`: by version.
    'ALTER SYSTEM SET $keep_wal;',
    `GRANT EXECUTE ON FUNCTION pg_promote(boolean, integer) TO ${REPLICATION_USER};`,
    `GRANT EXECUTE ON FUNCTION pg_control_checkpoint() TO ${REPLICATION_USER};`,
    // The checkpoint after a promotion, asked at once where the server lets a role other than the superuser (15 on).
    `DO \\$\\$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'pg_checkpoint') THEN GRANT pg_checkpoint TO ${REPLICATION_USER}; END IF; END \\$\\$;`,
    `GRANT EXECUTE ON FUNCTION pg_ls_dir(text, boolean, boolean) TO ${REPLICATION_USER};`,
    `GRANT EXECUTE ON FUNCTION pg_stat_file(text, boolean) TO ${REPLICATION_USER};`,
    `GRANT EXECUTE ON FUNCTION pg_read_binary_file(text) TO ${REPLICATION_USER};`,
    `GRANT EXECUTE ON FUNCTION pg_read_binary_file(text, bigint, bigint, boolean) TO ${REPLICATION_USER};`,
  ];
}

/** The lines of the client rules (pg_hba.conf) for the replication role: streaming, and the operator's questions. */
export function replicationHbaRules(network: 'host' | 'hostssl'): string[] {
  return [
    // md5 asks for SCRAM where the password is stored as SCRAM, as it is (see replicationRoleSql).
    `${network} replication ${REPLICATION_USER} all md5`,
    `${network} postgres ${REPLICATION_USER} all md5`,
  ];
}

/** What the start script needs to know of its Database. */
export interface StartScriptProps {
  /** Where standbys stream from: the `<name>-rw` Service. */
  readonly primaryService: string;
  /** Directory of the ConfigMap's files. */
  readonly configDir: string;
  /** libpq's TLS settings for the connection to the primary. */
  readonly tls: string;
}

/**
 * The script each instance starts with (its entrypoint then runs the server, as PID 1):
 *
 * - the primary (as the ConfigMap names it) with data: the replication role set as its Secret
 *   says, in single-user mode before the server listens; without data: initialized by the image's
 *   entrypoint (the role made by its first-start script) — unless the ConfigMap says the Database
 *   was initialized already, when its data is on the standbys and a new empty one would only hide
 *   it: then it refuses, and the operator promotes a standby;
 * - any other instance without data: cloned from the primary, then a standby;
 * - a former primary (data, no standby.signal): rewound onto the primary's timeline, a standby;
 * - a standby: as it is, streaming from `<name>-rw` (whichever instance that is now).
 *
 * A data directory is never deleted: a clone goes to a directory of its own first, and one that
 * cannot be rewound stops the start, saying so.
 */
export function startScript(p: StartScriptProps): string {
  // connect_timeout: a primary that hangs accepts a connection and answers nothing — the clone,
  // the rewind and its checkpoint wait give up on it and fail (the start is tried again). The WAL
  // receiver applies no connect timeout of its own: a standby whose receiver hangs so is restarted
  // by the operator (stuck-standbys.ts).
  const source = `host=${p.primaryService} port=5432 user=${REPLICATION_USER} passfile=${PASSFILE} connect_timeout=5 ${p.tls}`;
  const sql = replicationRoleSql('$password').join('\n\n');
  return `# Written by the Database operator (ConfigMap <name>-config): how this instance starts.
set -eu
say() { echo "database start: $*" >&2; }
me="$POD_NAME"
primary=$(cat ${p.configDir}/${PRIMARY_KEY})
password=$(printenv REPLICATION_PASSWORD || true)
case "$password" in
  '' | *[!${PASSWORD_CHARACTERS}]*) say "the replication password is not one the operator made"; exit 1 ;;
esac
(umask 077 && printf '*:*:*:%s:%s\\n' '${REPLICATION_USER}' "$password" > ${PASSFILE})
source='${source}'
${KEEP_WAL_LINES.join('\n')}
if [ "$me" = "$primary" ]; then
  if [ -s "$PGDATA/PG_VERSION" ] && [ ! -f "$PGDATA/standby.signal" ]; then
    postgres --single -j -D "$PGDATA" postgres > /dev/null <<SQL
${sql}
SQL
  elif [ ! -s "$PGDATA/PG_VERSION" ] && [ "$(cat ${p.configDir}/${INITIALIZE_KEY})" != yes ]; then
    say "$me is the primary but has no data: the Database holds data already, on its standbys; one of them is promoted"
    exit 1
  fi
elif [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -d "$PGDATA" ] && [ -n "$(ls -A "$PGDATA")" ]; then
    say "$PGDATA holds files but no database: left as it is"
    exit 1
  fi
  say "cloning the primary through ${p.primaryService}"
  rm -rf "$PGDATA.clone"
  pg_basebackup -d "$source" -D "$PGDATA.clone" -X stream -c fast
  touch "$PGDATA.clone/standby.signal"
  rmdir "$PGDATA" 2> /dev/null || true
  mv "$PGDATA.clone" "$PGDATA"
elif [ ! -f "$PGDATA/standby.signal" ]; then
  say "$me was a primary: rewinding it onto the primary's timeline"
  # pg_rewind reads the primary's timeline from its last checkpoint: a standby just promoted has
  # made none on its new one yet, and pg_rewind would find no rewind needed.
  tries=0
  until [ "$(psql -d "$source dbname=postgres" -Atc "${CHECKPOINTED_ON_TIMELINE}" 2> /dev/null)" = t ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 300 ] || { say "the primary has made no checkpoint on its timeline yet"; exit 1; }
    sleep 2
  done
  if ! pg_rewind -D "$PGDATA" --source-server="$source dbname=postgres"; then
    say "pg_rewind failed: the data is kept as it is; delete this instance's claim and pod to clone it again"
    exit 1
  fi
  touch "$PGDATA/standby.signal"
fi
# A standby whose primary stops answering (a hung node, a frozen container) leaves it after
# wal_receiver_timeout and connects through ${p.primaryService} again, to the primary now there.
# hot_standby_feedback: the primary keeps the rows a standby's queries (a backup's dump) still read.
exec docker-entrypoint.sh "$@" -c "primary_conninfo=$source application_name=$me" -c wal_receiver_timeout=${WAL_RECEIVER_TIMEOUT} -c hot_standby_feedback=on
`;
}

/** The first-start script (in /docker-entrypoint-initdb.d) making the replication role. */
export function replicationRoleInitScript(): string {
  return [
    '# The replication role (see the Database operator docs).',
    'password=$(printenv REPLICATION_PASSWORD)',
    ...KEEP_WAL_LINES,
    `psql -v ON_ERROR_STOP=1 --no-psqlrc -q --username postgres --dbname postgres <<SQL`,
    replicationRoleSql('$password').join('\n\n'),
    'SQL',
    '',
  ].join('\n');
}
