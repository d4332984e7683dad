import { randomBytes } from 'node:crypto';
import { BuiltinTypes, customResourceType, ResourceType } from '../../constructs/core/controller';
import type { Database } from '../../constructs/database/api';
import { databaseController } from '../../constructs/database/controller';
import { databaseNames, DatabaseResources, ENGINES } from '../../constructs/database/database-resources';
import { applyChildren, applyStatusIfChanged, controllerReference, OwnedChildren, ownChildren, rejectionOf } from '../runtime/children';
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

const databaseType = customResourceType(databaseController.for);
const CHILD_TYPES: Record<string, ResourceType> = {
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

/** The credentials Secret a new Database gets: a random password, generated here at run time. */
export function newCredentials(db: DatabaseObject): KubeObject {
  const names = databaseNames(db.metadata.name);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: names.credentials,
      namespace: db.metadata.namespace,
      labels: { 'app.kubernetes.io/name': db.spec.type, 'app.kubernetes.io/instance': db.metadata.name, 'app.kubernetes.io/component': 'credentials', 'app.kubernetes.io/managed-by': 'database-operator' },
      // Credentials go with the data: deleted with the Database only when its data is.
      ownerReferences: db.spec.deletionPolicy === 'Delete' ? [controllerReference(db, databaseType)] : undefined,
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
 * Creates the credentials Secret when it does not exist, and never touches an existing one, so
 * a password, once given out, stays valid. Returns whether it created it.
 */
export async function ensureCredentials(client: KubeClient, db: DatabaseObject): Promise<boolean> {
  const name = databaseNames(db.metadata.name).credentials;
  try {
    await client.get(BuiltinTypes.Secret, name, db.metadata.namespace);
    return false;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await client.create(BuiltinTypes.Secret, newCredentials(db), db.metadata.namespace);
    return true;
  } catch (err) {
    if (isConflict(err)) return false; // created meanwhile: keep that one
    throw err;
  }
}

export function desiredDatabaseStatus(db: DatabaseObject, sts: StatefulSet | undefined, applyError: string | undefined, now = new Date()) {
  const generation = db.metadata.generation ?? 0;
  const names = databaseNames(db.metadata.name);
  const ready = sts?.status?.readyReplicas ?? 0;
  const list = new ConditionList(db.status?.conditions as Condition[] | undefined, generation, now);
  const { set } = list;
  set('Available', ready > 0 ? 'True' : 'False', ready > 0 ? 'ServerReady' : 'ServerNotReady', ready > 0 ? 'the database server is ready' : 'the database server is not ready yet');
  if (applyError) set('Degraded', 'True', 'InvalidResources', applyError.slice(0, 1024));
  else set('Degraded', 'False', 'AsExpected', 'the StatefulSet, Services and backups match the spec');
  set('BackupScheduled', db.spec.backup.enabled ? 'True' : 'False', db.spec.backup.enabled ? 'Scheduled' : 'Disabled',
    db.spec.backup.enabled ? `dumps on "${db.spec.backup.schedule}" to PVC ${names.backup}` : 'backups are disabled');
  return {
    phase: applyError ? 'Failed' : ready > 0 ? 'Ready' : 'Creating',
    readyReplicas: ready,
    endpoint: `${names.service}.${db.metadata.namespace}.svc:${ENGINES[db.spec.type].port}`,
    credentialsSecret: names.credentials,
    ...(db.spec.backup.enabled ? { backupCronJob: names.backup } : {}),
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

export function setupDatabaseController(mgr: Manager, options: ControllerSetupOptions): Controller {
  const databases = mgr.informer<DatabaseObject>(databaseType);
  const controller = new Controller({ ...options, name: databaseController.name, reconciler: (req, ctx) => reconcileDatabase(req, ctx, databases, children) });
  controller.for(databases);
  const children = ownChildren(mgr, controller, databaseType, CHILD_TYPES);
  return controller;
}

async function reconcileDatabase(req: Request, ctx: ReconcileContext, databases: Informer<DatabaseObject>, children: OwnedChildren): Promise<Result | void> {
  const db = databases.get(objectKey(req));
  // Deleted: what it owns is garbage-collected; retained volumes and credentials stay.
  if (!db || db.metadata.deletionTimestamp) return;
  const names = databaseNames(db.metadata.name);

  if (await ensureCredentials(ctx.client, db)) {
    await ctx.recorder.record(db, 'Normal', 'CredentialsGenerated', `Generated Secret ${names.credentials} with a random password`);
  }

  let sts = children.informers.StatefulSet.get(objectKey(req)) as StatefulSet | undefined;
  const applyError = await rejectionOf(ctx, db, 'InvalidResources', async () => {
    const applied = await applyChildren(ctx, db, desiredDatabaseChildren(db), children, { events: true });
    sts = applied.get(`StatefulSet/${names.statefulSet}`) as StatefulSet;
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
  await applyStatusIfChanged(ctx.client, databaseType, db, desiredDatabaseStatus(db, sts, applyError));
}
