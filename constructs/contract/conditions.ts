import type { Problem } from './declaration';
import { isJsonObject } from './json';

/**
 * A `metav1.Condition`, as `status.conditions` lists it (the schema that validates it is
 * `conditionSchema`, whose static type is this one).
 */
export interface Condition {
  /** In CamelCase, e.g. Available, Progressing, Degraded. */
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** The `.metadata.generation` the condition was set from. */
  observedGeneration?: number;
  /** When the condition last changed from one status to another (RFC 3339, whole seconds). */
  lastTransitionTime: string;
  /** Programmatic identifier for the last transition, in CamelCase. */
  reason: string;
  /** Human-readable details about the last transition. */
  message: string;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** Whole seconds, as metav1.Time serializes; sub-second noise would make every status differ. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

/**
 * Sets a condition in a list, metav1-style: the transition time changes only when the status
 * does, so an unchanged condition produces an unchanged list (and no status write).
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date = new Date(),
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const existing = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = existing?.status === input.status ? existing.lastTransitionTime : rfc3339(now);
  const next: Condition = { ...input, lastTransitionTime };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/**
 * The conditions, each with the transition time `stored` has for it when it has the same type and
 * status there: a condition computed afresh in every reconcile (by a kind that does not start from
 * the stored list, or added by the runtime) would otherwise carry a new time each second, and
 * every resync would write a status that says nothing new.
 */
export function keepTransitionTimes(
  conditions: readonly Condition[],
  stored: readonly Condition[] | undefined,
): Condition[] {
  return conditions.map((c) => {
    const before = findCondition(stored, c.type);
    return before?.status === c.status && before.lastTransitionTime !== c.lastTransitionTime
      ? { ...c, lastTransitionTime: before.lastTransitionTime }
      : c;
  });
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * The conditions one reconcile computes, all stamped with the generation they describe; each
 * `set` keeps the transition time unless the status changes (see `setCondition`).
 */
export class ConditionList {
  private list: Condition[];

  constructor(
    existing: readonly Condition[] | undefined,
    private readonly generation: number,
    private readonly now: Date = new Date(),
  ) {
    this.list = [...(existing ?? [])];
  }

  readonly set = (type: string, status: Condition['status'], reason: string, message: string): void => {
    this.list = setCondition(
      this.list,
      { type, status, reason, message: message.slice(0, 32768), observedGeneration: this.generation },
      this.now,
    );
  };

  /**
   * `Degraded`: True for the first problem present (list them most telling first), else False
   * (AsExpected) saying what matches. Every kind reports why it is not as specified this way.
   */
  readonly degraded = (problems: readonly (Problem | false | undefined)[], asExpected: string): void => {
    const problem = problems.find((p): p is Problem => !!p);
    if (problem) this.set('Degraded', 'True', problem.reason, problem.message);
    else this.set('Degraded', 'False', 'AsExpected', asExpected);
  };

  /**
   * The problem `Degraded` already reports, when it is True for one of `reasons`. For failures
   * seen only for a moment: since Kubernetes 1.30 a StatefulSet deletes a failed pod and makes it
   * again at once, recording no Warning (kubernetes/kubernetes#123809), so a member that fails over
   * and over is mostly seen as a pod that is not ready yet. Passed to `degraded` behind the same
   * test as the failure itself (members not ready), it keeps the condition from flapping to
   * AsExpected between failures, and clears once the members are ready — even for a moment, as
   * a pod that fails after being Ready is: readiness is what the status reports. Only a problem
   * reported of this generation: a new spec (an image set back) is not judged by the old one's pods.
   */
  readonly reported = (...reasons: string[]): Problem | undefined => {
    const d = findCondition(this.list, 'Degraded');
    return d?.status === 'True' && reasons.includes(d.reason) && d.observedGeneration === this.generation
      ? { reason: d.reason, message: d.message }
      : undefined;
  };

  get conditions(): Condition[] {
    return this.list;
  }
}

/** Whether a value is a well-formed condition. */
export function isCondition(v: unknown): v is Condition {
  return (
    isJsonObject(v) &&
    typeof v.type === 'string' &&
    (v.status === 'True' || v.status === 'False' || v.status === 'Unknown') &&
    typeof v.reason === 'string' &&
    typeof v.message === 'string' &&
    typeof v.lastTransitionTime === 'string'
  );
}

/** A status's `conditions`, when it has a list of them. */
export function conditionsOf(status: unknown): Condition[] | undefined {
  if (!isJsonObject(status)) return undefined;
  const list = status.conditions;
  return Array.isArray(list) && list.every(isCondition) ? list : undefined;
}
