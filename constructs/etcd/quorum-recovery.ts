/**
 * A cluster that lost its quorum for good, recovered from one surviving member — by the user's
 * choice alone (the `recover-from` annotation), since it drops whatever the lost members held
 * that the survivor lacks.
 *
 * etcd's way is `--force-new-cluster` on the survivor: it rewrites its membership to itself alone
 * and goes on with its data. The flag reaches the members through their ConfigMap
 * (`ETCD_FORCE_NEW_CLUSTER`), and etcd acts on it only where there is a write-ahead log, so a
 * member on an empty volume ignores it. The steps, each read again from the cluster at every
 * reconcile (an operator that dies anywhere resumes):
 *
 * 1. `QuorumLost`, the annotation naming a member: acted on only when that member answers, still
 *    runs on the claim it last ran on healthy, and every other member has provably lost its data
 *    (its claim is new, or gone) — members that kept their data could still form the quorum again,
 *    and forcing a cluster beside them would be two clusters. Otherwise `RecoveryRefused`, naming
 *    each member in the way. Accepted: the ConfigMap gets the flag, naming the survivor and its pod
 *    as it is, and the StatefulSet keeps no ordinal above the survivor.
 * 2. Once the ConfigMap says so: that very pod (by uid) is restarted, to read the flag at its start.
 * 3. The survivor answers with a member list (a cluster of one): the flag goes, in a reconcile of
 *    its own — a member added later must never start with it — and the usual steps add the others
 *    back empty, one at a time, as learners.
 */
import type { CacheReads } from '../contract';
import { ordinalOf } from './addresses';
import type { EtcdCluster } from './api';
import type { ClusterView } from './membership';
import { livePod, memberClaimName, memberClaims } from './lost-members';
import { FORCE_NEW_CLUSTER_ENV, RECOVER_FROM_ANNOTATION } from './quorum-recovery-names';
import {
  type EtcdTopology,
  type ForcedStart,
  type MembershipResult,
  membersConfigMapName,
  QUORUM_LOST,
} from './topology';
import type { WithoutMemberList } from './without-member-list';

const STEP_POLL_MS = 1000;

/** The step's reason while a recovery is under way. */
export const RECOVERING_QUORUM = 'RecoveringQuorum';

/** The member a user chose to recover from, if any. */
export function recoverFrom(cluster: EtcdCluster): string | undefined {
  const named = cluster.metadata.annotations?.[RECOVER_FROM_ANNOTATION]?.trim();
  return named === '' ? undefined : named;
}

/**
 * Why recovering from `survivor` would not be safe, or undefined when it is: it must answer and
 * run on the claim it last ran on healthy; every other member the status records must have lost
 * its data (its claim new or gone) — one that kept it may hold writes the survivor lacks.
 */
export function recoveryObstacles(
  cluster: EtcdCluster,
  survivor: string,
  answering: readonly string[],
  claims: ReadonlyMap<string, string>,
): string | undefined {
  const name = cluster.metadata.name;
  if (ordinalOf(name, survivor) === undefined)
    return `${survivor} is not a member of ${name} (members are named ${name}-<ordinal>)`;
  if (!answering.includes(survivor)) return `${survivor} does not answer`;
  const recorded = (cluster.status?.etcdMembers ?? []).flatMap((m) =>
    m.name ? [{ name: m.name, claimUID: m.claimUID }] : [],
  );
  const own = recorded.find((m) => m.name === survivor);
  if (!own?.claimUID || claims.get(memberClaimName(survivor)) !== own.claimUID)
    return `${survivor} does not run on the claim it last ran on healthy (${memberClaimName(survivor)}, uid ${own?.claimUID ?? 'not recorded'}): its data may not be the cluster's`;
  const kept = recorded.filter(
    (m) => m.name !== survivor && (!m.claimUID || claims.get(memberClaimName(m.name)) === m.claimUID),
  );
  return kept.length
    ? keptDataMessage(
        survivor,
        kept.map((m) => m.name),
      )
    : undefined;
}

/** Why members that may keep their data stand in the way, and how a user clears them. */
function keptDataMessage(survivor: string, kept: readonly string[]): string {
  const one = kept.length === 1;
  const claimsToDelete = kept.map((m) => `claim ${memberClaimName(m)}`).join(' and ');
  return `${kept.join(', ')} still ${one ? 'runs' : 'run'} on the claim ${one ? 'it' : 'they'} last ran on healthy, so ${one ? 'its' : 'their'} data may hold writes ${survivor} lacks and could form the quorum again; bring ${one ? 'it' : 'them'} back, or if that data is gone for good, delete ${claimsToDelete} and ${one ? 'its pod' : 'their pods'}`;
}

/**
 * 1. A quorum lost, and the user's choice to recover: refused with the reason (Degraded
 * `RecoveryRefused`, a Warning Event from it), or begun — the ConfigMap gets the flag naming the
 * survivor's pod as it is, and the StatefulSet keeps no ordinal above the survivor (their claims,
 * proven empty, go with them). Undefined when there is no quorum loss or no choice.
 */
export function beginRecovery(
  cluster: EtcdCluster,
  current: EtcdTopology,
  without: WithoutMemberList,
  reads: CacheReads,
): MembershipResult | undefined {
  const survivor = recoverFrom(cluster);
  if (!survivor || without.step.reason !== QUORUM_LOST) return undefined;
  const unchanged = (step: MembershipResult['report']['step'], refused?: MembershipResult['report']['refused']) => ({
    topology: current,
    report: { reachable: false, members: [], step, refused },
    events: [],
    requeueAfterMs: STEP_POLL_MS * 3,
  });
  const obstacle = recoveryObstacles(cluster, survivor, without.answering, memberClaims(cluster, reads).claims);
  if (obstacle) {
    return unchanged(without.step, {
      reason: 'RecoveryRefused',
      message: `not recovering the quorum from ${survivor} (${RECOVER_FROM_ANNOTATION}): ${obstacle}`,
    });
  }
  const pod = livePod(reads, cluster.metadata.name, survivor);
  if (!pod?.metadata.uid)
    return unchanged({ reason: RECOVERING_QUORUM, message: `waiting for ${survivor}'s pod to recover from it` });
  const forcedStart: ForcedStart = { member: survivor, podUID: pod.metadata.uid };
  const lost = (cluster.status?.etcdMembers ?? []).filter((m) => m.name !== survivor).map((m) => m.name);
  const message = `forcing a new cluster from ${survivor}, as ${RECOVER_FROM_ANNOTATION} asks: ${lost.join(', ')} lost their data; ${survivor} restarts with --force-new-cluster, then the others are added back empty`;
  return {
    topology: { ...current, forcedStart, replicas: (ordinalOf(cluster.metadata.name, survivor) ?? 0) + 1 },
    report: { reachable: false, members: [], step: { reason: RECOVERING_QUORUM, message } },
    events: [{ type: 'Warning', reason: 'QuorumRecoveryStarted', message: `Quorum lost: ${message}` }],
    requeueAfterMs: STEP_POLL_MS,
  };
}

/**
 * 2. While the ConfigMap forces a new cluster and no member list answers yet: the survivor's pod
 * of before is restarted (by its uid, after this reconcile's writes), or its new pod waited for.
 * A choice withdrawn before the restart (the annotation removed or changed) undoes the flag.
 */
export function forcingRecovery(
  cluster: EtcdCluster,
  current: EtcdTopology,
  forced: ForcedStart,
  reads: CacheReads,
): MembershipResult {
  const { member } = forced;
  const pod = livePod(reads, cluster.metadata.name, member);
  const notRestarted = pod?.metadata.uid === forced.podUID;
  const report = (message: string) => ({
    reachable: false,
    members: [],
    step: { reason: RECOVERING_QUORUM, message },
  });
  if (notRestarted && recoverFrom(cluster) !== member) {
    const { forcedStart: _, ...withoutFlag } = current;
    return {
      topology: withoutFlag,
      report: report(`the recovery from ${member} was withdrawn before its restart; nothing was forced`),
      events: [{ type: 'Normal', reason: 'QuorumRecoveryWithdrawn', message: `Recovery from ${member} withdrawn` }],
      requeueAfterMs: STEP_POLL_MS,
    };
  }
  if (notRestarted) {
    return {
      topology: current,
      report: report(`restarting ${member} to start with --force-new-cluster`),
      events: [],
      requeueAfterMs: STEP_POLL_MS,
      restartPods: [
        {
          name: member,
          uid: forced.podUID,
          reason: `to start with --force-new-cluster (${FORCE_NEW_CLUSTER_ENV} in ConfigMap ${membersConfigMapName(cluster.metadata.name)}) and recover the quorum from its data`,
        },
      ],
    };
  }
  return {
    topology: current,
    report: report(`waiting for ${member} to start as a cluster of one`),
    events: [],
    requeueAfterMs: STEP_POLL_MS,
  };
}

/**
 * 3. The survivor answers with a member list while the ConfigMap still forces: the quorum is back.
 * The flag goes now, alone — the next reconcile adds the others back — and an Event says so.
 */
export function recoveredQuorum(view: ClusterView, forced: ForcedStart): MembershipResult {
  const members = view.members.map(view.podName).join(', ');
  const message = `Recovered the quorum from ${forced.member} (--force-new-cluster): members now ${members}; the others are added back empty one at a time. Remove the annotation ${RECOVER_FROM_ANNOTATION}`;
  return {
    topology: view.formed(view.members, view.settledReplicas),
    report: view.report({
      reason: 'QuorumRecovered',
      message: `recovered from ${forced.member}; members now ${members}`,
    }),
    events: [{ type: 'Normal', reason: 'QuorumRecovered', message }],
    requeueAfterMs: STEP_POLL_MS,
  };
}
