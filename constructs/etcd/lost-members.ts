/**
 * A member whose data is gone, replaced by the operator: removed through etcd's API, then added
 * back empty as a learner by the usual scale-up step.
 *
 * The signal is typed, never read from a log: the claim a member runs on now is not the one it
 * last ran on healthy. The status records each healthy member's claim uid
 * (`etcdMembers[].claimUID`); a member that is not healthy, on a claim of another uid, is on an
 * empty volume — its claim was deleted and the StatefulSet made a new one — and can never rejoin
 * as itself (etcd refuses it: its log is gone, the cluster's is not). A crash loop alone says
 * nothing of the data (an OOM kill loops too), so it is never the reason.
 */
import { BuiltinTypes, type CacheReads, type ExternalContext, type Pod } from '../contract';
import type { EtcdCluster } from './api';
import { type EtcdMember, removeMember } from './etcd-api';
import { etcdSelectorLabels } from './etcd-cluster-resources';
import type { ClusterView } from './membership';
import { quorum, type MembershipResult } from './topology';
import { hexMemberId } from './without-member-list';

const STEP_POLL_MS = 1000;

/** The member claims there are now, and those the status recorded each member healthy on. */
export function memberClaims(
  cluster: EtcdCluster,
  context: Pick<ExternalContext, 'read'>,
): { claims: ReadonlyMap<string, string>; recordedClaims: ReadonlyMap<string, string> } {
  const claims = new Map(
    context
      .read(BuiltinTypes.PersistentVolumeClaim, etcdSelectorLabels(cluster.metadata.name))
      .filter((c) => !c.metadata.deletionTimestamp)
      .map((c): [string, string] => [c.metadata.name ?? '', c.metadata.uid ?? '']),
  );
  const recordedClaims = new Map(
    (cluster.status?.etcdMembers ?? []).flatMap((m) => (m.id && m.claimUID ? [[m.id, m.claimUID] as const] : [])),
  );
  return { claims, recordedClaims };
}

/** The claim member pod `pod`'s data is on: `data-<pod>`, from the StatefulSet's claim template. */
export function memberClaimName(pod: string): string {
  return `data-${pod}`;
}

/** Member `member`'s pod of cluster `cluster` as cached, unless it is going. */
export function livePod(reads: CacheReads, cluster: string, member: string): Pod | undefined {
  return reads
    .read(BuiltinTypes.Pod, etcdSelectorLabels(cluster))
    .find((p) => p.metadata.name === member && !p.metadata.deletionTimestamp);
}

/** The claim a listed member's data is on. */
function claimName(view: ClusterView, m: EtcdMember): string {
  return memberClaimName(view.podName(m));
}

/** What the status records of a member's claim: the one it runs on while healthy, else the one recorded. */
export function claimRecord(view: ClusterView, m: EtcdMember): { claimUID?: string } {
  const now = view.facts.claims.get(claimName(view, m));
  const recorded = view.facts.recordedClaims.get(m.id);
  const uid = view.healthy(m) ? (now ?? recorded) : recorded;
  return uid ? { claimUID: uid } : {};
}

/** A member on a claim that is not the one it last ran on healthy: its data is gone. */
function dataLost(view: ClusterView, m: EtcdMember): boolean {
  const recorded = view.facts.recordedClaims.get(m.id);
  const now = view.facts.claims.get(claimName(view, m));
  return !!m.name && !view.healthy(m) && !!recorded && !!now && now !== recorded;
}

/**
 * 1b. A member whose data is gone, while every other member is healthy and the rest keep quorum:
 * removed through etcd's API (a Warning Event says why), its pod restarted with its new claim
 * discarded, so that the next step adds its ordinal back as a learner, which the pod made again
 * joins on a claim made again empty. One at a time; never
 * while another member is down, a step is under way or quorum would be at stake.
 */
export async function replaceLostMember(view: ClusterView): Promise<MembershipResult | undefined> {
  const lost = view.members.find((m) => dataLost(view, m));
  if (!lost) return undefined;
  const name = view.podName(lost);
  const claim = claimName(view, lost);
  const rest = view.members.filter((m) => m !== lost);
  const healthyRest = rest.filter(view.healthy);
  const needed = quorum(rest.filter((m) => !m.isLearner).length);
  const voters = healthyRest.filter((m) => !m.isLearner);
  const why = `${name} (${hexMemberId(lost.id)}) lost its data: its claim ${claim} is new (uid ${view.facts.claims.get(claim) ?? ''}, it last ran healthy on ${view.facts.recordedClaims.get(lost.id) ?? ''})`;
  const [via] = voters;
  if (healthyRest.length < rest.length || voters.length < needed || !via) {
    const message = `${why}; it is replaced only while every other member is healthy (${healthyRest.length} of ${rest.length})`;
    return view.unchanged({ reason: 'WaitingForHealthyMembers', message }, STEP_POLL_MS * 3);
  }
  // Its pod may have started etcd on the new claim before this step saw it (with the old member
  // list, it joins as the member it replaces): that claim then holds the log of a member removed
  // now, and etcd started on it again would run as that removed member forever, never as the one
  // added back. So the pod goes with its new claim, and both are made again empty. Nothing is
  // lost: the claim is new since the member last ran healthy, and every other member is healthy.
  const pod = livePod(view.facts.context, view.facts.name, name);
  const claimUID = view.facts.claims.get(claim);
  if (!pod?.metadata.uid || !claimUID) {
    const message = `${why}; it is replaced once its pod runs again on the new claim`;
    return view.unchanged({ reason: 'WaitingForMemberPod', message }, STEP_POLL_MS);
  }
  await view.write('RemoveMember', lost, `${why}: removed to be added back empty`, () =>
    removeMember(view.urlOf(via), lost.id),
  );
  return {
    topology: view.formed(rest, view.settledReplicas),
    report: view.report({ reason: 'ReplacingLostMember', message: `${why}; removed, to be added back as a learner` }),
    events: [
      { type: 'Warning', reason: 'MemberDataLost', message: `${why}; removing it to add it back empty` },
      {
        type: 'Normal',
        reason: 'MemberRemoved',
        message: `Removed member ${name}, whose data is gone; it is added back next`,
      },
    ],
    requeueAfterMs: STEP_POLL_MS,
    restartPods: [
      {
        name,
        uid: pod.metadata.uid,
        reason: `${name} was removed from etcd (its data was lost): it starts again on a new, empty claim, as the member added back`,
        discardClaims: [{ name: claim, uid: claimUID }],
      },
    ],
  };
}
