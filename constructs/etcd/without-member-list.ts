/**
 * What the membership step reports when a formed cluster's members give no member list, and how
 * it names members to a user: pure but for the members' own status calls.
 */
import { memberName } from './addresses';
import { type EtcdEndpoint, endpointURL, memberStatus } from './etcd-api';
import { QUORUM_LOST, quorum } from './topology';

/**
 * Why a formed cluster gives no member list: fewer members up than a quorum (each still answers
 * for itself, without a leader) is `QuorumLost`, naming the members that do not answer; else no
 * member answers at all, or a quorum is up and electing a leader (`MembersUnreachable`).
 */
export async function withoutMemberList(
  cluster: string,
  replicas: number,
  probe: readonly EtcdEndpoint[],
): Promise<{ reason: string; message: string }> {
  const answers = await Promise.all(probe.map((url) => memberStatus(url, 1500).catch(() => undefined)));
  const up = probe.flatMap((_, i) => (answers[i] ? [memberName(cluster, i)] : []));
  const down = probe.flatMap((_, i) => (answers[i] ? [] : [memberName(cluster, i)]));
  const needed = quorum(replicas);
  if (up.length > 0 && up.length < needed) {
    return {
      reason: QUORUM_LOST,
      message: `quorum lost: only ${up.join(', ')} of ${replicas} members answer${up.length === 1 ? 's' : ''} (a quorum is ${needed}); ${down.join(', ')} do${down.length === 1 ? 'es' : ''} not. No member is changed: bring them back, or recover as docs/operators/etcd.md says`,
    };
  }
  return {
    reason: 'MembersUnreachable',
    message: up.length
      ? `${up.join(', ')} answer but give no member list (a leader being elected?)`
      : `no member answers (asked ${probe.map(endpointURL).join(', ')})`,
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
