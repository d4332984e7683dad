import { stillToRestore } from '../core/restore-status';
import { BuiltinTypes, type Children, type EventSpec, type ExternalContext } from '../contract';
import { memberName, ordinalOf } from './addresses';
import { clientURL, peerURL } from './member-hosts';
import {
  type EtcdTopology,
  madeTransport,
  type MembershipReport,
  type MembershipResult,
  observedTopology,
  quorum,
} from './topology';
import { defragmentOne } from './defragmentation';
import { rollCaTrust } from './ca-rotation';
import type { ClusterFacts } from './cluster-facts';
import { foreignMembers } from './foreign-members';
import { claimRecord, memberClaims, replaceLostMember } from './lost-members';
import { noMemberList } from './without-member-list';
import { recoveredQuorum } from './quorum-recovery';
import type { EtcdCluster } from './api';
import { etcdTransport } from './tls';
import { memberEndpoints } from './member-endpoints';
import {
  addMember,
  type EtcdEndpoint,
  EtcdApiError,
  firstAnswer,
  type EtcdMember,
  type EtcdMemberStatus,
  listMembers,
  memberStatus,
  promoteMember,
  removeMember,
  transferLeadership,
} from './etcd-api';
import { compareVersions, lowestVersion, unsupportedVersionChange } from './versions';

// How soon to look again: while a step is under way, and to notice members' health once settled.
const STEP_POLL_MS = 1000;
const WAIT_POLL_MS = 3000;
const SETTLED_POLL_MS = 30_000;

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
 * 5. settled: a rotation of the CAs under way restarts its members one at a time (ca-rotation.ts);
 * 6. roll a new version member by member, highest ordinal first, each only once every member is
 *    healthy; downgrades across a minor and skipped minors are refused.
 */
export async function reconcileMembership(
  cluster: EtcdCluster,
  children: Children,
  context: ExternalContext,
): Promise<MembershipResult> {
  const name = cluster.metadata.name;
  // A namespaced kind: the API server always sets it.
  const namespace = cluster.metadata.namespace ?? '';
  const { replicas: want, version: wantVersion } = cluster.spec;
  const transport = etcdTransport(cluster, madeTransport(children, name));
  const current = observedTopology(cluster, children, (i) => peerURL(name, namespace, i, transport));
  if (!children.of(BuiltinTypes.StatefulSet, name)) {
    const step = stillToRestore(cluster)
      ? { reason: 'Restoring', message: `seeding ${want} members' volumes from the snapshot before any starts` }
      : { reason: 'Bootstrapping', message: `starting ${want} members together` };
    return {
      topology: current,
      report: { reachable: false, members: [], step },
      events: [],
      requeueAfterMs: WAIT_POLL_MS,
    };
  }

  const endpoints = await memberEndpoints(cluster, transport, context, Math.max(current.replicas, want, 1));
  if ('waiting' in endpoints) {
    const report = { reachable: false, members: [], step: endpoints.waiting };
    return { topology: current, report, events: [], requeueAfterMs: STEP_POLL_MS };
  }
  const { probe, tls } = endpoints;
  const members = await firstAnswer(probe, listMembers);
  if (!members) return noMemberList(cluster, current, probe, context);
  const claims = memberClaims(cluster, context);
  const facts = { name, namespace, want, wantVersion, current, members, context, ...claims };
  const view = await ClusterView.observe({ ...facts, probe, transport, tls });
  // A recovery's flag goes as soon as a member list answers, before any other step (quorum-recovery.ts).
  if (current.forcedStart) return recoveredQuorum(view, current.forcedStart);
  return (
    foreignMembers(view) ??
    (await finishUnstartedMember(view)) ??
    (await replaceLostMember(view)) ??
    (await promoteLearner(view)) ??
    (await removeExtraMember(view)) ??
    (await addMissingMember(view)) ??
    (await defragmentOne(view, cluster.spec.defragmentation)) ??
    (await rollCaTrust(view)) ??
    rollVersion(view)
  );
}

/**
 * The cluster as one reconcile sees it: the member list with each member's ordinal, health and
 * version, and the topology and report a step returns.
 */
export class ClusterView {
  /** Once per member: an unstarted one is found by its peer URL, which may read the hosts file. */
  private readonly ordinals = new Map<string, number | undefined>();

  static async observe(facts: ClusterFacts): Promise<ClusterView> {
    const view = new ClusterView(facts, new Map());
    const answers = await Promise.all(
      facts.members.map(async (m) => {
        const url = m.name ? view.urlOf(m) : undefined;
        return url ? await memberStatus(url, 1500).catch(() => undefined) : undefined;
      }),
    );
    // In member-list order, so the leader is read from the first member that names one.
    facts.members.forEach((m, i) => view.statuses.set(m.id, answers[i]));
    return view;
  }

  private constructor(
    readonly facts: ClusterFacts,
    private readonly statuses: Map<string, EtcdMemberStatus | undefined>,
  ) {}

  get members(): readonly EtcdMember[] {
    return this.facts.members;
  }

  /**
   * A write to etcd's member API through the reconcile's gate: not made once the reconcile must
   * stop (shutdown, the lease lost), and recorded among its writes.
   */
  write<T>(action: string, target: EtcdMember | string, reason: string, run: () => Promise<T>): Promise<T> {
    const name = typeof target === 'string' ? target : this.podName(target);
    return this.facts.context.write({ system: 'etcd', action, target: name, reason }, run);
  }

  /** Whether the reconcile was told to stop: an error then is that, not etcd's answer. */
  get stopping(): boolean {
    return this.facts.context.signal.aborted;
  }

  ordinal(m: EtcdMember): number | undefined {
    const { name, namespace, current, want } = this.facts;
    if (!this.ordinals.has(m.id)) {
      const byPeerURL = () =>
        probeOrdinals(Math.max(current.replicas, want, this.members.length) + 1).find((i) =>
          m.peerURLs.includes(peerURL(name, namespace, i, this.facts.transport)),
        );
      this.ordinals.set(m.id, (m.name ? ordinalOf(name, m.name) : undefined) ?? byPeerURL());
    }
    return this.ordinals.get(m.id);
  }

  urlOf(m: EtcdMember): EtcdEndpoint {
    const i = this.ordinal(m);
    const { name, namespace, transport, tls } = this.facts;
    return { url: i !== undefined ? clientURL(name, namespace, i, transport) : (m.clientURLs[0] ?? ''), tls };
  }

  readonly healthy = (m: EtcdMember): boolean => {
    const s = this.statuses.get(m.id);
    return !!s && s.errors.length === 0 && s.leader !== '0';
  };

  versionOf(m: EtcdMember): string | undefined {
    return this.statuses.get(m.id)?.version;
  }

  /** Its database file's size and the part in use, as it last said them. */
  sizesOf(m: EtcdMember): { dbSizeBytes?: number; dbSizeInUseBytes?: number } {
    const s = this.statuses.get(m.id);
    return s?.dbSize ? { dbSizeBytes: s.dbSize, dbSizeInUseBytes: s.dbSizeInUse } : {};
  }

  get leaderId(): string | undefined {
    return [...this.statuses.values()].find((s) => s && s.leader !== '0')?.leader;
  }

  readonly podName = (m: EtcdMember): string => {
    const i = this.ordinal(m);
    return m.name || (i !== undefined ? memberName(this.facts.name, i) : m.id);
  };

  readonly byOrdinal = (a: EtcdMember, b: EtcdMember): number =>
    (this.ordinal(a) ?? Infinity) - (this.ordinal(b) ?? Infinity);

  highest(list: readonly EtcdMember[]): number {
    return Math.max(-1, ...list.map((m) => this.ordinal(m) ?? -1));
  }

  /** StatefulSet replicas once membership is settled: up to the highest member ordinal. */
  get settledReplicas(): number {
    return this.highest(this.members) + 1;
  }

  /** Where to send a membership change: a healthy voting member, else the first probed. */
  get via(): EtcdEndpoint {
    const healthyVoter = this.members.find((m) => !m.isLearner && this.healthy(m));
    return healthyVoter ? this.urlOf(healthyVoter) : (this.facts.probe[0] ?? '');
  }

  /** The oldest version a member reports: what the cluster runs. */
  get runningVersion(): string | undefined {
    return lowestVersion(this.members.map((m) => this.versionOf(m)).filter((v): v is string => !!v));
  }

  report(step?: MembershipReport['step'], refused?: MembershipReport['refused']): MembershipReport {
    const leaderId = this.leaderId;
    return {
      reachable: true,
      members: [...this.members].sort(this.byOrdinal).map((m) => ({
        name: this.podName(m),
        id: m.id,
        learner: m.isLearner,
        started: !!m.name,
        healthy: this.healthy(m),
        leader: m.id === leaderId,
        // An empty version (a member that has not said) is no version.
        version: this.versionOf(m) === '' ? undefined : this.versionOf(m),
        ...this.sizesOf(m),
        ...claimRecord(this, m),
      })),
      step,
      refused,
      version: this.runningVersion,
    };
  }

  /** The topology once the cluster has formed: every pod starts as `existing` with these members. */
  formed(list: readonly EtcdMember[], replicas: number, overrides: Partial<EtcdTopology> = {}): EtcdTopology {
    // A recovery's flag never outlives the member list answering (see quorum-recovery.ts).
    const { forcedStart: _forced, ...current } = this.facts.current;
    return {
      ...current,
      replicas,
      clusterState: 'existing',
      // In ordinal order, so the ConfigMap does not change with the order etcd lists members in.
      initialCluster: [...list]
        .sort(this.byOrdinal)
        .map((m) => `${this.podName(m)}=${m.peerURLs[0] ?? ''}`)
        .join(','),
      ...overrides,
    };
  }

  /** A step's result with the members as they are, at the settled size. */
  unchanged(step: MembershipReport['step'], requeueAfterMs: number, events: EventSpec[] = []): MembershipResult {
    return {
      topology: this.formed(this.members, this.settledReplicas),
      report: this.report(step),
      events,
      requeueAfterMs,
    };
  }
}

/** 1. A member added but not started (its pod has not run etcd yet): wait, or remove it if unwanted. */
async function finishUnstartedMember(view: ClusterView): Promise<MembershipResult | undefined> {
  const { members } = view;
  const [m] = members.filter((x) => !x.name).sort((a, b) => (view.ordinal(b) ?? -1) - (view.ordinal(a) ?? -1));
  if (!m) return undefined;
  const i = view.ordinal(m);
  const { want, current } = view.facts;
  if (i !== undefined && i >= want && i === view.highest(members)) {
    await view.write('RemoveMember', m, `it never started, and the spec asks for ${want} members`, () =>
      removeMember(view.via, m.id),
    );
    const message = `Removed member ${view.podName(m)}, which never started: the spec asks for ${want} members`;
    return {
      topology: view.formed(
        members.filter((x) => x !== m),
        i,
      ),
      report: view.report({ reason: 'RemovingMember', message: `removed ${view.podName(m)}, which had not started` }),
      events: [{ type: 'Normal', reason: 'MemberRemoved', message }],
      requeueAfterMs: STEP_POLL_MS,
    };
  }
  return {
    topology: view.formed(members, Math.max(current.replicas, (i ?? 0) + 1)),
    report: view.report({
      reason: 'WaitingForMember',
      message: `member ${view.podName(m)} was added and has not started yet; its pod must run etcd before the next step`,
    }),
    events: [],
    requeueAfterMs: WAIT_POLL_MS,
  };
}

/** 2. A started learner: promote it once it has caught up. */
async function promoteLearner(view: ClusterView): Promise<MembershipResult | undefined> {
  const learner = view.members.find((m) => m.isLearner);
  if (!learner) return undefined;
  const name = view.podName(learner);
  try {
    await view.write('PromoteLearner', learner, 'a learner is promoted once it has caught up', () =>
      promoteMember(view.via, learner.id),
    );
  } catch (err) {
    if (view.stopping) throw err;
    const message = err instanceof Error ? err.message : String(err);
    const reason = /in sync|not ready|too many/i.test(message) ? 'LearnerCatchingUp' : 'PromoteFailed';
    return view.unchanged({ reason, message: `learner ${name} is not promoted yet: ${message}` }, WAIT_POLL_MS);
  }
  return view.unchanged({ reason: 'PromotingLearner', message: `promoted ${name}` }, STEP_POLL_MS, [
    { type: 'Normal', reason: 'MemberPromoted', message: `Promoted learner ${name} to a voting member` },
  ]);
}

/** 3. Too many members: remove the highest ordinal, with quorum kept and leadership moved away first. */
async function removeExtraMember(view: ClusterView): Promise<MembershipResult | undefined> {
  const { members } = view;
  if (members.length <= view.facts.want) return undefined;
  const victim = members.find((m) => view.ordinal(m) === view.highest(members)) ?? members.at(-1);
  if (!victim) return undefined;
  const name = view.podName(victim);
  const rest = members.filter((m) => m !== victim);
  const healthyRest = rest.filter(view.healthy);
  const needed = quorum(rest.length);
  const [target] = healthyRest;
  if (!target || healthyRest.length < needed) {
    const message = `removing ${name} would leave ${healthyRest.length} healthy of ${rest.length} members; it needs ${needed}`;
    return view.unchanged({ reason: 'WaitingForQuorum', message }, WAIT_POLL_MS);
  }
  if (victim.id === view.leaderId) {
    await view.write('TransferLeadership', victim, `moved to ${view.podName(target)} before ${name} is removed`, () =>
      transferLeadership(view.urlOf(victim), target.id),
    );
    const to = view.podName(target);
    return view.unchanged(
      { reason: 'TransferringLeadership', message: `moved leadership to ${to} before removing ${name}` },
      STEP_POLL_MS,
      [
        {
          type: 'Normal',
          reason: 'LeadershipTransferred',
          message: `Moved leadership from ${name} to ${to} before removing ${name}`,
        },
      ],
    );
  }
  await view.write('RemoveMember', victim, `the spec asks for ${view.facts.want} members`, () =>
    removeMember(view.urlOf(target), victim.id),
  );
  return {
    topology: view.formed(rest, view.highest(rest) + 1),
    report: view.report({ reason: 'RemovingMember', message: `removed ${name}; ${rest.length} members remain` }),
    events: [
      { type: 'Normal', reason: 'MemberRemoved', message: `Removed member ${name} (${rest.length} members remain)` },
    ],
    requeueAfterMs: STEP_POLL_MS,
  };
}

/** 4. Too few: add the next ordinal as a learner, to a healthy cluster only. */
async function addMissingMember(view: ClusterView): Promise<MembershipResult | undefined> {
  const { members } = view;
  const { name, namespace, want, current } = view.facts;
  if (members.length >= want) return undefined;
  const sick = members.filter((m) => !view.healthy(m));
  if (sick.length) {
    const message = `${sick.map(view.podName).join(', ')} not healthy; a member is added only when all are`;
    return view.unchanged({ reason: 'WaitingForHealthyMembers', message }, WAIT_POLL_MS);
  }
  const used = new Set(members.map((m) => view.ordinal(m)));
  // Of members.length + 1 ordinals, at least one is free.
  const next = probeOrdinals(members.length + 1).find((i) => !used.has(i)) ?? members.length;
  const newName = memberName(name, next);
  // Learners (etcd >= 3.4) replicate without voting until promoted, so a slow or failing new
  // member never counts against quorum; older releases add a voting member.
  let added: EtcdMember;
  try {
    const asLearner = supportsLearners(view.runningVersion ?? current.version);
    added = await view.write('AddMember', newName, `the spec asks for ${want} members`, () =>
      addMember(view.via, peerURL(name, namespace, next, view.facts.transport), asLearner),
    );
  } catch (err) {
    // etcd's strict reconfiguration check: it adds a member only once every voting member has
    // been connected for 5 s (e.g. just after a promotion). A wait, not a failure.
    if (!(err instanceof EtcdApiError && err.message.includes('unhealthy cluster'))) throw err;
    const message = `etcd adds a member only once every voting member has been connected for a while: ${err.message}`;
    return view.unchanged({ reason: 'WaitingForHealthyMembers', message }, STEP_POLL_MS);
  }
  const withNew = [...members, { ...added, name: newName }];
  const learner = added.isLearner ? ' as a learner' : '';
  return {
    topology: view.formed(withNew, Math.max(view.settledReplicas, next + 1)),
    report: view.report({
      reason: 'AddingMember',
      message: `added ${newName}${learner}; its pod starts with the existing cluster`,
    }),
    events: [
      {
        type: 'Normal',
        reason: 'MemberAdded',
        message: added.isLearner
          ? `Added member ${newName} as a learner; it is promoted once it has caught up`
          : `Added member ${newName}`,
      },
    ],
    requeueAfterMs: STEP_POLL_MS,
  };
}

/** 5. Membership settled: the version, member by member, highest ordinal first. */
function rollVersion(view: ClusterView): MembershipResult {
  const { members, settledReplicas } = view;
  const { name, wantVersion, current } = view.facts;
  const running = view.runningVersion;
  const refused = running ? unsupportedVersionChange(running, wantVersion) : undefined;
  if (refused) {
    const topology = view.formed(members, settledReplicas);
    return { topology, report: view.report(undefined, refused), events: [], requeueAfterMs: SETTLED_POLL_MS };
  }
  // Members known to run another version: one that does not answer (down, crash-looping) says
  // nothing of a rollout, and a status naming one that is not under way would mislead.
  const behind = members.filter((m) => {
    const v = view.versionOf(m);
    return !!v && v !== wantVersion;
  });
  if (!behind.length && current.version === wantVersion && current.partition === 0) {
    const topology = view.formed(members, settledReplicas, { partition: 0 });
    const settled = members.every(view.healthy);
    return { topology, report: view.report(), events: [], requeueAfterMs: settled ? SETTLED_POLL_MS : WAIT_POLL_MS };
  }
  const nextToRoll = view.highest(behind);
  const allHealthy = members.every(view.healthy);
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
  const waitingFor = members.filter((m) => !view.healthy(m)).map(view.podName);
  const done = members.filter((m) => view.versionOf(m) === wantVersion).length;
  const step = allHealthy
    ? {
        reason: 'Upgrading',
        message: `rolling to ${wantVersion}: ${memberName(name, nextToRoll)} next, ${done} of ${members.length} members done`,
      }
    : {
        reason: 'WaitingForHealthyMembers',
        message: `rolling to ${wantVersion}: waiting for ${waitingFor.join(', ')} to be healthy before the next member`,
      };
  return {
    topology: view.formed(members, settledReplicas, { version: wantVersion, partition: Math.max(0, partition) }),
    report: view.report(step),
    events: [],
    requeueAfterMs: WAIT_POLL_MS,
  };
}

function supportsLearners(version: string): boolean {
  return compareVersions(version, '3.4.0') >= 0;
}

function probeOrdinals(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
