import {
  BuiltinTypes,
  type Children,
  type ConfigMap,
  type EventSpec,
  type PodRestart,
  type StatefulSet,
} from '../contract';
import { ETCD_PEER_PORT, memberDnsName, memberName } from './addresses';
import type { EtcdCluster } from './api';
import { type EtcdTransport, etcdTransport, scheme, transportOfInitialCluster } from './tls';
import type { CaRotationPhase } from './ca-rotation-names';
import { FORCE_NEW_CLUSTER_ENV, FORCED_MEMBER_ANNOTATION, FORCED_POD_ANNOTATION } from './quorum-recovery-names';

/**
 * What the StatefulSet and the members' ConfigMap should say at this step of the cluster's life.
 * Members read `ETCD_INITIAL_CLUSTER(_STATE)` from the ConfigMap when they start, so a member
 * added to a running cluster starts with `existing` and the member list it was added to.
 */
export interface EtcdTopology {
  /** StatefulSet replicas: the members there are, plus one being added. */
  readonly replicas: number;
  readonly clusterState: 'new' | 'existing';
  /** `name=peerURL,...`, as `--initial-cluster` takes it. */
  readonly initialCluster: string;
  /** The StatefulSet's rolling-update partition: pods with a lower ordinal keep their version. */
  readonly partition: number;
  /** The etcd version of the pod template. */
  readonly version: string;
  /** How the cluster was made, as its members' ConfigMap says; absent before there is one. */
  readonly made?: EtcdTransport;
  /**
   * A quorum recovery under way: the members' ConfigMap tells etcd to force a new cluster, which
   * only the surviving member (the one with a write-ahead log) acts on. Absent otherwise.
   */
  readonly forcedStart?: ForcedStart;
}

/** The survivor a quorum recovery forces a new cluster from, and its pod when the recovery began. */
export interface ForcedStart {
  /** The member's pod name, e.g. `kv-0`. */
  readonly member: string;
  /** The uid of its pod then: that pod is restarted to read the flag; one made since has read it. */
  readonly podUID: string;
}

/** One member as the status shows it. */
export interface MemberReport {
  readonly name: string;
  readonly id: string;
  readonly learner: boolean;
  readonly started: boolean;
  readonly healthy: boolean;
  readonly leader: boolean;
  readonly version?: string;
  /** Its database file's size and the part of it in use, in bytes, as it reported them. */
  readonly dbSizeBytes?: number;
  readonly dbSizeInUseBytes?: number;
  /** The uid of the claim it last ran on healthy: a member on another claim has lost its data. */
  readonly claimUID?: string;
}

/** What the membership step saw and did, for status and conditions. */
export interface MembershipReport {
  /** Whether any member answered with the member list. */
  readonly reachable: boolean;
  readonly members: readonly MemberReport[];
  /** The step in progress or what it waits for; undefined when membership and versions are settled. */
  readonly step?: { readonly reason: string; readonly message: string };
  /** A requested change the operator will not make (e.g. a downgrade across a minor). */
  readonly refused?: { readonly reason: string; readonly message: string };
  /** The oldest version a member runs. */
  readonly version?: string;
}

export interface MembershipResult {
  readonly topology: EtcdTopology;
  readonly report: MembershipReport;
  readonly events: EventSpec[];
  readonly requeueAfterMs: number;
  /** Member pods to start again once the children are written (see `ExternalStep.restartPods`). */
  readonly restartPods?: readonly PodRestart[];
  /** A CA rotation's phase whose member restarts are done, every member healthy (ca-rotation.ts). */
  readonly caRolled?: CaRotationPhase;
  /** No member answered at all (see `ExternalStep.outOfReach`). */
  readonly outOfReach?: string;
}

/** The step (and `Available`'s reason) when too few members are up to form a quorum. */
export const QUORUM_LOST = 'QuorumLost';

/** The step (and `Degraded`'s reason) when etcd lists a member this operator did not add. */
export const FOREIGN_MEMBER = 'ForeignMember';

/** The ConfigMap members read their initial cluster from. */
export function membersConfigMapName(cluster: string): string {
  return `${cluster}-members`;
}

/**
 * The topology a cluster starts with: all members at once, bootstrapping together. Members are
 * reached at their DNS names unless `peerURL` says otherwise (the operator's hosts file).
 */
export function bootstrapTopology(
  cluster: string,
  namespace: string,
  replicas: number,
  version: string,
  /** How members are reached: their DNS names with this transport's scheme, or these URLs. */
  peers: EtcdTransport | ((ordinal: number) => string),
): EtcdTopology {
  const peerURL =
    typeof peers === 'function'
      ? peers
      : (i: number) => `${scheme(peers)}://${memberDnsName(cluster, namespace, i)}:${ETCD_PEER_PORT}`;
  const initialCluster = Array.from({ length: replicas }, (_, i) => `${memberName(cluster, i)}=${peerURL(i)}`).join(
    ',',
  );
  return { replicas, clusterState: 'new', initialCluster, partition: 0, version };
}

/**
 * The topology a cluster's children show: what the reconciler last wrote to its StatefulSet and
 * members' ConfigMap, or the bootstrap topology before there is a StatefulSet. Read-only: the
 * membership step starts from it, and `plan`, `diff` and `render` render with it.
 */
export function observedTopology(
  cluster: EtcdCluster,
  children: Children,
  /** Where members are reached before the ConfigMap says (default: their cluster DNS names). */
  peerURL?: (ordinal: number) => string,
): EtcdTopology {
  const name = cluster.metadata.name;
  // A namespaced kind: the API server always sets it.
  const namespace = cluster.metadata.namespace ?? '';
  const sts = children.of(BuiltinTypes.StatefulSet, name);
  const made = madeTransport(children, name);
  const fallback = bootstrapTopology(
    name,
    namespace,
    sts?.spec?.replicas ?? cluster.spec.replicas,
    cluster.spec.version,
    peerURL ?? etcdTransport(cluster, made),
  );
  const topology = sts
    ? currentTopology(sts, children.of(BuiltinTypes.ConfigMap, membersConfigMapName(name)), fallback)
    : fallback;
  return made ? { ...topology, made } : topology;
}

/** The topology the cluster's StatefulSet and ConfigMap have now. */
// eslint-disable-next-line complexity -- a flat read of optional fields with fallbacks; every `?.` and `??` counts as a branch
function currentTopology(sts: StatefulSet, cm: ConfigMap | undefined, fallback: EtcdTopology): EtcdTopology {
  const image = sts.spec?.template?.spec?.containers?.[0]?.image ?? '';
  const forcedStart = forcedStartOf(cm);
  return {
    replicas: sts.spec?.replicas ?? fallback.replicas,
    clusterState: cm?.data?.ETCD_INITIAL_CLUSTER_STATE === 'existing' ? 'existing' : 'new',
    initialCluster: cm?.data?.ETCD_INITIAL_CLUSTER ?? fallback.initialCluster,
    partition: sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    version: /:v(\d+\.\d+\.\d+)$/.exec(image)?.[1] ?? fallback.version,
    ...(forcedStart ? { forcedStart } : {}),
  };
}

/** The recovery the members' ConfigMap is forcing, if any: its flag, with the member and pod it names. */
function forcedStartOf(cm: ConfigMap | undefined): ForcedStart | undefined {
  const member = cm?.metadata.annotations?.[FORCED_MEMBER_ANNOTATION];
  const podUID = cm?.metadata.annotations?.[FORCED_POD_ANNOTATION];
  return cm?.data?.[FORCE_NEW_CLUSTER_ENV] === 'true' && member && podUID ? { member, podUID } : undefined;
}

/** How the cluster was made, as its members' ConfigMap says (absent before there is one). */
export function madeTransport(children: Children, cluster: string): EtcdTransport | undefined {
  return transportOfInitialCluster(
    children.of(BuiltinTypes.ConfigMap, membersConfigMapName(cluster))?.data?.ETCD_INITIAL_CLUSTER,
  );
}

/** The votes an etcd cluster of `members` voting members needs for quorum. */
export function quorum(members: number): number {
  return Math.floor(members / 2) + 1;
}
