/**
 * Whether a Database is available — its primary ready (with standbys, writes go to it alone) —
 * and what its status says of its primary, instances and replication.
 */
import type { EventSpec } from '../contract';
import { type ConditionList, findCondition } from '../contract/conditions';
import type { Database, DatabaseStatus } from './api';
import type { DatabaseStatusInput } from './controller';
import { databaseNames } from './database-resources';
import { designatedPrimary, SWITCHOVER_ANNOTATION } from './instances';

/** `Available`'s reason while a server that was ready is not. */
export const SERVER_UNAVAILABLE = 'ServerUnavailable';

/** Whether the Database's server had been ready before (and not come back since): a restart, a lost node. */
export function wasAvailable(db: Database): boolean {
  const available = findCondition(db.status?.conditions, 'Available');
  return available?.status === 'True' || available?.reason === SERVER_UNAVAILABLE;
}

/** A Warning when a server that was ready is not, and a Normal Event when it is back: once each. */
export function availabilityEvents(db: Database, status: DatabaseStatus | undefined): EventSpec[] {
  const was = findCondition(db.status?.conditions, 'Available');
  const now = findCondition(status?.conditions, 'Available');
  if (now?.reason === SERVER_UNAVAILABLE && was?.reason !== SERVER_UNAVAILABLE)
    return [{ type: 'Warning', reason: SERVER_UNAVAILABLE, message: now.message }];
  if (now?.status === 'True' && was?.reason === SERVER_UNAVAILABLE)
    return [{ type: 'Normal', reason: 'ServerAvailable', message: 'the database server is ready again' }];
  return [];
}

/** The primary, and whether it is ready: with standbys, writes go to it alone, so it is what is available or not. */
export function primaryState(db: Database, input: DatabaseStatusInput) {
  const ready = input.statefulSet?.status?.readyReplicas ?? 0;
  const primary = input.instances?.primary ?? designatedPrimary(db);
  const replicated = input.instances?.instances;
  // With standbys, ready as its pod says and answering the operator: a server that hangs (a frozen
  // container, a stalled disk) can leave its pod Ready — the kubelet's probe hangs with it.
  const primaryReady = replicated
    ? replicated.some((i) => i.name === primary && i.ready && i.role !== 'unknown')
    : ready > 0;
  return { ready, primary, replicated, primaryReady, failoverHeld: input.instances?.failoverHeld };
}

/** `Available`: the primary ready; not ready once it was (a restart, a lost node: a failover to come with standbys); or not yet. */
export function setAvailable(list: ConditionList, db: Database, state: ReturnType<typeof primaryState>): void {
  if (state.primaryReady) list.set('Available', 'True', 'ServerReady', 'the database server is ready');
  else if (wasAvailable(db))
    list.set(
      'Available',
      'False',
      SERVER_UNAVAILABLE,
      state.replicated
        ? `the primary ${state.primary} was ready and is not ready now: writes are refused until it is back or, after ${String(db.spec.failoverDelay)} s, a standby is promoted${state.failoverHeld ? `; the failover waits: ${state.failoverHeld}` : ''}`
        : 'the database server was ready and is not ready now: clients are refused until it is back',
    );
  else list.set('Available', 'False', 'ServerNotReady', 'the database server is not ready yet');
}

/**
 * The switchover the annotation asks, once it has begun — the primary is the instance it names
 * (every reconcile from then on says so: the ConfigMap names it) — while the annotation asks it.
 */
function lastSwitchover(db: Database, input: DatabaseStatusInput): Partial<DatabaseStatus> {
  const asked = db.metadata.annotations?.[SWITCHOVER_ANNOTATION];
  if (!asked) return {};
  return db.status?.lastSwitchover === asked || input.instances?.primary === asked ? { lastSwitchover: asked } : {};
}

/**
 * The primary (recorded once it has served: from then on, a primary found without data never
 * starts an empty one), the instances and the replication Secret.
 */
export function replicationFields(
  db: Database,
  input: DatabaseStatusInput,
  state: ReturnType<typeof primaryState>,
): Partial<DatabaseStatus> {
  const names = databaseNames(db.metadata.name);
  return {
    ...(state.primaryReady || db.status?.primary ? { primary: state.primary } : {}),
    ...(state.replicated ? { instances: [...state.replicated] } : {}),
    ...lastSwitchover(db, input),
    ...(input.hasReplication || db.status?.replicationSecret ? { replicationSecret: names.replication } : {}),
  };
}
