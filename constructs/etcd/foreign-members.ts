/** Members etcd lists that this operator did not add: reported, never removed. */
import { FOREIGN_MEMBER, type MembershipResult } from './topology';
import type { ClusterView } from './membership';
import { hexMemberId } from './without-member-list';

const WAIT_POLL_MS = 3000;

/**
 * 0. Members this operator did not add (a peer URL that is none of its members'): reported at once
 * as `Degraded` (`ForeignMember`), never waited for and never removed — the operator touches no
 * member it did not make. No membership change is made around it: it may vote, and counts in quorum.
 */
export function foreignMembers(view: ClusterView): MembershipResult | undefined {
  const foreign = view.members.filter((m) => view.ordinal(m) === undefined);
  if (!foreign.length) return undefined;
  const ours = view.members.filter((m) => !foreign.includes(m));
  const described = foreign.map(
    (m) =>
      `${hexMemberId(m.id)} (${m.name ? `name ${m.name}, ` : 'not started, '}peer URLs ${m.peerURLs.join(' ')}${m.isLearner ? ', a learner' : ''})`,
  );
  const ids = foreign.map((m) => hexMemberId(m.id)).join(' ');
  const message = `etcd lists member${foreign.length > 1 ? 's' : ''} this operator did not add: ${described.join('; ')}. No membership change is made while ${foreign.length > 1 ? 'they are' : 'it is'} there; remove ${foreign.length > 1 ? 'them' : 'it'} if unknown (etcdctl member remove ${ids})`;
  return {
    topology: view.formed(ours, view.settledReplicas),
    report: view.report(undefined, { reason: FOREIGN_MEMBER, message }),
    events: [],
    requeueAfterMs: WAIT_POLL_MS,
  };
}
