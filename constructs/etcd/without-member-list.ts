/**
 * What the membership step reports when a formed cluster's members give no member list, and how
 * it names members to a user: pure but for the members' own status calls.
 */
import type { ExternalContext } from '../contract';
import { memberName } from './addresses';
import type { EtcdCluster } from './api';
import { type EtcdEndpoint, endpointURL, memberStatus } from './etcd-api';
import { type EtcdTopology, type MembershipResult, QUORUM_LOST, quorum } from './topology';
import { RECOVER_FROM_ANNOTATION } from './quorum-recovery-names';
import { beginRecovery, forcingRecovery } from './quorum-recovery';

const WAIT_POLL_MS = 3000;

/**
 * The membership step when no member answers with a member list: a recovery under way goes on; a
 * new cluster is bootstrapping; a formed one says why (`withoutMemberList`) and, when it lost its
 * quorum and the user chose a survivor, begins the recovery from it (quorum-recovery.ts).
 */
export async function noMemberList(
  cluster: EtcdCluster,
  current: EtcdTopology,
  probe: readonly EtcdEndpoint[],
  context: ExternalContext,
): Promise<MembershipResult> {
  if (current.forcedStart) return forcingRecovery(cluster, current, current.forcedStart, context);
  const unchanged = (step: { reason: string; message: string }): MembershipResult => ({
    topology: current,
    report: { reachable: false, members: [], step },
    events: [],
    requeueAfterMs: WAIT_POLL_MS,
  });
  if (current.clusterState === 'new')
    return unchanged({ reason: 'Bootstrapping', message: `no member answers with a quorum's member list yet` });
  const without = await withoutMemberList(cluster.metadata.name, current.replicas, probe);
  const result = beginRecovery(cluster, current, without, context) ?? unchanged(without.step);
  // No member answers at all: from where the operator (or `plan`) runs, etcd is out of reach.
  return without.answering.length === 0 ? { ...result, outOfReach: without.step.message } : result;
}

/** Why a formed cluster gives no member list, and which members still answer for themselves. */
export interface WithoutMemberList {
  readonly step: { readonly reason: string; readonly message: string };
  /** The members (pod names) that answer for themselves. */
  readonly answering: readonly string[];
}

/**
 * Why a formed cluster gives no member list: fewer members up than a quorum (each still answers
 * for itself, without a leader) is `QuorumLost`, naming the members that do not answer; else no
 * member answers at all, or a quorum is up and electing a leader (`MembersUnreachable`).
 */
export async function withoutMemberList(
  cluster: string,
  replicas: number,
  probe: readonly EtcdEndpoint[],
): Promise<WithoutMemberList> {
  const answers = await Promise.all(probe.map((url) => memberStatus(url, 1500).catch(() => undefined)));
  const up = probe.flatMap((_, i) => (answers[i] ? [memberName(cluster, i)] : []));
  const down = probe.flatMap((_, i) => (answers[i] ? [] : [memberName(cluster, i)]));
  const needed = quorum(replicas);
  if (up.length > 0 && up.length < needed) {
    return {
      answering: up,
      step: {
        reason: QUORUM_LOST,
        message: `quorum lost: only ${up.join(', ')} of ${replicas} members answer${up.length === 1 ? 's' : ''} (a quorum is ${needed}); ${down.join(', ')} do${down.length === 1 ? 'es' : ''} not. No member is changed: bring them back, or — if their data is gone for good — recover from a survivor by annotating the EtcdCluster ${RECOVER_FROM_ANNOTATION}=<member> (docs/operators/etcd.md)`,
      },
    };
  }
  return {
    answering: up,
    step: {
      reason: 'MembersUnreachable',
      message: up.length
        ? `${up.join(', ')} answer but give no member list (a leader being elected?)`
        : `no member answers (asked ${probe.map(endpointURL).join(', ')})`,
    },
  };
}

/** A member ID as etcdctl shows it and takes it (`member remove`): hex. The API gives decimal. */
export function hexMemberId(id: string): string {
  try {
    return BigInt(id).toString(16);
  } catch {
    return id;
  }
}
