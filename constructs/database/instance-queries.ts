/**
 * What the operator asks a Database's PostgreSQL instances, as the replication role, over the
 * pod network: whether each is a standby, where its WAL is and on which timeline — and the one
 * write it makes there, a standby's promotion. Loaded only at run time (it needs `pg`, which a
 * synth never loads).
 */
import { Client, type ClientConfig } from 'pg';
import { REPLICATION_USER } from './replication';

/** What one instance says of itself. */
export interface InstanceAnswer {
  /** In recovery: a standby (or a primary not yet promoted). */
  readonly standby: boolean;
  /** The primary's write position; a standby's position received (else replayed). */
  readonly lsn: string;
  /** A standby's position replayed. */
  readonly replayed?: string;
  /**
   * The timeline it writes (a primary) or receives (a standby); a standby not streaming reports its
   * last restartpoint's, which may be an earlier one than the WAL it holds.
   */
  readonly timeline?: number;
  /** A standby's WAL receiver is streaming from a primary now (its timeline is then the one it receives). */
  readonly streaming?: boolean;
}

/** How the operator reaches the instances. */
export interface InstanceConnection {
  readonly password: string;
  /** Whether the servers serve TLS: then it is asked for (SCRAM authenticates both ends' knowledge of the password). */
  readonly tls: boolean;
  readonly signal: AbortSignal;
  /** @default 3000 */
  readonly timeoutMs?: number;
}

const ASK_INSTANCE = `
SELECT pg_is_in_recovery() AS standby,
  CASE WHEN pg_is_in_recovery()
    THEN coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::text
    ELSE pg_current_wal_lsn()::text END AS lsn,
  pg_last_wal_replay_lsn()::text AS replayed,
  CASE WHEN pg_is_in_recovery()
    THEN coalesce((SELECT received_tli FROM pg_stat_wal_receiver), (SELECT timeline_id FROM pg_control_checkpoint()))
    ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS timeline,
  pg_is_in_recovery() AND EXISTS (SELECT FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming`;

/** Runs `work` over a connection to `host`, closed after (and on the stop signal). */
async function withClient<T>(host: string, c: InstanceConnection, work: (client: Client) => Promise<T>): Promise<T> {
  const timeout = c.timeoutMs ?? 3000;
  const config: ClientConfig = {
    host,
    port: 5432,
    user: REPLICATION_USER,
    password: c.password,
    database: 'postgres',
    // The certificate names the Database's Services and pods, signed by a CA of its own that
    // the operator does not read: the channel is encrypted; SCRAM keeps the password off it.
    ssl: c.tls ? { rejectUnauthorized: false } : false,
    connectionTimeoutMillis: timeout,
    query_timeout: timeout * 10,
    application_name: 'database-operator',
  };
  const client = new Client(config);
  const stop = () => void client.end().catch(() => undefined);
  c.signal.addEventListener('abort', stop, { once: true });
  try {
    await client.connect();
    return await work(client);
  } finally {
    c.signal.removeEventListener('abort', stop);
    await client.end().catch(() => undefined);
  }
}

/** What the instance at `host` says of itself. */
export function askInstance(host: string, c: InstanceConnection): Promise<InstanceAnswer> {
  return withClient(host, c, async (client) => {
    const { rows } = await client.query<{
      standby: boolean;
      lsn: string;
      replayed: string | null;
      timeline: number | null;
      streaming: boolean;
    }>(ASK_INSTANCE);
    const row = rows[0];
    if (!row) throw new Error(`${host} answered no row`);
    return {
      standby: row.standby,
      lsn: row.lsn,
      ...(row.replayed ? { replayed: row.replayed } : {}),
      ...(row.timeline ? { timeline: row.timeline } : {}),
      ...(row.standby ? { streaming: row.streaming } : {}),
    };
  });
}

/**
 * Promotes the standby at `host` and waits until it takes writes; then asks for a checkpoint on
 * its new timeline, which a former primary's pg_rewind waits for (granted from PostgreSQL 15: an
 * older server makes it on its own, later).
 */
export function promoteInstance(host: string, c: InstanceConnection): Promise<void> {
  return withClient(host, c, async (client) => {
    const { rows } = await client.query<{ promoted: boolean }>('SELECT pg_promote(true, 60) AS promoted');
    if (rows[0]?.promoted !== true) throw new Error(`${host} did not finish its promotion within 60 s`);
    await client.query('CHECKPOINT').catch(() => undefined);
  });
}
