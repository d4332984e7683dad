import { randomBytes } from 'node:crypto';
import {
  BuiltinTypes,
  type ControllerDeclaration,
  type EventSpec,
  type ObjectLike,
  type Observed,
} from '../core/controller';
import { ConditionList } from '../core/conditions';
import { selectorLabels } from '../core/labels';
import { podFailure, podInstance } from '../core/pods';
import type { Database } from './api';
import { databaseKind } from './api';
import { databaseNames, DatabaseResources, ENGINES } from './database-resources';

interface StatefulSet extends ObjectLike {
  status?: { readyReplicas?: number };
}
interface CronJob extends ObjectLike {
  status?: { lastSuccessfulTime?: string };
}

/**
 * The credentials Secret a new Database gets: a random password, generated here at run time.
 * It is owned by the retention ConfigMap, so it lives exactly as long as the Database's data.
 */
export function newCredentials(
  db: Database,
  retention: ObjectLike,
): ObjectLike & { type: string; stringData: Record<string, string> } {
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
        { apiVersion: 'v1', kind: 'ConfigMap', name: retention.metadata.name!, uid: retention.metadata.uid! },
      ],
    },
    type: 'Opaque',
    stringData: {
      username: 'app',
      password: randomBytes(24).toString('base64url'),
      database: db.metadata.name.replace(/[^a-z0-9]/g, '_'),
    },
  };
}

/**
 * The status a Database should show. Pure; `now` only stamps conditions that change.
 * `hasCredentials`: whether the credentials Secret is known to exist.
 */
export function desiredDatabaseStatus(
  db: Database,
  sts: StatefulSet | undefined,
  applyError: string | undefined,
  hasCredentials: boolean,
  childFailure?: { reason: string; message: string },
  now = new Date(),
  backup?: CronJob,
) {
  const generation = db.metadata.generation ?? 0;
  const names = databaseNames(db.metadata.name);
  const ready = sts?.status?.readyReplicas ?? 0;
  const list = new ConditionList(db.status?.conditions, generation, now);
  const { set } = list;
  set(
    'Available',
    ready > 0 ? 'True' : 'False',
    ready > 0 ? 'ServerReady' : 'ServerNotReady',
    ready > 0 ? 'the database server is ready' : 'the database server is not ready yet',
  );
  if (applyError) set('Degraded', 'True', 'InvalidResources', applyError);
  // Kubernetes accepted the StatefulSet or claim but cannot make it: only its Events say so.
  else if (childFailure && ready < 1) set('Degraded', 'True', childFailure.reason, childFailure.message);
  else set('Degraded', 'False', 'AsExpected', 'the StatefulSet, Services and backups match the spec');
  set(
    'BackupScheduled',
    db.spec.backup.enabled ? 'True' : 'False',
    db.spec.backup.enabled ? 'Scheduled' : 'Disabled',
    db.spec.backup.enabled ? `dumps on "${db.spec.backup.schedule}" to PVC ${names.backup}` : 'backups are disabled',
  );
  return {
    phase: applyError ? 'Failed' : ready > 0 ? 'Ready' : 'Creating',
    readyReplicas: ready,
    endpoint: `${names.service}.${db.metadata.namespace}.svc:${ENGINES[db.spec.type].port}`,
    ...(hasCredentials ? { credentialsSecret: names.credentials } : {}),
    ...(db.spec.backup.enabled ? { backupCronJob: names.backup } : {}),
    ...(db.spec.backup.enabled && backup?.status?.lastSuccessfulTime
      ? { lastBackupTime: backup.status.lastSuccessfulTime }
      : {}),
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/** The Database a StatefulSet (named after it), data claim (`data-<name>-0`) or backup claim (`<name>-backup`) belongs to. */
export function databaseOfChild(involved: { kind?: string; name?: string }): string | undefined {
  if (involved.kind === 'StatefulSet') return involved.name;
  if (involved.kind !== 'PersistentVolumeClaim') return undefined;
  return /^data-(.+)-\d+$/.exec(involved.name ?? '')?.[1] ?? /^(.+)-backup$/.exec(involved.name ?? '')?.[1];
}

/** One Event per changed child, plus the credentials generated and backups switched off. */
export function databaseEvents(db: Database, observed: Observed): EventSpec[] {
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
  if (observed.prepared?.createdCredentials)
    events.push({
      type: 'Normal',
      reason: 'CredentialsGenerated',
      message: `Generated Secret ${names.credentials} with a random password`,
    });
  return events;
}

/**
 * The database controller. It applies Services, the StatefulSet, the retention ConfigMap, the
 * backup claim and CronJob; deletes only the backup CronJob (when backups are switched off);
 * creates the credentials Secret once and can neither read nor change any Secret. It has no
 * delete right on claims: data goes only through the StatefulSet's retention policy or owner
 * references.
 */
export const databaseController: ControllerDeclaration<Database> = {
  name: 'database',
  for: databaseKind,
  owns: [
    BuiltinTypes.ConfigMap,
    BuiltinTypes.Service,
    BuiltinTypes.StatefulSet,
    BuiltinTypes.CronJob,
    BuiltinTypes.PersistentVolumeClaim,
  ],
  deletes: [BuiltinTypes.CronJob],
  creates: [BuiltinTypes.Secret],
  // The Warning Events that say its pod or claims cannot be made, and its pod (whose container
  // may fail to run), for `Degraded`.
  reads: [BuiltinTypes.CoreEvent, BuiltinTypes.Pod],
  render: (scope, db, { owner }) =>
    new DatabaseResources(scope, 'db', {
      name: db.metadata.name,
      namespace: db.metadata.namespace,
      spec: db.spec,
      owner,
    }),
  // The Secret is owned by the retention ConfigMap, so it is made once that exists. Once the
  // status names the Secret, it is known to exist and no request is made at all; before, a
  // create answered AlreadyExists means it exists (kept as it is, so a password once given out
  // stays valid — also for a Database recreated over retained data).
  prepare: async (api, db, children) => {
    const names = databaseNames(db.metadata.name);
    if (db.status?.credentialsSecret === names.credentials) return { hasCredentials: true };
    const retention = children.get(`ConfigMap/${names.retention}`);
    if (!retention) return { hasCredentials: false };
    const createdCredentials = await api.createIfAbsent(BuiltinTypes.Secret, newCredentials(db, retention));
    return { hasCredentials: true, createdCredentials };
  },
  status: (db, observed) => {
    const names = databaseNames(db.metadata.name);
    const hasCredentials = !!observed.prepared?.hasCredentials || db.status?.credentialsSecret !== undefined;
    const pods = observed.read(
      BuiltinTypes.Pod,
      selectorLabels({ name: db.spec.type, instance: db.metadata.name, component: 'database', managedBy: '' }),
    );
    return desiredDatabaseStatus(
      db,
      observed.children.get(`StatefulSet/${names.statefulSet}`) as StatefulSet | undefined,
      observed.applyError,
      hasCredentials,
      podFailure(pods) ?? observed.childFailure,
      observed.now,
      observed.children.get(`CronJob/${names.backup}`) as CronJob | undefined,
    );
  },
  events: databaseEvents,
  failureOwner: databaseOfChild,
  mapReads: { Pod: podInstance(Object.keys(ENGINES), 'database') },
};
