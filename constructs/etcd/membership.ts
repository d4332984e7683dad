import { BuiltinTypes, type Children, type ConfigMap, type EventSpec, type StatefulSet } from '../contract';
import { clientURL, memberName, ordinalOf, peerURL } from './addresses';
import type { EtcdCluster } from './api';
import {
  addMember,
  EtcdApiError,
  type EtcdMember,
  type EtcdMemberStatus,
  listMembers,
  memberStatus,
  promoteMember,
  removeMember,
  transferLeadership,
} from './etcd-api';
import { compareVersions, lowestVersion, unsupportedVersionChange } from './versions';

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

/** The topology a cluster starts with: all members at once, bootstrapping together. */
export function bootstrapTopology(cluster: string, namespace: string, replicas: number, version: string): EtcdTopology {
  const initialCluster = Array.from(
    { length: replicas },
    (_, i) => `${memberName(cluster, i)}=${peerURL(cluster, namespace, i)}`,
  ).join(',');
  return { replicas, clusterState: 'new', initialCluster, partition: 0, version };
}

// How soon to look again: while a step is under way, and to notice members' health once settled.
const STEP_POLL_MS = 1000;
const WAIT_POLL_MS = 3000;
const SETTLED_POLL_MS = 30_000;

/** The topology the cluster's StatefulSet and ConfigMap have now. */
function currentTopology(sts: StatefulSet, cm: ConfigMap | undefined, fallback: EtcdTopology): EtcdTopology {
  const image = sts.spec?.template?.spec?.containers?.[0]?.image ?? '';
  return {
    replicas: sts.spec?.replicas ?? fallback.replicas,
    clusterState: cm?.data?.ETCD_INITIAL_CLUSTER_STATE === 'existing' ? 'existing' : 'new',
    initialCluster: cm?.data?.ETCD_INITIAL_CLUSTER ?? fallback.initialCluster,
    partition: sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    version: /:v(\d+\.\d+\.\d+)$/.exec(image)?.[1] ?? fallback.version,
  };
}

/**
 * One step of an etcd cluster's membership and version, read from etcd itself and the cached
 * StatefulSet, never from memory: an operator that crashed at any point resumes from what the
 * member list says. At most one change per call, always with quorum:
 * 1. a member added but not started: wait for it (or, if the spec no longer wants it, remove it);
 * 2. a started learner: promote it once it has caught up with the leader;
 * 3. more members than wanted: remove the highest ordinal, moving leadership away first, only
 *    if the rest keep a healthy quorum; the StatefulSet shrinks after;
 * 4. fewer: add the next ordinal as a learner, only to a cluster whose members are all healthy;
 *    the StatefulSet grows after, and the new pod starts with `existing`;
 * 5. settled: roll a new version member by member, highest ordinal first, each only once every
 *    member is healthy; downgrades across a minor and skipped minors are refused.
 */
export async function reconcileMembership(cluster: EtcdCluster, children: Children): Promise<MembershipResult> {
  const name = cluster.metadata.name;
  const namespace = cluster.metadata.namespace!;
  const want = cluster.spec.replicas;
  const wantVersion = cluster.spec.version;
  const sts = children.of(BuiltinTypes.StatefulSet, name);
  const cm = children.of(BuiltinTypes.ConfigMap, membersConfigMapName(name));
  const bootstrap = bootstrapTopology(name, namespace, want, wantVersion);
  if (!sts) {
    return {
      topology: bootstrap,
      report: {
        reachable: false,
        members: [],
        step: { reason: 'Bootstrapping', message: `starting ${want} members together` },
      },
      events: [],
      requeueAfterMs: WAIT_POLL_MS,
    };
  }
  const current = currentTopology(sts, cm, bootstrapTopology(name, namespace, sts.spec?.replicas ?? want, wantVersion));

  const probe = Array.from({ length: Math.max(current.replicas, want, 1) }, (_, i) => clientURL(name, namespace, i));
  const members = await firstAnswer(probe, listMembers);
  if (!members) {
    const reason = current.clusterState === 'new' ? 'Bootstrapping' : 'MembersUnreachable';
    return {
      topology: current,
      report: {
        reachable: false,
        members: [],
        step: { reason, message: `no member answers with a quorum's member list (asked ${probe.join(', ')})` },
      },
      events: [],
      requeueAfterMs: WAIT_POLL_MS,
    };
  }

  // Once per member: an unstarted one is found by its peer URL, which may read the hosts file.
  const ordinals = new Map<string, number | undefined>();
  const ordinal = (m: EtcdMember) => {
    if (!ordinals.has(m.id)) {
      ordinals.set(
        m.id,
        (m.name ? ordinalOf(name, m.name) : undefined) ??
          probeOrdinals(Math.max(current.replicas, want, members.length) + 1).find((i) =>
            m.peerURLs.includes(peerURL(name, namespace, i)),
          ),
      );
    }
    return ordinals.get(m.id);
  };
  const urlOf = (m: EtcdMember) => {
    const i = ordinal(m);
    return i !== undefined ? clientURL(name, namespace, i) : m.clientURLs[0];
  };
  const statuses = new Map<string, EtcdMemberStatus | undefined>(
    await Promise.all(
      members.map(async (m) => {
        const url = m.name ? urlOf(m) : undefined;
        return [m.id, url ? await memberStatus(url, 1500).catch(() => undefined) : undefined] as const;
      }),
    ),
  );
  const byOrdinal = (a: EtcdMember, b: EtcdMember) => (ordinal(a) ?? Infinity) - (ordinal(b) ?? Infinity);
  const healthy = (m: EtcdMember) => {
    const s = statuses.get(m.id);
    return !!s && s.errors.length === 0 && s.leader !== '0';
  };
  const leaderId = [...statuses.values()].find((s) => s && s.leader !== '0')?.leader;
  const podName = (m: EtcdMember) => m.name || (ordinal(m) !== undefined ? memberName(name, ordinal(m)!) : m.id);
  const report = (step?: MembershipReport['step'], refused?: MembershipReport['refused']): MembershipReport => ({
    reachable: true,
    members: [...members].sort(byOrdinal).map((m) => ({
      name: podName(m),
      id: m.id,
      learner: m.isLearner,
      started: !!m.name,
      healthy: healthy(m),
      leader: m.id === leaderId,
      version: statuses.get(m.id)?.version || undefined,
    })),
    step,
    refused,
    version: lowestVersion(members.map((m) => statuses.get(m.id)?.version).filter((v): v is string => !!v)),
  });
  /** The topology once the cluster has formed: every pod starts as `existing` with these members. */
  const formed = (
    list: readonly EtcdMember[],
    replicas: number,
    overrides: Partial<EtcdTopology> = {},
  ): EtcdTopology => ({
    ...current,
    replicas,
    clusterState: 'existing',
    // In ordinal order, so the ConfigMap does not change with the order etcd lists members in.
    initialCluster: [...list]
      .sort(byOrdinal)
      .map((m) => `${podName(m)}=${m.peerURLs[0]}`)
      .join(','),
    ...overrides,
  });
  const highest = (list: readonly EtcdMember[]) => Math.max(-1, ...list.map((m) => ordinal(m) ?? -1));
  const healthyVoter = members.find((m) => !m.isLearner && healthy(m));
  const via = healthyVoter ? urlOf(healthyVoter) : probe[0];
  const events: EventSpec[] = [];

  // 1. A member added but not started (its pod has not run etcd yet).
  const unstarted = members.filter((m) => !m.name).sort((a, b) => (ordinal(b) ?? -1) - (ordinal(a) ?? -1));
  if (unstarted.length) {
    const m = unstarted[0];
    const i = ordinal(m);
    if (i !== undefined && i >= want && i === highest(members)) {
      await removeMember(via, m.id);
      const rest = members.filter((x) => x !== m);
      events.push({
        type: 'Normal',
        reason: 'MemberRemoved',
        message: `Removed member ${podName(m)}, which never started: the spec asks for ${want} members`,
      });
      return {
        topology: formed(rest, i),
        report: report({ reason: 'RemovingMember', message: `removed ${podName(m)}, which had not started` }),
        events,
        requeueAfterMs: STEP_POLL_MS,
      };
    }
    return {
      topology: formed(members, Math.max(current.replicas, (i ?? 0) + 1)),
      report: report({
        reason: 'WaitingForMember',
        message: `member ${podName(m)} was added and has not started yet; its pod must run etcd before the next step`,
      }),
      events,
      requeueAfterMs: WAIT_POLL_MS,
    };
  }
  const settledReplicas = highest(members) + 1;

  // 2. A started learner: promote it once it has caught up.
  const learner = members.find((m) => m.isLearner);
  if (learner) {
    try {
      await promoteMember(via, learner.id);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const reason = /in sync|not ready|too many/i.test(message) ? 'LearnerCatchingUp' : 'PromoteFailed';
      return {
        topology: formed(members, settledReplicas),
        report: report({ reason, message: `learner ${podName(learner)} is not promoted yet: ${message}` }),
        events,
        requeueAfterMs: WAIT_POLL_MS,
      };
    }
    events.push({
      type: 'Normal',
      reason: 'MemberPromoted',
      message: `Promoted learner ${podName(learner)} to a voting member`,
    });
    return {
      topology: formed(members, settledReplicas),
      report: report({ reason: 'PromotingLearner', message: `promoted ${podName(learner)}` }),
      events,
      requeueAfterMs: STEP_POLL_MS,
    };
  }

  // 3. Too many members: remove the highest ordinal, with quorum kept.
  if (members.length > want) {
    const victim = members.find((m) => ordinal(m) === highest(members)) ?? members[members.length - 1];
    const rest = members.filter((m) => m !== victim);
    const healthyRest = rest.filter(healthy);
    const needed = quorum(rest.length);
    if (healthyRest.length < needed) {
      return {
        topology: formed(members, settledReplicas),
        report: report({
          reason: 'WaitingForQuorum',
          message: `removing ${podName(victim)} would leave ${healthyRest.length} healthy of ${rest.length} members; it needs ${needed}`,
        }),
        events,
        requeueAfterMs: WAIT_POLL_MS,
      };
    }
    if (victim.id === leaderId) {
      const target = healthyRest[0];
      await transferLeadership(urlOf(victim), target.id);
      events.push({
        type: 'Normal',
        reason: 'LeadershipTransferred',
        message: `Moved leadership from ${podName(victim)} to ${podName(target)} before removing ${podName(victim)}`,
      });
      return {
        topology: formed(members, settledReplicas),
        report: report({
          reason: 'TransferringLeadership',
          message: `moved leadership to ${podName(target)} before removing ${podName(victim)}`,
        }),
        events,
        requeueAfterMs: STEP_POLL_MS,
      };
    }
    await removeMember(urlOf(healthyRest[0]), victim.id);
    events.push({
      type: 'Normal',
      reason: 'MemberRemoved',
      message: `Removed member ${podName(victim)} (${rest.length} members remain)`,
    });
    return {
      topology: formed(rest, highest(rest) + 1),
      report: report({
        reason: 'RemovingMember',
        message: `removed ${podName(victim)}; ${rest.length} members remain`,
      }),
      events,
      requeueAfterMs: STEP_POLL_MS,
    };
  }

  // 4. Too few: add the next ordinal as a learner, to a healthy cluster only.
  if (members.length < want) {
    const sick = members.filter((m) => !healthy(m));
    if (sick.length) {
      return {
        topology: formed(members, settledReplicas),
        report: report({
          reason: 'WaitingForHealthyMembers',
          message: `${sick.map(podName).join(', ')} not healthy; a member is added only when all are`,
        }),
        events,
        requeueAfterMs: WAIT_POLL_MS,
      };
    }
    const used = new Set(members.map(ordinal));
    const next = probeOrdinals(members.length + 1).find((i) => !used.has(i))!;
    // Learners (etcd >= 3.4) replicate without voting until promoted, so a slow or failing new
    // member never counts against quorum; older releases add a voting member.
    let added: EtcdMember;
    try {
      added = await addMember(
        via,
        peerURL(name, namespace, next),
        supportsLearners(report().version ?? current.version),
      );
    } catch (err) {
      // etcd's strict reconfiguration check: it adds a member only once every voting member has
      // been connected for 5 s (e.g. just after a promotion). A wait, not a failure.
      if (!(err instanceof EtcdApiError && err.message.includes('unhealthy cluster'))) throw err;
      return {
        topology: formed(members, settledReplicas),
        report: report({
          reason: 'WaitingForHealthyMembers',
          message: `etcd adds a member only once every voting member has been connected for a while: ${err.message}`,
        }),
        events,
        requeueAfterMs: STEP_POLL_MS,
      };
    }
    const withNew = [...members, { ...added, name: memberName(name, next) }];
    events.push({
      type: 'Normal',
      reason: 'MemberAdded',
      message: added.isLearner
        ? `Added member ${memberName(name, next)} as a learner; it is promoted once it has caught up`
        : `Added member ${memberName(name, next)}`,
    });
    return {
      topology: formed(withNew, Math.max(settledReplicas, next + 1)),
      report: report({
        reason: 'AddingMember',
        message: `added ${memberName(name, next)}${added.isLearner ? ' as a learner' : ''}; its pod starts with the existing cluster`,
      }),
      events,
      requeueAfterMs: STEP_POLL_MS,
    };
  }

  // 5. Membership settled: the version, member by member.
  const running = report().version;
  const refused = running ? unsupportedVersionChange(running, wantVersion) : undefined;
  if (refused) {
    return {
      topology: formed(members, settledReplicas),
      report: report(undefined, refused),
      events,
      requeueAfterMs: SETTLED_POLL_MS,
    };
  }
  const behind = members.filter((m) => statuses.get(m.id)?.version !== wantVersion);
  if (!behind.length && current.version === wantVersion) {
    return {
      topology: formed(members, settledReplicas, { partition: 0 }),
      report: report(),
      events,
      requeueAfterMs: SETTLED_POLL_MS,
    };
  }
  const nextToRoll = highest(behind);
  const allHealthy = members.every(healthy);
  // The template changes in this very apply, with a partition that lets only one pod roll. Once
  // rolling, the partition only ever comes down: raising it again would recreate a member that
  // is restarting at the old version.
  const partition =
    current.version !== wantVersion
      ? allHealthy
        ? nextToRoll
        : settledReplicas
      : allHealthy
        ? Math.min(current.partition, nextToRoll)
        : current.partition;
  const step = allHealthy
    ? {
        reason: 'Upgrading',
        message: `rolling to ${wantVersion}: ${memberName(name, nextToRoll)} next, ${members.length - behind.length} of ${members.length} members done`,
      }
    : {
        reason: 'WaitingForHealthyMembers',
        message: `rolling to ${wantVersion}: waiting for ${members
          .filter((m) => !healthy(m))
          .map(podName)
          .join(', ')} to be healthy before the next member`,
      };
  return {
    topology: formed(members, settledReplicas, { version: wantVersion, partition: Math.max(0, partition) }),
    report: report(step),
    events,
    requeueAfterMs: WAIT_POLL_MS,
  };
}

function supportsLearners(version: string): boolean {
  return compareVersions(version, '3.4.0') >= 0;
}

/** The votes an etcd cluster of `members` voting members needs for quorum. */
export function quorum(members: number): number {
  return Math.floor(members / 2) + 1;
}

function probeOrdinals(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The first answer of `call` over `urls`, in order; undefined when none answers. */
async function firstAnswer<T>(urls: readonly string[], call: (url: string) => Promise<T>): Promise<T | undefined> {
  for (const url of urls) {
    try {
      return await call(url);
    } catch {
      // Down, a learner, or cut off from the quorum: ask the next.
    }
  }
  return undefined;
}
