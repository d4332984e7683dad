/**
 * The external step of a replicated Database: each instance asked as the replication role, the
 * decision (instances.ts) made from what they answer, its promotion written through the gate; its
 * labels and fences are the plan's.
 */
import {
  BuiltinTypes,
  type Children,
  type EventSpec,
  type ExternalContext,
  type ExternalStep,
  type KubeObject,
  type Pod,
  podIsReady,
} from '../contract';
import { findCondition } from '../contract/conditions';
import { SERVER_UNAVAILABLE } from './availability';
import type { Database } from './api';
import { databaseNames } from './database-resources';
import type * as InstanceQueries from './instance-queries';
import type { InstanceAnswer } from './instance-queries';
import { instanceCount, instancePod, synchronousCount } from './instance-names';
import {
  type DatabaseFacts,
  decideInstances,
  designatedPrimary,
  type InstanceObservation,
  type InstancesDecision,
  refreshMs,
  observedDatabaseFacts,
  SWITCHOVER_ANNOTATION,
} from './instances';
import { servesTlsBySpec } from './postgres-server';
import { PRIMARY_KEY, replicationPassword } from './replication';
import { NotStreamingClock } from './stuck-standbys';

/** When `Available` last changed, if it is now as `now` says. */
function availableSince(db: Database, now: (c: { status: string; reason?: string }) => boolean): Date | undefined {
  const available = findCondition(db.status?.conditions, 'Available');
  if (!available || !now(available)) return undefined;
  const since = Date.parse(available.lastTransitionTime);
  return Number.isNaN(since) ? undefined : new Date(since);
}

/** Since when the primary has served, by the status's `Available` condition. */
const servingSince = (db: Database) => availableSince(db, (c) => c.status === 'True');

/** When each standby was first seen not streaming, by this operator process. */
const notStreaming = new NotStreamingClock();

/** The observations with, for each standby not streaming, since when the operator has seen it so. */
function withNotStreamingSince(
  database: string,
  observations: readonly InstanceObservation[],
  now: Date,
): InstanceObservation[] {
  const standbys = observations.flatMap((o) =>
    o.answer?.standby === true && o.pod?.metadata.uid
      ? [{ uid: o.pod.metadata.uid, streaming: o.answer.streaming !== false }]
      : [],
  );
  const since = notStreaming.observe(database, standbys, now);
  return observations.map((o) => {
    const at = o.pod?.metadata.uid ? since(o.pod.metadata.uid) : undefined;
    return at ? { ...o, notStreamingSince: at } : o;
  });
}

/** Since when the primary has been unavailable, by the status's `Available` condition. */
const unavailableSince = (db: Database) =>
  availableSince(db, (c) => c.status === 'False' && c.reason === SERVER_UNAVAILABLE);

/** The Events of a decision's steps: a promotion (a failover's Warning, a switchover's Normal) and a switchover begun. */
function decisionEvents({ promote, switchover }: InstancesDecision): EventSpec[] {
  const events: EventSpec[] = [];
  if (promote) {
    const message = `Promoted ${promote.name} to primary: ${promote.reason}`;
    events.push(
      promote.by === 'failover'
        ? { type: 'Warning', reason: 'FailedOver', message }
        : { type: 'Normal', reason: 'SwitchedOver', message },
    );
  }
  if (switchover)
    events.push({
      type: 'Normal',
      reason: 'SwitchoverStarted',
      message: `Moving the primary from ${switchover.from} to ${switchover.to} (${switchover.reason}): writes are refused until ${switchover.from} has stopped and ${switchover.to} is promoted`,
    });
  return events;
}

/**
 * The instance the switchover annotation names, unless the status records that switchover as
 * begun already (so a later failover is not undone by it).
 */
function switchoverAsked(db: Database): string | undefined {
  const asked = db.metadata.annotations?.[SWITCHOVER_ANNOTATION];
  return asked && asked !== db.status?.lastSwitchover ? asked : undefined;
}

/** The pods `sts` controls, as cached. */
function podsOf(context: ExternalContext, sts: KubeObject | undefined): Pod[] {
  const uid = sts?.metadata.uid;
  if (!uid) return [];
  return context
    .read(BuiltinTypes.Pod)
    .filter((p) => p.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid));
}

/** The StatefulSet's template revision, once its controller has seen its latest spec (before, it may name the one before). */
function settledRevision(sts: KubeObject | undefined): string | undefined {
  const status = (sts as { status?: { observedGeneration?: number; updateRevision?: string } } | undefined)?.status;
  return status?.observedGeneration === sts?.metadata.generation ? status?.updateRevision : undefined;
}

/** Each pod's name under the headless Service, which publishes pods not ready too. */
function instanceHost(db: Database): (pod: string) => string {
  const { headless } = databaseNames(db.metadata.name);
  return (pod) => `${pod}.${headless}.${db.metadata.namespace}.svc`;
}

/** Each of `members` instances: its pod as cached and, while it runs, what its server answers `ask`. */
function observeInstances(
  database: string,
  members: number,
  pods: readonly Pod[],
  ask: (pod: string) => Promise<InstanceAnswer>,
): Promise<InstanceObservation[]> {
  return Promise.all(
    Array.from({ length: members }, async (_, ordinal): Promise<InstanceObservation> => {
      const name = instancePod(database, ordinal);
      const pod = pods.find((p) => p.metadata.name === name);
      if (!pod) return { name, ready: false };
      const terminating = pod.metadata.deletionTimestamp !== undefined;
      const running = pod.status?.phase === 'Running' && !terminating;
      const answer = running ? await ask(name).catch(() => undefined) : undefined;
      return {
        name,
        pod,
        ready: podIsReady(pod),
        ...(answer ? { answer } : {}),
        ...(terminating ? { terminating } : {}),
      };
    }),
  );
}

/**
 * Why nothing can be decided from here: instances run but none answered — the operator cannot
 * reach them (or `plan` runs outside the cluster). Then no label or promotion is decided on
 * silence: the status stays as it was.
 */
function outOfReach(observations: readonly InstanceObservation[]): string | undefined {
  const running = observations.filter((o) => o.pod?.status?.phase === 'Running' && !o.pod.metadata.deletionTimestamp);
  if (running.length === 0 || running.some((o) => o.answer)) return undefined;
  return `no instance answered (asked ${running.map((o) => o.name).join(', ')})`;
}

/** The queries' module, loaded on first use at run time: it needs `pg`, which a synth never loads. */
function queries(): typeof InstanceQueries {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load; the package is CommonJS
  return require('./instance-queries') as typeof InstanceQueries;
}

/**
 * The external step of a Database: for one of more than one instance (or whose StatefulSet still
 * has more), each instance asked, then the decision's promotion made through the gate; its
 * labels and fences are the plan's. A Database of one instance asks nothing.
 */
export async function databaseInstancesStep(
  db: Database,
  children: Children,
  context: ExternalContext,
): Promise<ExternalStep<DatabaseFacts>> {
  const { name } = db.metadata;
  const names = databaseNames(name);
  const designated = designatedPrimary(db, children);
  const sts = children.of(BuiltinTypes.StatefulSet, names.statefulSet);
  const members = Math.max(instanceCount(db.spec), sts?.spec?.replicas ?? 0);
  if (db.spec.type !== 'postgresql' || members <= 1) return { facts: { primary: designated } };
  const secret = await context.getOwn(BuiltinTypes.Secret, names.replication);
  const password = secret.state === 'own' ? replicationPassword(secret.object) : undefined;
  if (!password)
    return { facts: observedDatabaseFacts(db, children), requeueAfterMs: refreshMs(db.spec.failoverDelay * 1000) };
  const connection = { password, tls: servesTlsBySpec(db.spec), signal: context.signal };
  const host = instanceHost(db);
  const observations = await observeInstances(name, members, podsOf(context, sts), (pod) =>
    queries().askInstance(host(pod), connection),
  );
  const unanswered = outOfReach(observations);
  if (unanswered)
    return {
      facts: observedDatabaseFacts(db, children),
      outOfReach: unanswered,
      requeueAfterMs: refreshMs(db.spec.failoverDelay * 1000),
    };
  const config = children.of(BuiltinTypes.ConfigMap, names.config);
  const now = new Date();
  const decision = decideInstances({
    database: name,
    designated,
    count: instanceCount(db.spec),
    observations: withNotStreamingSince(`${db.metadata.namespace ?? ''}/${name}`, observations, now),
    configuredPrimary: config?.data?.[PRIMARY_KEY],
    unavailableSince: unavailableSince(db),
    switchoverTo: switchoverAsked(db),
    failoverDelayMs: db.spec.failoverDelay * 1000,
    synchronous: synchronousCount(db.spec),
    updateRevision: settledRevision(sts),
    servingSince: servingSince(db),
    now,
  });
  const { promote } = decision;
  if (promote)
    await context.write({ system: 'postgresql', action: 'Promote', target: promote.name, reason: promote.reason }, () =>
      queries().promoteInstance(host(promote.name), connection),
    );
  return {
    facts: {
      primary: decision.primary,
      instances: decision.instances,
      ...(decision.failoverHeld ? { failoverHeld: decision.failoverHeld } : {}),
    },
    events: decisionEvents(decision),
    restartPods: decision.fence,
    labelPods: decision.labels,
    requeueAfterMs: decision.requeueAfterMs,
  };
}
