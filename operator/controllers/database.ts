import { randomBytes } from 'node:crypto';
import { BuiltinTypes, customResourceType, ResourceType } from '../../constructs/core/controller';
import type { Database } from '../../constructs/database/api';
import { databaseController } from '../../constructs/database/controller';
import { databaseNames, DatabaseResources, ENGINES } from '../../constructs/database/database-resources';
import { ChildFailure, ChildFailures, InvolvedObject } from '../runtime/child-failures';
import { applyChildren, applyStatusIfChanged, controllerReference, OwnedChildren, ownChildren, recordDegradedOnce, rejectionOf } from '../runtime/children';
import { isConflict, isNotFound, KubeClient } from '../runtime/client';
import { Condition, ConditionList } from '../runtime/conditions';
import { Controller, ReconcileContext, Request, Result } from '../runtime/controller';
import { Informer } from '../runtime/informer';
import { Manager } from '../runtime/manager';
import { renderConstructs } from '../runtime/render';
import { controllerOf, KubeObject, objectKey } from '../runtime/resource';
import type { ControllerSetupOptions } from './registry';

type DatabaseObject = Database & KubeObject;
interface StatefulSet extends KubeObject { status?: { readyReplicas?: number } }
interface CronJob extends KubeObject { status?: { lastSuccessfulTime?: string } }

const databaseType = customResourceType(databaseController.for);
const CHILD_TYPES: Record<string, ResourceType> = {
  ConfigMap: BuiltinTypes.ConfigMap,
  Service: BuiltinTypes.Service,
  StatefulSet: BuiltinTypes.StatefulSet,
  CronJob: BuiltinTypes.CronJob,
  PersistentVolumeClaim: BuiltinTypes.PersistentVolumeClaim,
};

export function desiredDatabaseChildren(db: DatabaseObject): KubeObject[] {
  return renderConstructs(scope => new DatabaseResources(scope, 'db', {
    name: db.metadata.name,
    namespace: db.metadata.namespace,
    spec: db.spec,
    owner: controllerReference(db, databaseType),
  }));
}

/**
 * The credentials Secret a new Database gets: a random password, generated here at run time.
 * It is owned by the retention ConfigMap, so it lives exactly as long as the Database's data.
 */
export function newCredentials(db: DatabaseObject, retention: KubeObject): KubeObject {
  const names = databaseNames(db.metadata.name);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: names.credentials,
      namespace: db.metadata.namespace,
      labels: { 'app.kubernetes.io/name': db.spec.type, 'app.kubernetes.io/instance': db.metadata.name, 'app.kubernetes.io/component': 'credentials', 'app.kubernetes.io/managed-by': 'database-operator' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: retention.metadata.name!, uid: retention.metadata.uid! }],
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
 * Makes sure the credentials Secret exists without ever reading or touching one: it creates the
 * Secret, and AlreadyExists means it exists (kept as it is, so a password once given out stays
 * valid — also for a Database recreated over retained data). Once the status names the Secret,
 * it is known to exist and no request is made at all. Returns whether it created it.
 */
export async function ensureCredentials(client: KubeClient, db: DatabaseObject, retention: KubeObject): Promise<boolean> {
  if (db.status?.credentialsSecret === databaseNames(db.metadata.name).credentials) return false;
  try {
    await client.create(BuiltinTypes.Secret, newCredentials(db, retention), db.metadata.namespace);
    return true;
  } catch (err) {
    if (isConflict(err)) return false;
    throw err;
  }
}

export function desiredDatabaseStatus(db: DatabaseObject, sts: StatefulSet | undefined, applyError: string | undefined, hasCredentials: boolean, childFailure?: ChildFailure, now = new Date(), backup?: CronJob) {
  const generation = db.metadata.generation ?? 0;
  const names = databaseNames(db.metadata.name);
  const ready = sts?.status?.readyReplicas ?? 0;
  const list = new ConditionList(db.status?.conditions as Condition[] | undefined, generation, now);
  const { set } = list;
  set('Available', ready > 0 ? 'True' : 'False', ready > 0 ? 'ServerReady' : 'ServerNotReady', ready > 0 ? 'the database server is ready' : 'the database server is not ready yet');
  if (applyError) set('Degraded', 'True', 'InvalidResources', applyError.slice(0, 1024));
  // Kubernetes accepted the StatefulSet or claim but cannot make it: only its Events say so.
  else if (childFailure && ready < 1) set('Degraded', 'True', childFailure.reason, childFailure.message);
  else set('Degraded', 'False', 'AsExpected', 'the StatefulSet, Services and backups match the spec');
  set('BackupScheduled', db.spec.backup.enabled ? 'True' : 'False', db.spec.backup.enabled ? 'Scheduled' : 'Disabled',
    db.spec.backup.enabled ? `dumps on "${db.spec.backup.schedule}" to PVC ${names.backup}` : 'backups are disabled');
  return {
    phase: applyError ? 'Failed' : ready > 0 ? 'Ready' : 'Creating',
    readyReplicas: ready,
    endpoint: `${names.service}.${db.metadata.namespace}.svc:${ENGINES[db.spec.type].port}`,
    ...(hasCredentials ? { credentialsSecret: names.credentials } : {}),
    ...(db.spec.backup.enabled ? { backupCronJob: names.backup } : {}),
    ...(db.spec.backup.enabled && backup?.status?.lastSuccessfulTime ? { lastBackupTime: backup.status.lastSuccessfulTime } : {}),
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

export function setupDatabaseController(mgr: Manager, options: ControllerSetupOptions): Controller {
  const databases = mgr.informer<DatabaseObject>(databaseType);
  const controller = new Controller({ ...options, name: databaseController.name, reconciler: (req, ctx) => reconcileDatabase(req, ctx, databases, children, failures) });
  controller.for(databases);
  const children = ownChildren(mgr, controller, databaseType, CHILD_TYPES);
  const failures = ChildFailures.watch(mgr, controller, involved => {
    const owner = databaseOfChild(involved);
    return owner ? { namespace: involved.namespace, name: owner } : undefined;
  });
  return controller;
}

/** The Database a StatefulSet (named after it), data claim (`data-<name>-0`) or backup claim (`<name>-backup`) belongs to. */
export function databaseOfChild(involved: InvolvedObject): string | undefined {
  if (involved.kind === 'StatefulSet') return involved.name;
  if (involved.kind !== 'PersistentVolumeClaim') return undefined;
  return /^data-(.+)-\d+$/.exec(involved.name ?? '')?.[1] ?? /^(.+)-backup$/.exec(involved.name ?? '')?.[1];
}

async function reconcileDatabase(req: Request, ctx: ReconcileContext, databases: Informer<DatabaseObject>, children: OwnedChildren, failures: ChildFailures): Promise<Result | void> {
  const db = databases.get(objectKey(req));
  // Deleted: what it owns is garbage-collected; retained volumes and credentials stay.
  if (!db || db.metadata.deletionTimestamp) return;
  const names = databaseNames(db.metadata.name);

  let sts = children.informers.StatefulSet.get(objectKey(req)) as StatefulSet | undefined;
  let retention: KubeObject | undefined;
  const applyError = await rejectionOf(ctx, db, 'InvalidResources', async () => {
    const applied = await applyChildren(ctx, db, desiredDatabaseChildren(db), children, { events: true });
    sts = applied.get(`StatefulSet/${names.statefulSet}`) as StatefulSet;
    retention = applied.get(`ConfigMap/${names.retention}`);
    const cronJob = children.informers.CronJob.get(`${db.metadata.namespace}/${names.backup}`);
    if (!db.spec.backup.enabled && cronJob && controllerOf(cronJob)?.uid === db.metadata.uid) {
      try {
        await ctx.client.delete(BuiltinTypes.CronJob, names.backup, db.metadata.namespace);
        await ctx.recorder.record(db, 'Normal', 'BackupDisabled', `Deleted CronJob ${names.backup}; the backup volume ${names.backup} is kept`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  });
  // The Secret is owned by the retention ConfigMap, so it can only be made once that exists.
  if (retention && await ensureCredentials(ctx.client, db, retention)) {
    await ctx.recorder.record(db, 'Normal', 'CredentialsGenerated', `Generated Secret ${names.credentials} with a random password`);
  }
  const failure = failures.find(db.metadata.namespace, involved => databaseOfChild(involved) === db.metadata.name);
  const backup = children.informers.CronJob.get(`${db.metadata.namespace}/${names.backup}`) as CronJob | undefined;
  const status = desiredDatabaseStatus(db, sts, applyError, !!retention || db.status?.credentialsSecret !== undefined, failure, new Date(), backup);
  await recordDegradedOnce(ctx, db, status.conditions, failure);
  await applyStatusIfChanged(ctx.client, databaseType, db, status);
}
