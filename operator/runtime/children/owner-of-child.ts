import {
  claimTemplateOf,
  type InvolvedObject,
  type KubeObject,
  podWorkloads,
  type ResourceType,
} from '../../../constructs/contract';
import type { Informer } from '../cache';
import { objectKey } from '../client';

/** A ReplicaSet is named `<deployment>-<pod-template-hash>`. */
const REPLICA_SET_OF_DEPLOYMENT = /^(.+)-[a-z0-9]{1,10}$/;

/**
 * Which resource of `type` an object named in a failure Event belongs to, read from the owner
 * references of the children in the cache, so no naming rule of the user's is needed:
 * - a child itself (a StatefulSet whose pods the quota refuses): its controller owner;
 * - the ReplicaSet of an owned Deployment (its pods refused): the Deployment's owner;
 * - a claim of an owned StatefulSet's claim templates (`<template>-<statefulset>-<ordinal>`, no
 *   volume for it): the StatefulSet's owner.
 */
export function ownerByReferences(
  type: ResourceType,
  owned: OwnedInformers,
): (involved: InvolvedObject) => string | undefined {
  const ownerOf = childOwner(type, owned);
  const claimOwner = ownerOfStatefulSetClaim(type, owned);
  return (involved) => {
    const { kind = '', namespace, name = '' } = involved;
    const direct = ownerOf(kind, namespace, name);
    if (direct) return direct;
    if (kind === 'ReplicaSet') {
      const deployment = REPLICA_SET_OF_DEPLOYMENT.exec(name)?.[1];
      return deployment ? ownerOf('Deployment', namespace, deployment) : undefined;
    }
    if (kind === 'PersistentVolumeClaim') return claimOwner(namespace, name);
    return undefined;
  };
}

/**
 * Which resource of `type` a claim belongs to: the owner of the owned StatefulSet whose claim
 * templates made it (`<template>-<statefulset>-<ordinal>`).
 */
export function ownerOfClaim(type: ResourceType, owned: OwnedInformers): (claim: KubeObject) => string | undefined {
  const ownerOf = ownerOfStatefulSetClaim(type, owned);
  return (claim) => ownerOf(claim.metadata.namespace, claim.metadata.name ?? '');
}

function ownerOfStatefulSetClaim(
  type: ResourceType,
  owned: OwnedInformers,
): (namespace: string | undefined, name: string) => string | undefined {
  const ownerOf = childOwner(type, owned);
  return (namespace, name) => {
    const statefulSets = owned.get('StatefulSet')?.informer.list(namespace) ?? [];
    const parent = statefulSets.find((s) => claimTemplateOf(s, name) !== undefined);
    return parent ? ownerOf('StatefulSet', namespace, parent.metadata.name) : undefined;
  };
}

/** The owned types' informers, by kind. */
type OwnedInformers = ReadonlyMap<string, { readonly informer: Informer }>;

/** The resource of `type` controlling an owned child, by the child's kind, namespace and name. */
function childOwner(
  type: ResourceType,
  owned: OwnedInformers,
): (kind: string, namespace: string | undefined, name: string | undefined) => string | undefined {
  const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
  return (kind, namespace, name) => {
    const child = owned.get(kind)?.informer.get(objectKey({ namespace, name }));
    return child?.metadata.ownerReferences?.find(
      (r) => r.controller === true && r.kind === type.kind && r.apiVersion === apiVersion,
    )?.name;
  };
}

/**
 * Which resource of `type` a pod belongs to: the owner of the owned workload that made it (a
 * StatefulSet, DaemonSet, Job or ReplicaSet directly; a Deployment through its ReplicaSet's name).
 */
export function ownerOfPod(type: ResourceType, owned: OwnedInformers): (pod: KubeObject) => string | undefined {
  const ownerOf = childOwner(type, owned);
  return (pod) => {
    for (const w of podWorkloads(pod)) {
      const name = ownerOf(w.kind, pod.metadata.namespace, w.name);
      if (name) return name;
    }
    return undefined;
  };
}
