import type { Condition } from '../../constructs/core/schema';

export type { Condition };

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/**
 * Sets a condition in a list, metav1-style: the transition time changes only when the status
 * does, so an unchanged condition produces an unchanged list (and no status write).
 */
export function setCondition(conditions: readonly Condition[] | undefined, input: ConditionInput, now: Date = new Date()): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex(c => c.type === input.type);
  const existing = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = existing && existing.status === input.status ? existing.lastTransitionTime : rfc3339(now);
  const next: Condition = { ...input, lastTransitionTime };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find(c => c.type === type);
}

/** Whole seconds, as metav1.Time serializes; sub-second noise would make every status differ. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}
