/**
 * Pods a kind's external step asks to start again (`ExternalStep.restartPods`), e.g. an etcd
 * member that must read its ConfigMap's environment at a new start. Planned here as `RestartPod`
 * actions, only for pods the resource's own StatefulSets control and only at the uid asked (a pod
 * made again since is already a new start); the executor deletes them by that uid, last. The
 * claims asked to be discarded with a pod (`PodRestart.discardClaims`) are planned as its
 * `DeleteClaim`s only where it is certain they are the pod's own: at the uid asked, made by its
 * StatefulSet from a claim template for the pod's ordinal — never a claim the user made.
 */
import {
  BuiltinTypes,
  claimTemplateOf,
  isOfType,
  type Pod,
  type PodRestart,
  type StatefulSet,
} from '../../../constructs/contract';
import type { PlanReads } from './planned-child';
import type { ChildPlan, DeleteClaim, RestartPod } from './plan';

export function planPodRestarts(
  parts: Pick<PlanReads, 'pods' | 'claims'>,
  children: readonly ChildPlan[],
  asked: readonly PodRestart[],
): RestartPod[] {
  if (asked.length === 0) return [];
  const ours = statefulSetPods(parts, children);
  return asked.flatMap((r) => {
    const found = podAsked(ours, r);
    if (!found) return [];
    const { pod, sts } = found;
    const discard = claimsToDiscard(parts, r, pod, sts);
    return [{ type: 'RestartPod' as const, key: `Pod/${r.name}`, pod, reason: r.reason, discard }];
  });
}

/** A pod of one of the resource's own StatefulSets, with that StatefulSet. */
export interface StatefulSetPod {
  readonly pod: Pod;
  readonly sts: StatefulSet;
}

/** The pods the resource's own StatefulSets (as cached) control. */
export function statefulSetPods(parts: Pick<PlanReads, 'pods'>, children: readonly ChildPlan[]): StatefulSetPod[] {
  const pods = parts.pods;
  if (!pods) return [];
  return children.flatMap(({ child }) => {
    const sts = child.current;
    return sts && isOfType(BuiltinTypes.StatefulSet, sts) && sts.metadata.uid
      ? pods.listControlledBy(sts.metadata.uid).map((pod) => ({ pod, sts }))
      : [];
  });
}

/** The pod asked for, by name and uid, unless it is going already. */
export function podAsked(
  ours: readonly StatefulSetPod[],
  asked: { readonly name: string; readonly uid: string },
): StatefulSetPod | undefined {
  return ours.find(
    ({ pod }) => pod.metadata.name === asked.name && pod.metadata.uid === asked.uid && !pod.metadata.deletionTimestamp,
  );
}

/**
 * The claims asked to be discarded with `pod` that are certainly its own: at the uid asked, and
 * made by its StatefulSet from a claim template for the pod's ordinal (`<template>-<pod>`, the
 * claims its StatefulSet mounts in it).
 */
function claimsToDiscard(parts: Pick<PlanReads, 'claims'>, r: PodRestart, pod: Pod, sts: StatefulSet): DeleteClaim[] {
  return (r.discardClaims ?? []).flatMap(({ name, uid }): DeleteClaim[] => {
    const claim = parts.claims?.get(`${pod.metadata.namespace ?? ''}/${name}`);
    const template = claimTemplateOf(sts, name);
    if (claim?.metadata.uid !== uid || claim.metadata.deletionTimestamp || !template) return [];
    if (`${sts.metadata.name ?? ''}-${template.ordinal}` !== pod.metadata.name) return [];
    return [{ type: 'DeleteClaim', key: `PersistentVolumeClaim/${name}`, claim, pod: r.name, reason: r.reason }];
  });
}
