import type { EventSpec } from '../contract';
import { ETCD_PEER_PORT, memberDnsName, memberName } from './addresses';

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
}

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
  peerURL: (ordinal: number) => string = (i) => `http://${memberDnsName(cluster, namespace, i)}:${ETCD_PEER_PORT}`,
): EtcdTopology {
  const initialCluster = Array.from({ length: replicas }, (_, i) => `${memberName(cluster, i)}=${peerURL(i)}`).join(
    ',',
  );
  return { replicas, clusterState: 'new', initialCluster, partition: 0, version };
}

/** The votes an etcd cluster of `members` voting members needs for quorum. */
export function quorum(members: number): number {
  return Math.floor(members / 2) + 1;
}
