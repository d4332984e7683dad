/**
 * What an EtcdCluster's status says of its members, from what etcd's own API reported (the
 * membership step's report): the members as listed, and `Available` as a healthy voting quorum.
 */
import type { ConditionList } from '../contract/conditions';
import type { EtcdClusterStatus } from './api';
import { type MembershipReport, quorum } from './topology';

/**
 * What etcd's API reports, each only when known. Without a member list (a quorum lost), the
 * members as last listed stay, none healthy: the claim each last ran on healthy is what a lost
 * member and a quorum recovery are judged by.
 */
export function membershipFields(
  membership?: MembershipReport,
  before?: EtcdClusterStatus,
): Partial<EtcdClusterStatus> {
  const step = membership?.step;
  const lastListed = before?.etcdMembers?.map((m) => ({ ...m, healthy: false, leader: false }));
  return {
    ...(membership?.reachable
      ? { etcdMembers: [...membership.members] }
      : membership && lastListed?.length
        ? { etcdMembers: lastListed }
        : {}),
    ...(step ? { step: `${step.reason}: ${step.message}` } : {}),
    ...(membership?.version ? { version: membership.version } : {}),
  };
}

/** Started members that vote (not learners), as etcd reports them. */
export function votersOf(membership: MembershipReport | undefined): MembershipReport['members'] {
  return membership?.members.filter((m) => !m.learner && m.started) ?? [];
}

/**
 * `Available`: a healthy voting quorum as etcd reports it; without etcd's word (a static
 * render), a quorum of ready pods.
 */
export function setAvailable(
  list: ConditionList,
  { want, ready, membership }: { want: number; ready: number; membership?: MembershipReport },
): void {
  const { set } = list;
  if (membership?.reachable) {
    const voters = votersOf(membership);
    const healthyVoters = voters.filter((m) => m.healthy).length;
    const q = quorum(voters.length);
    set(
      'Available',
      healthyVoters >= q ? 'True' : 'False',
      healthyVoters >= q ? 'QuorumHealthy' : 'NoQuorum',
      `${healthyVoters}/${voters.length} voting members healthy; quorum is ${q}`,
    );
  } else if (membership) {
    set(
      'Available',
      'False',
      membership.step?.reason ?? 'MembersUnreachable',
      membership.step?.message ?? 'no member answers',
    );
  } else {
    const q = quorum(want);
    set(
      'Available',
      ready >= q ? 'True' : 'False',
      ready >= q ? 'QuorumReady' : 'NoQuorum',
      `${ready}/${want} members ready; quorum is ${q}`,
    );
  }
}
