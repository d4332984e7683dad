/**
 * The steps of a reconcile that tell what it did: the status computed from the steps before it
 * (conditions, kstatus summary, scale) and the Events recorded. Writing it, and when, is
 * status-pacing.ts's.
 */
import {
  type ControllerDeclaration,
  type EventSpec,
  type ExternalStep,
  type KubeObject,
  type Observed,
  type Pod,
  assessChildren,
  type ChildMap,
  madeBy,
} from '../../../constructs/contract';
import type { KindDescriptor } from '../../../constructs/contract/kind';
import { withSummaryConditions } from '../../../constructs/contract/kstatus';
import { scaleStatusOf } from '../../../constructs/contract/scale';
import { POD_WORKLOAD_KINDS } from '../../../constructs/contract/health';
import { isChildRefusal } from '../plan';
import {
  type Condition,
  conditionsOf,
  findCondition,
  keepTransitionTimes,
  setCondition,
} from '../../../constructs/contract/conditions';
import type { TerminalError } from '../controller';
import { cacheReads, type ControllerParts, type Resource, type Target } from './controller-parts';
import { cachedClaimsOf } from '../plan';
import { isJsonObject } from '../../../constructs/contract/json';
import type { PacedReconcile } from './status-pacing';
import { type ChildWrites } from './child-steps';
import type { NotOwned } from '../plan';

/** Everything the status step reads: what the steps before it produced. */
export interface Outcome {
  readonly writes: ChildWrites;
  /** The children as they are now: the written ones, and the cache's for the rest. */
  readonly children: ChildMap;
  readonly external?: ExternalStep;
  readonly terminal?: TerminalError;
  readonly notOwned: readonly NotOwned[];
  readonly prepared?: object;
}

/**
 * Status: what the kind's status function makes of what was observed, with `Degraded=True`
 * where the runtime knows better — a child name taken by someone else's object (ChildNotOwned),
 * or a terminal error the kind does not report itself (one that is not the API server's refusal).
 */
export function computeStatus(
  parts: Pick<ControllerParts, 'decl' | 'failures' | 'reads' | 'pods' | 'claims' | 'clock'>,
  t: Target,
  outcome: Outcome,
): { observed: Observed; status: object | undefined } {
  const { decl } = parts;
  const { terminal, notOwned } = outcome;
  const refusal = terminal && isChildRefusal(terminal.cause) ? terminal.message : undefined;
  const childFailure = parts.failures?.find(t.namespace, t.resource.metadata.name);
  const observed: Observed = {
    children: outcome.children,
    before: outcome.writes.before,
    changes: outcome.writes.changes,
    ...cacheReads(parts, t),
    applyError: refusal,
    childFailure,
    health: assessChildren({
      children: outcome.children.values(),
      podsOf: (child) => podsOf(parts, child),
      claimsOf: (child) => cachedClaimsOf(parts, child),
      held: [...outcome.writes.held.values()],
      failureEvent: childFailure,
    }),
    prepared: outcome.prepared,
    external: outcome.external?.facts,
    now: new Date(parts.clock.now()),
  };
  let status = decl.status?.(t.resource, observed);
  if (notOwned.length) {
    const message = `${notOwned.map((n) => n.reason).join('; ')}. The operator never takes over an object it did not create: rename or delete that object, or give this resource another name`;
    status = withDegraded(status, { reason: 'ChildNotOwned', message }, t.generation, observed.now);
    status = withChildBlocked(status, { reason: 'ChildNotOwned', message }, t.generation, observed.now);
  } else if (terminal && !refusal) {
    status = withDegraded(status, terminal, t.generation, observed.now);
  }
  if (refusal)
    status = withChildBlocked(
      status,
      { reason: 'ChildRefused', message: `a child was refused: ${refusal}` },
      t.generation,
      observed.now,
    );
  status = withScaleStatus(status, decl.for.scaleStatus, outcome.children.values());
  status = withSummary(status, t.generation, observed.now);
  const stored = conditionsOf(t.resource.status);
  return { observed, status: withConditions(status, (conditions) => keepTransitionTimes(conditions, stored)) };
}

/**
 * The status with the scale subresource's fields the kind leaves to the runtime (see
 * `KindDescriptor.scaleStatus`): its workloads' pods and their selector. A field the kind's
 * status function sets itself is kept as it is.
 */
function withScaleStatus(
  status: object | undefined,
  writes: KindDescriptor['scaleStatus'],
  children: Iterable<KubeObject>,
): object | undefined {
  if (!status || !writes || (!writes.replicas && !writes.selector)) return status;
  const scale = scaleStatusOf(children);
  return {
    ...(writes.replicas ? { replicas: scale.replicas } : {}),
    ...(writes.selector && scale.selector ? { selector: scale.selector } : {}),
    ...status,
  };
}

/**
 * The status with the conditions a blocked child makes true whatever the kind computed from the
 * children the cache still holds — one the API server refused (ChildRefused), or one whose name
 * someone else's object holds (ChildNotOwned; nothing of the render was applied): not `Available`
 * (what runs is not what the spec asks) and not `Progressing` (nothing moves until it is dealt
 * with), each naming the child and why.
 */
function withChildBlocked(
  status: object | undefined,
  why: { reason: 'ChildRefused' | 'ChildNotOwned'; message: string },
  generation: number,
  now: Date,
): object | undefined {
  const blocked = (type: string) => ({ type, status: 'False', ...why, observedGeneration: generation }) as const;
  return withConditions(status, (conditions) => {
    const list = setCondition(conditions, blocked('Available'), now);
    return findCondition(list, 'Progressing') ? setCondition(list, blocked('Progressing'), now) : list;
  });
}

/** The status with `Ready`, `Reconciling` and `Stalled` derived from its conditions (see `withSummaryConditions`). */
function withSummary(status: object | undefined, generation: number, now: Date): object | undefined {
  return withConditions(status, (conditions) => withSummaryConditions(conditions, generation, now));
}

/** The status with its conditions changed by `change`; a status without conditions is left as it is. */
function withConditions(
  status: object | undefined,
  change: (conditions: Condition[]) => Condition[],
): object | undefined {
  const conditions = conditionsOf(status);
  if (!status || !conditions) return status;
  return { ...status, conditions: change(conditions) };
}

/**
 * The cached pods a workload child made: a StatefulSet's, DaemonSet's, Job's or ReplicaSet's by
 * the controller index; a Deployment's among those its selector's labels match, by the name of
 * their ReplicaSet (see `podWorkloads`).
 */
function podsOf(parts: Pick<ControllerParts, 'pods'>, child: KubeObject): readonly Pod[] {
  const pods = parts.pods;
  if (!pods || !POD_WORKLOAD_KINDS.includes(child.kind ?? '')) return [];
  if (child.kind !== 'Deployment') return pods.listControlledBy(child.metadata.uid ?? '');
  const selector = isJsonObject(child.spec) && isJsonObject(child.spec.selector) ? child.spec.selector : {};
  const labels = isJsonObject(selector.matchLabels) ? stringsOf(selector.matchLabels) : {};
  return pods.list(child.metadata.namespace, labels).filter((p) => madeBy(p, child));
}

function stringsOf(record: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The status with `Degraded=True` for this reason; a status without conditions is left as it is. */
function withDegraded(
  status: object | undefined,
  problem: { readonly reason: string; readonly message: string },
  generation: number,
  now: Date,
): object | undefined {
  const degraded = {
    type: 'Degraded',
    status: 'True' as const,
    reason: problem.reason,
    message: problem.message.slice(0, 32768),
    observedGeneration: generation,
  };
  return withConditions(status, (conditions) => setCondition(conditions, degraded, now));
}

/**
 * Events: the external step's, the kind's (or one per changed child), and a Warning when
 * `Degraded` turns True — each once while a status write waits.
 */
export async function recordEvents(
  parts: Pick<ControllerParts, 'decl'>,
  t: Target,
  reported: { observed: Observed; status: object | undefined; external?: ExternalStep; paced: PacedReconcile },
): Promise<void> {
  const { observed, status, external, paced } = reported;
  const events = [...(external?.events ?? []), ...eventsOf(parts.decl, t.resource, observed, status)];
  const degraded = degradedWarning(t.resource, status, paced);
  for (const e of degraded ? [...events, degraded] : events) {
    if (paced.isNewEvent(e)) await t.ctx.recorder.record(t.resource, e.type, e.reason, e.message);
  }
}

/**
 * The Warning of `Degraded` turning True (or True for another reason): judged against what this
 * process last warned of as well as the cached status, which may not show a status just written.
 */
function degradedWarning(resource: Resource, status: object | undefined, paced: PacedReconcile): EventSpec | undefined {
  const now = findCondition(conditionsOf(status), 'Degraded');
  if (now?.status !== 'True') {
    paced.setDegradedWarned(undefined);
    return undefined;
  }
  const was = findCondition(resource.status?.conditions, 'Degraded');
  const known = (was?.status === 'True' && was.reason === now.reason) || paced.degradedWarned() === now.reason;
  paced.setDegradedWarned(now.reason);
  return known ? undefined : { type: 'Warning', reason: now.reason, message: now.message };
}

function eventsOf(
  decl: ControllerDeclaration<Resource>,
  resource: Resource,
  observed: Observed,
  status: object | undefined,
): EventSpec[] {
  const events = decl.events
    ? decl.events(resource, observed, status)
    : observed.changes.map((c) => ({
        type: 'Normal' as const,
        reason: c.verb,
        message: `${c.verb} ${c.kind} ${c.name}`,
      }));
  return events;
}
