/**
 * What a PostgreSQL server is started with besides its image's defaults: the application role's
 * script for its first start, the client authentication rules (pg_hba.conf) and TLS. The files
 * come from the ConfigMap `<name>-config` and the Secret `<name>-tls`; the settings are the
 * server's command line, so a Database made by an earlier version gets them too (its data
 * directory's own pg_hba.conf is no longer read).
 */
import { type k8s } from 'cdk8s-plus-27';
import { type DatabaseSpec, MAX_INSTANCES } from './api';
import { applicationRoleCommand } from './application-role';
import { instancePod, synchronousCount } from './instance-names';
import {
  INITIALIZE_KEY,
  PRIMARY_KEY,
  replicationHbaRules,
  replicationRoleInitScript,
  START_SCRIPT,
  startScript,
} from './replication';

/** The ConfigMap's keys. */
const APPLICATION_ROLE_SCRIPT = '10-application-role.sh';
const REPLICATION_ROLE_SCRIPT = '20-replication-role.sh';
const HBA_FILE = 'pg_hba.conf';
/** Where the image runs scripts from on its first start, and where the server's files are mounted. */
const INIT_SCRIPTS_DIR = '/docker-entrypoint-initdb.d';
const CONFIG_DIR = '/etc/postgresql/operator';
const TLS_DIR = '/etc/postgresql/tls';

/** Pod template annotation naming who may connect how: a change restarts the server, which reads pg_hba.conf at start. */
export const CLIENT_ACCESS_ANNOTATION = 'database.example.com/client-access';

/** How a PostgreSQL server of a Database is set up. */
export interface PostgresSetup {
  /** The data of the ConfigMap `config` names. */
  readonly config: Record<string, string>;
  /** The container's command: the start script (see replication.ts), which runs the image's entrypoint. */
  readonly command: string[];
  /** The server's arguments (the image's entrypoint passes them to postgres). */
  readonly args: string[];
  readonly volumes: k8s.Volume[];
  readonly volumeMounts: k8s.VolumeMount[];
  /** What the pod template carries so that a change of access restarts the server. */
  readonly annotations: Record<string, string>;
}

/** How clients may connect over the network: TLS required, offered, or not served. */
export function clientAccess(spec: DatabaseSpec): 'tls-required' | 'tls-offered' | 'plaintext' {
  if (!servesTlsBySpec(spec)) return 'plaintext';
  return tlsOf(spec)?.required === true ? 'tls-required' : 'tls-offered';
}

/** Whether the spec asks for TLS: `tls.enabled`, true unless said false (its default). */
export function servesTlsBySpec(spec: DatabaseSpec): boolean {
  return tlsOf(spec)?.enabled !== false;
}

/** The API server stores `tls` with its defaults; a spec read from a file before it (a sample, a render) may have none. */
function tlsOf(spec: DatabaseSpec): Partial<DatabaseSpec['tls']> | undefined {
  return spec.tls;
}

/**
 * Who may connect, and how: over the server's own socket and loopback without a password (as the
 * image's own initdb leaves it: probes, `kubectl exec`), from anywhere else by password — over TLS
 * only when it is required (hostssl). `md5` asks for SCRAM where the password is stored as SCRAM
 * (every role the operator makes), and accepts the MD5 a data directory of an older image stored.
 */
export function hbaRules(spec: DatabaseSpec): string {
  const network = clientAccess(spec) === 'tls-required' ? 'hostssl' : 'host';
  return [
    '# Written by the Database operator (ConfigMap <name>-config): a change here is overwritten.',
    'local all all trust',
    'host all all 127.0.0.1/32 trust',
    'host all all ::1/128 trust',
    ...replicationHbaRules(network),
    `${network} all all all md5`,
    '',
  ].join('\n');
}

/** Which instance is the primary, as the operator says, and whether a primary without data may start a new one. */
export interface Primary {
  /** The primary's pod. */
  readonly pod: string;
  /** Whether the Database has never held data: its primary then initializes a new data directory. */
  readonly initialize: boolean;
}

/**
 * The setting that makes a primary acknowledge a commit only once `count` standbys have flushed it:
 * any of every name an instance may have (a standby streams as its pod's name), so it holds
 * whichever instance is the primary and stays the same as the instances are scaled — only a
 * change of `count` changes the pod template. A name with no instance never answers; the
 * primary's own never streams from it.
 */
export function synchronousStandbyNames(statefulSet: string, count: number): string {
  const names = Array.from({ length: MAX_INSTANCES }, (_, i) => `"${instancePod(statefulSet, i)}"`);
  return `synchronous_standby_names=ANY ${String(count)} (${names.join(', ')})`;
}

/** The setup of the server of a Database whose ConfigMap is `config`, TLS Secret `tls` and primary `primary`. */
export function postgresSetup(
  spec: DatabaseSpec,
  names: { config: string; tls: string; readWrite: string; statefulSet: string },
  primary: Primary,
): PostgresSetup {
  const tls = servesTlsBySpec(spec);
  const synchronous = synchronousCount(spec);
  return {
    config: {
      [APPLICATION_ROLE_SCRIPT]: `# The application's role and database (see the Database operator's docs).\n${applicationRoleCommand('--username postgres --dbname postgres')}\n`,
      [REPLICATION_ROLE_SCRIPT]: replicationRoleInitScript(),
      [HBA_FILE]: hbaRules(spec),
      [START_SCRIPT]: startScript({
        primaryService: names.readWrite,
        configDir: CONFIG_DIR,
        // The primary's certificate names <name>-rw, signed by the Database's CA.
        tls: tls ? `sslmode=verify-full sslrootcert=${TLS_DIR}/ca.crt` : 'sslmode=prefer',
      }),
      [PRIMARY_KEY]: primary.pod,
      [INITIALIZE_KEY]: primary.initialize ? 'yes' : 'no',
    },
    command: ['sh', `${CONFIG_DIR}/${START_SCRIPT}`],
    args: [
      'postgres',
      '-c',
      `hba_file=${CONFIG_DIR}/${HBA_FILE}`,
      // Every password set from now on is stored as SCRAM (the default from PostgreSQL 14 on).
      '-c',
      'password_encryption=scram-sha-256',
      ...(tls
        ? ['-c', 'ssl=on', '-c', `ssl_cert_file=${TLS_DIR}/tls.crt`, '-c', `ssl_key_file=${TLS_DIR}/tls.key`]
        : []),
      ...(synchronous > 0 ? ['-c', synchronousStandbyNames(names.statefulSet, synchronous)] : []),
    ],
    volumes: [
      {
        name: 'init',
        configMap: {
          name: names.config,
          items: [APPLICATION_ROLE_SCRIPT, REPLICATION_ROLE_SCRIPT].map((key) => ({ key, path: key })),
        },
      },
      {
        name: 'config',
        configMap: {
          name: names.config,
          items: [HBA_FILE, START_SCRIPT, PRIMARY_KEY, INITIALIZE_KEY].map((key) => ({ key, path: key })),
        },
      },
      // Readable by the server's group (its fsGroup) and owned by root: the modes PostgreSQL
      // accepts for a key it does not own.
      ...(tls ? [{ name: 'tls', secret: { secretName: names.tls, defaultMode: 0o640 } }] : []),
    ],
    volumeMounts: [
      { name: 'init', mountPath: INIT_SCRIPTS_DIR, readOnly: true },
      { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
      ...(tls ? [{ name: 'tls', mountPath: TLS_DIR, readOnly: true }] : []),
    ],
    annotations: { [CLIENT_ACCESS_ANNOTATION]: clientAccess(spec) },
  };
}
