import {
  BuiltinTypes,
  type CronJob,
  type EventSpec,
  type FinalizeContext,
  type FinalizeOutcome,
  type KubeObject,
  type Observed,
  type Pod,
  type PrepareApi,
  type Problem,
  type Secret,
  type StatefulSet,
  type Verdict,
} from '../contract';
import type { ControllerDeclaration } from '../core/controller-declaration';
import { DEFAULT_IMAGE } from '../core/kit-image';
import { ConditionList, findCondition } from '../contract/conditions';
import { runFinalJob } from '../core/final-job';
import { renderConstructs } from '../contract/render';
import { podInstance } from '../core/pods';
import { selectorLabels } from '../core/labels';
import {
  BACKUP_LIST_COMPONENT,
  backupListEvents,
  type BackupListing,
  observedBackupListing,
  backupStatusFields,
  backupsToList,
} from '../core/backup-list';
import { reportedRestore, type RestoreProgress, setRestored, stillToRestore } from '../core/restore-status';
import { describeDumpSource, dumpSource, restoreJobName } from './database-restore';
import type { Database, DatabaseStatus } from './api';
import { databaseKind } from './api';
import { databaseNames, DatabaseResources, ENGINES, FinalBackupJob } from './database-resources';
import type * as ServerCertificate from './server-certificate';
import { servesTlsBySpec } from './postgres-server';
import { newReplicationSecret, replicationSecretName } from './replication';
import { type DatabaseFacts, observedDatabaseFacts } from './instances';
import { databaseInstancesStep } from './instances-step';
import { availabilityEvents, primaryState, replicationFields, SERVER_UNAVAILABLE, setAvailable } from './availability';

/** What `prepare` found of the credentials and TLS Secrets. */
export interface DatabasePrepared {
  /** The Secret is known to exist. */
  readonly hasCredentials: boolean;
  /** This reconcile created it. */
  readonly createdCredentials?: boolean;
  /** The TLS Secret is known to exist (a PostgreSQL Database serving TLS). */
  readonly hasTls?: boolean;
  /** This reconcile created the TLS Secret: when its certificate expires. */
  readonly createdTls?: { readonly expires: string };
  /** The replication role's Secret is known to exist (PostgreSQL). */
  readonly hasReplication?: boolean;
}

/**
 * The credentials Secret a new Database gets: a random password, generated here at run time.
 * It is owned by the retention ConfigMap, so it lives exactly as long as the Database's data.
 */
export function newCredentials(db: Database, retention: KubeObject): Secret {
  const names = databaseNames(db.metadata.name);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: names.credentials,
      namespace: db.metadata.namespace,
      labels: {
        'app.kubernetes.io/name': db.spec.type,
        'app.kubernetes.io/instance': db.metadata.name,
        'app.kubernetes.io/component': 'credentials',
        'app.kubernetes.io/managed-by': 'database-operator',
      },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: names.retention, uid: retention.metadata.uid ?? '' },
      ],
    },
    type: 'Opaque',
    stringData: {
      username: 'app',
      // Web Crypto's generator (a global): no module of Node's is loaded by the constructs entry.
      password: Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url'),
      database: db.metadata.name.replace(/[^a-z0-9]/g, '_'),
    },
  };
}

/** What a Database's status is made from. */
export interface DatabaseStatusInput {
  readonly statefulSet?: StatefulSet;
  /**
   * The StatefulSet's verdict by the children's rules (`observed.health`): its rollout of the
   * spec (a new version), its claims' sizes. Absent: judged by its ready pods alone.
   */
  readonly statefulSetHealth?: Verdict;
  readonly backup?: CronJob;
  /** The API server's refusal of a child. */
  readonly applyError?: string;
  /** Whether the credentials Secret is known to exist. */
  readonly hasCredentials: boolean;
  /** Whether the TLS Secret is known to exist, and when its certificate expires if this reconcile made it. @default not known */
  readonly tls?: { readonly exists: boolean };
  /** A pod, claim or StatefulSet Kubernetes cannot make or run. */
  readonly childFailure?: Problem;
  /** The finished pods of backup Jobs, whose termination messages name the dumps. @default none */
  readonly backupPods?: readonly Pod[];
  /** How the listing of the dumps already on the backup claim stands. @default nothing listed */
  readonly backupListing?: BackupListing;
  /** How the restore of `spec.restore` stands; absent without one. */
  readonly restore?: RestoreProgress;
  /** The primary and the instances as the external step found them. @default the status's primary, judged by the ready pods */
  readonly instances?: DatabaseFacts;
  /** Whether the replication role's Secret is known to exist. @default not known */
  readonly hasReplication?: boolean;
  /** Stamps conditions whose status changes. @default the current time */
  readonly now?: Date;
}

/** `BackupScheduled`: the schedule and the claim dumps go to, or that backups are off. */
function setBackupScheduled(list: ConditionList, db: Database, backupClaim: string): void {
  const { enabled, schedule } = db.spec.backup;
  if (enabled) list.set('BackupScheduled', 'True', 'Scheduled', `dumps on "${schedule}" to PVC ${backupClaim}`);
  else list.set('BackupScheduled', 'False', 'Disabled', 'backups are disabled');
}

/** The backup CronJob and its last success while backups are on, the dumps made, and the one restored. */
function backupFields(db: Database, cronJob: string, input: DatabaseStatusInput): Partial<DatabaseStatus> {
  const listed = {
    ...backupStatusFields(db.status, input.backupPods ?? [], input.backupListing),
    ...(db.spec.restore ? { restoredFrom: restoredFrom(db, input.restore?.pods ?? []) } : {}),
  };
  if (!db.spec.backup.enabled) return listed;
  const last = input.backup?.status?.lastSuccessfulTime;
  return { backupCronJob: cronJob, ...(last ? { lastBackupTime: last } : {}), ...listed };
}

/** The phase: Failed on a refusal, Ready with a ready server, Unavailable once it was, else Restoring or Creating. */
function databasePhase(p: {
  refused: boolean;
  ready: number;
  restoring: boolean;
  lost: boolean;
}): DatabaseStatus['phase'] {
  if (p.refused) return 'Failed';
  if (p.ready > 0) return 'Ready';
  if (p.lost) return 'Unavailable';
  return p.restoring ? 'Restoring' : 'Creating';
}

/** `Restored` set from the restore, and what the phase and `Degraded` need of it. */
function restoreState(list: ConditionList, db: Database, restore: RestoreProgress | undefined) {
  if (!restore) return { restoring: false, restoreFailure: undefined };
  const restoreFailure = setRestored(list, db.status?.conditions, restore);
  return { restoreFailure, restoring: findCondition(list.conditions, 'Restored')?.status === 'False' };
}

/**
 * `Progressing`: the StatefulSet on its way to the spec (made, rolled out to a new version, its
 * claims grown), by its verdict — a server still ready on the old version is Available, not
 * Ready; Complete once it runs the spec. Without a verdict, by the ready server alone.
 */
function setProgressing(list: ConditionList, ready: number, health: Verdict | undefined): void {
  const done = health ? health.readiness === 'Current' : ready > 0;
  if (done) list.set('Progressing', 'False', 'Complete', 'the server runs as the spec asks');
  else if (health) list.set('Progressing', 'True', health.reason, `StatefulSet: ${health.message}`);
  else list.set('Progressing', 'True', 'Creating', 'the database server is starting');
}

/** `tlsSecret` while TLS is served and its Secret exists. */
function tlsFields(db: Database, tls: DatabaseStatusInput['tls']): Partial<DatabaseStatus> {
  const names = databaseNames(db.metadata.name);
  const serving = servesTls(db) && (tls?.exists === true || db.status?.tlsSecret === names.tls);
  return serving ? { tlsSecret: names.tls } : {};
}

/** Whether the Database's server serves TLS: PostgreSQL with `tls.enabled` (mysql's image serves its own). */
export function servesTls(db: Database): boolean {
  return db.spec.type === 'postgresql' && servesTlsBySpec(db.spec);
}

/** The status a Database should show. Pure. */
export function desiredDatabaseStatus(db: Database, input: DatabaseStatusInput): DatabaseStatus {
  const { applyError, hasCredentials, childFailure } = input;
  const generation = db.metadata.generation ?? 0;
  const names = databaseNames(db.metadata.name);
  const state = primaryState(db, input);
  const list = new ConditionList(db.status?.conditions, generation, input.now ?? new Date());
  setAvailable(list, db, state);
  setProgressing(list, state.ready, input.statefulSetHealth);
  const { restoreFailure, restoring } = restoreState(list, db, input.restore);
  list.degraded(
    [
      applyError !== undefined && { reason: 'InvalidResources', message: applyError },
      restoreFailure,
      // Kubernetes accepted the StatefulSet or claim but cannot make it (only its Events say so),
      // or the server failed; a failed pod is replaced at once, so its failure stands until ready.
      !state.primaryReady && (childFailure ?? list.reported('PodFailing')),
    ],
    'the StatefulSet, Services and backups match the spec',
  );
  setBackupScheduled(list, db, names.backup);
  return {
    phase: databasePhase({
      refused: applyError !== undefined || restoreFailure !== undefined,
      ready: state.primaryReady ? 1 : 0,
      restoring,
      lost: findCondition(list.conditions, 'Available')?.reason === SERVER_UNAVAILABLE,
    }),
    readyReplicas: state.ready,
    ...replicationFields(db, input, state),
    endpoint: `${names.service}.${db.metadata.namespace}.svc:${ENGINES[db.spec.type].port}`,
    ...(hasCredentials ? { credentialsSecret: names.credentials } : {}),
    ...tlsFields(db, input.tls),
    ...backupFields(db, names.backup, input),
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/**
 * The backup restored, as the status names it: claim/file — as the restore Job reported it once
 * it loaded it (kept after the Job's pods are gone), else as spec.restore names it (claim/ for the
 * newest dump, not known until the Job has picked it).
 */
function restoredFrom(db: Database, restorePods: readonly Pod[]): string {
  const known = db.status?.restoredFrom;
  if (known && !known.endsWith('/')) return known;
  const source = dumpSource(db.spec.restore ?? {});
  return reportedRestore(restorePods) ?? `${source.claim}/${source.dump ?? ''}`;
}

/** How the restore of `spec.restore` stands: its Job and that Job's pods. */
function restoreProgress(
  db: Database,
  observed: Observed<DatabaseFacts, DatabasePrepared>,
  pods: readonly Pod[],
): RestoreProgress {
  const source = dumpSource(db.spec.restore ?? {});
  return {
    source: describeDumpSource(source),
    sourceClaim: source.claim,
    jobs: [observed.children.of(BuiltinTypes.Job, restoreJobName(db.metadata.name))],
    pods,
    failure: observed.health.failure,
  };
}

/** The Database a StatefulSet (named after it), data claim (`data-<name>-0`) or backup claim (`<name>-backup`) belongs to. */
export function databaseOfChild(involved: { kind?: string; name?: string }): string | undefined {
  if (involved.kind === 'StatefulSet') return involved.name;
  if (involved.kind !== 'PersistentVolumeClaim') return undefined;
  return /^data-(.+)-\d+$/.exec(involved.name ?? '')?.[1] ?? /^(.+)-backup$/.exec(involved.name ?? '')?.[1];
}

/**
 * One Event per changed child, plus the credentials generated, backups switched off, and the
 * server lost and back (`status`: the one this reconcile writes).
 */
export function databaseEvents(
  db: Database,
  observed: Observed<DatabaseFacts, DatabasePrepared>,
  status?: DatabaseStatus,
): EventSpec[] {
  const names = databaseNames(db.metadata.name);
  const events: EventSpec[] = observed.changes.map((c) =>
    c.kind === 'CronJob' && c.verb === 'Deleted'
      ? {
          type: 'Normal',
          reason: 'BackupDisabled',
          message: `Deleted CronJob ${c.name}; the backup volume ${names.backup} is kept`,
        }
      : { type: 'Normal', reason: c.verb, message: `${c.verb} ${c.kind} ${c.name}` },
  );
  events.push(...backupListEvents('dump', db.status, databaseBackupListing(db, observed)));
  events.push(...availabilityEvents(db, status));
  if (observed.prepared?.createdCredentials)
    events.push({
      type: 'Normal',
      reason: 'CredentialsGenerated',
      message: `Generated Secret ${names.credentials} with a random password`,
    });
  const tls = observed.prepared?.createdTls;
  if (tls)
    events.push({
      type: 'Normal',
      reason: 'CertificateIssued',
      message: `Generated Secret ${names.tls}: a CA of this Database's own and the server's certificate it signed, valid until ${tls.expires}`,
    });
  return events;
}

/**
 * The backup claim whose dumps the status is to list: the kept one (under Retain) while backups
 * are on. Under Delete the claim went with a Database deleted before: a new one holds nothing.
 */
function claimToList(db: Database): string | undefined {
  return db.spec.backup.enabled && db.spec.deletionPolicy !== 'Delete'
    ? databaseNames(db.metadata.name).backup
    : undefined;
}

/** How the listing of the backup claim's dumps stands (undefined: none to list). */
function databaseBackupListing(
  db: Database,
  observed: Observed<DatabaseFacts, DatabasePrepared>,
): BackupListing | undefined {
  const claim = claimToList(db);
  if (!claim) return undefined;
  return observedBackupListing(observed, { app: db.spec.type, instance: db.metadata.name, claim });
}

/** Whether deleting a Database waits for a final dump. */
export function wantsFinalSnapshot(db: Database): boolean {
  return db.spec.backup.enabled && db.spec.backup.finalSnapshot;
}

/**
 * The final snapshot of a deleted Database: the Job `<name>-final-backup` dumping it to the kept
 * backup claim, created once and waited for (see `runFinalJob`).
 */
export async function finalSnapshot(db: Database, context: FinalizeContext): Promise<FinalizeOutcome> {
  if (!wantsFinalSnapshot(db)) return { done: true };
  const names = databaseNames(db.metadata.name);
  const [job] = renderConstructs(
    (scope) =>
      new FinalBackupJob(scope, 'final', {
        name: db.metadata.name,
        namespace: db.metadata.namespace,
        spec: db.spec,
        owner: context.owner,
      }),
  );
  if (!job) throw new Error('FinalBackupJob rendered nothing');
  return runFinalJob(
    {
      job,
      kind: 'Database',
      does: `dump the database to PVC ${names.backup}`,
      leaves: `the dump is on PVC ${names.backup}, which is kept`,
    },
    context,
  );
}

/**
 * The credentials Secret, made once the retention ConfigMap exists. Once the status names the
 * Secret, it is known to exist and no request is made at all; before, a create answered
 * AlreadyExists means it exists (kept as it is, so a password once given out stays valid — also
 * for a Database recreated over retained data).
 */
async function prepareCredentials(
  api: PrepareApi,
  db: Database,
  retention: KubeObject | undefined,
): Promise<DatabasePrepared> {
  if (db.status?.credentialsSecret === databaseNames(db.metadata.name).credentials) return { hasCredentials: true };
  if (!retention) return { hasCredentials: false };
  const createdCredentials = await api.createIfAbsent(BuiltinTypes.Secret, newCredentials(db, retention));
  return { hasCredentials: true, createdCredentials };
}

/**
 * The TLS Secret, made once as the credentials are: a certificate made now is kept only if this
 * create makes the Secret; AlreadyExists keeps the one made before (its clients trust its CA).
 */
async function prepareTls(
  api: PrepareApi,
  db: Database,
  retention: KubeObject | undefined,
): Promise<Pick<DatabasePrepared, 'hasTls' | 'createdTls'>> {
  if (!servesTls(db)) return {};
  if (db.status?.tlsSecret === databaseNames(db.metadata.name).tls) return { hasTls: true };
  if (!retention) return { hasTls: false };
  const { secret, expires } = serverCertificateModule().newTlsSecret(db, retention);
  const created = await api.createIfAbsent(BuiltinTypes.Secret, secret);
  return { hasTls: true, ...(created ? { createdTls: { expires } } : {}) };
}

/**
 * The replication role's Secret of a PostgreSQL Database, made once as the credentials are (the
 * status names it once it exists) — controlled by the Database, which the operator reads it back
 * through to ask the instances.
 */
async function prepareReplication(api: PrepareApi, db: Database): Promise<Pick<DatabasePrepared, 'hasReplication'>> {
  if (db.spec.type !== 'postgresql') return {};
  if (db.status?.replicationSecret === replicationSecretName(db.metadata.name)) return { hasReplication: true };
  await api.createIfAbsent(BuiltinTypes.Secret, newReplicationSecret(db));
  return { hasReplication: true };
}

/** The server certificate's module, loaded on first use at run time: it needs node:crypto, which a synth never loads. */
function serverCertificateModule(): typeof ServerCertificate {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load; the package is CommonJS
  return require('./server-certificate') as typeof ServerCertificate;
}

/**
 * The database controller. It applies Services, the StatefulSet, the retention ConfigMap, the
 * backup claim and CronJob (and creates the final snapshot Job of a deleted Database that asks
 * for one); deletes only the backup CronJob (when backups are switched off) and its finished
 * restore Job (once Restored);
 * creates the credentials Secret once and can neither read nor change any Secret. It has no
 * delete right on claims: data goes only through the StatefulSet's retention policy or owner
 * references.
 */
export const databaseController: ControllerDeclaration<Database, DatabaseFacts, DatabasePrepared> = {
  name: 'database',
  image: DEFAULT_IMAGE,
  for: databaseKind,
  owns: [
    BuiltinTypes.ConfigMap,
    BuiltinTypes.Service,
    BuiltinTypes.StatefulSet,
    BuiltinTypes.PodDisruptionBudget,
    BuiltinTypes.CronJob,
    BuiltinTypes.PersistentVolumeClaim,
    // The final snapshot (see finalize).
    BuiltinTypes.Job,
  ],
  deletes: [BuiltinTypes.CronJob, BuiltinTypes.Job],
  creates: [BuiltinTypes.Secret],
  // The replication role's Secret, read back to ask the instances (the runtime hands over its own alone).
  keeps: [BuiltinTypes.Secret],
  // Each standby labelled for <name>-ro.
  labelsPods: true,
  // The Warning Events that say its pod or claims cannot be made, and its pod (whose container
  // may fail to run), for `Degraded`.
  reads: [BuiltinTypes.CoreEvent, BuiltinTypes.Pod],
  // Whether a restore is over (`conditions`, only with spec.restore) and the backup claim listed.
  // And the primary, once recorded (the Database then holds data).
  renderReadsStatus: ['conditions', 'backupsListedFrom', 'primary'],
  render: (scope, db, { owner, external }) =>
    new DatabaseResources(scope, 'db', {
      name: db.metadata.name,
      namespace: db.metadata.namespace,
      spec: db.spec,
      owner,
      primary: (external ?? observedDatabaseFacts(db)).primary,
      initialize: db.status?.primary === undefined,
      restoring: stillToRestore(db),
      listBackups: backupsToList(db, claimToList(db)),
    }),
  // The Secrets are owned by the retention ConfigMap, so they are made once that exists.
  prepare: async (api, db, children) => {
    const retention = children.of(BuiltinTypes.ConfigMap, databaseNames(db.metadata.name).retention);
    return {
      ...(await prepareCredentials(api, db, retention)),
      ...(await prepareTls(api, db, retention)),
      ...(await prepareReplication(api, db)),
    };
  },
  status: (db, observed) => {
    const names = databaseNames(db.metadata.name);
    const hasCredentials = observed.prepared?.hasCredentials === true || db.status?.credentialsSecret !== undefined;
    const podsOf = (component: string) =>
      observed.read(
        BuiltinTypes.Pod,
        selectorLabels({ name: db.spec.type, instance: db.metadata.name, component, managedBy: '' }),
      );
    return desiredDatabaseStatus(db, {
      statefulSet: observed.children.of(BuiltinTypes.StatefulSet, names.statefulSet),
      statefulSetHealth: observed.health.children.find((c) => c.kind === 'StatefulSet' && c.name === names.statefulSet),
      backup: observed.children.of(BuiltinTypes.CronJob, names.backup),
      applyError: observed.applyError,
      hasCredentials,
      tls: { exists: observed.prepared?.hasTls === true },
      // Its server's pod that cannot run, a claim or pod Kubernetes cannot make: the children's health.
      childFailure: observed.health.failure,
      backupPods: podsOf('backup'),
      backupListing: databaseBackupListing(db, observed),
      restore: db.spec.restore && restoreProgress(db, observed, podsOf('restore')),
      ...(observed.external ? { instances: observed.external } : {}),
      hasReplication: observed.prepared?.hasReplication === true,
      now: observed.now,
    });
  },
  external: databaseInstancesStep,
  observeExternal: observedDatabaseFacts,
  events: databaseEvents,
  // Only a Database asking for a final snapshot carries the finalizer: deleting any other is
  // never held up by the operator.
  needsFinalizer: wantsFinalSnapshot,
  finalize: finalSnapshot,
  failureOwner: databaseOfChild,
  mapReads: { Pod: podInstance(Object.keys(ENGINES), ['database', 'backup', BACKUP_LIST_COMPONENT, 'restore']) },
};
