import {
  BuiltinTypes,
  type CronJob,
  type EventSpec,
  type FinalizeContext,
  type FinalizeOutcome,
  type Observed,
  type Pod,
  type Problem,
  type StatefulSet,
  type Verdict,
} from '../contract';
import type { ControllerDeclaration } from '../core/controller-declaration';
import { DEFAULT_IMAGE } from '../core/kit-image';
import { ConditionList, findCondition } from '../contract/conditions';
import { jobFromCronJob, runFinalJob } from '../core/final-job';
import { renderConstructs } from '../contract/render';
import { livePodNames, podInstance } from '../core/pods';
import {
  BACKUP_LIST_COMPONENT,
  backupListEvents,
  type BackupListing,
  observedBackupListing,
  backupStatusFields,
  backupsToList,
} from '../core/backup-list';
import { type RestoreProgress, setRestored, stillToRestore } from '../core/restore-status';
import { selectorLabels } from '../core/labels';
import { CertManagerTypes } from '../core/cert-manager';
import type { EtcdCluster, EtcdClusterStatus } from './api';
import { etcdClusterKind } from './api';
import { ETCD_CLIENT_PORT, etcdBackupNames, EtcdClusterResources, etcdSelectorLabels } from './etcd-cluster-resources';
import { restoreJobName, snapshotSource } from './etcd-restore';
import type * as Membership from './membership';
import type * as Certificates from './cluster-certificates';
import type { CertificatesOutcome } from './certificates';
import { type EtcdTransport, etcdTransport } from './tls';
import type { CaRotationPhase } from './ca-rotation-names';
import { membershipFields, setAvailable, votersOf } from './membership-status';
import { certificateEvents, secretsNotOwned, tlsRefusal, transportFields } from './tls-status';
import {
  type EtcdTopology,
  madeTransport,
  type MembershipReport,
  observedTopology,
  QUORUM_LOST,
  quorum,
} from './topology';

/** What the membership step found, for the render (the topology) and the status (the report). */
export interface EtcdFacts {
  readonly topology: EtcdTopology;
  readonly report: MembershipReport;
  /** A CA rotation's phase whose member restarts are done: the prepare step moves it on. */
  readonly caRolled?: CaRotationPhase;
}

/** What the prepare step did: the cluster's certificates, with TLS. */
export interface EtcdPrepared {
  readonly certificates?: CertificatesOutcome;
}

/** What an EtcdCluster's status is made from. */
export interface EtcdStatusInput {
  /** What this reconcile did to the cluster's certificates; absent without TLS or when rendered statically. */
  readonly certificates?: CertificatesOutcome;
  /** How the cluster was made, as its members' ConfigMap says; absent before there is one. */
  readonly made?: EtcdTransport;
  readonly statefulSet?: StatefulSet;
  /**
   * The StatefulSet's verdict by the children's rules (`observed.health`): its rollout of the
   * spec, its claims' sizes. Absent (rendered statically): judged by its counts alone.
   */
  readonly statefulSetHealth?: Verdict;
  /** Names of the live member pods. */
  readonly members: string[];
  /** The API server's refusal of a child. */
  readonly applyError?: string;
  /** A member pod or claim Kubernetes cannot make or run. */
  readonly childFailure?: Problem;
  /** What etcd's own API said; absent when rendered statically. */
  readonly membership?: MembershipReport;
  readonly backup?: CronJob;
  /** The finished pods of backup Jobs, whose termination messages name the snapshots. @default none */
  readonly backupPods?: readonly Pod[];
  /** How the listing of the backups already on the backup claim stands. @default nothing listed */
  readonly backupListing?: BackupListing;
  /** How the restore of `spec.restore` stands; absent without one. */
  readonly restore?: RestoreProgress;
  /** Stamps conditions whose status changes. @default the current time */
  readonly now?: Date;
}

/** Membership steps: the phase says Scaling while one is under way. */
const SCALING_STEPS = new Set([
  'AddingMember',
  'WaitingForMember',
  'PromotingLearner',
  'LearnerCatchingUp',
  'PromoteFailed',
  'RemovingMember',
  'ReplacingLostMember',
  'TransferringLeadership',
  'WaitingForQuorum',
  'RecoveringQuorum',
  'QuorumRecovered',
]);

/** How far the cluster is from its spec: what Progressing and the phase are made of. */
interface EtcdProgress {
  readonly want: number;
  readonly ready: number;
  readonly current: number;
  /** A membership step under way, as etcd's API showed it. */
  readonly step?: MembershipReport['step'];
  /** Pods, or etcd's voters, not yet at the requested count. */
  readonly scaling: boolean;
  /** The StatefulSet's rollout or claims still on their way (see `EtcdStatusInput.statefulSetHealth`). */
  readonly rolling?: Verdict;
  /** No step, no scaling, every member ready, the StatefulSet as its spec asks. */
  readonly complete: boolean;
}

/** A new version or size not rolled out yet: its members may all be ready, of the old spec. */
function stillRolling(health: Verdict | undefined): Verdict | undefined {
  return health?.readiness === 'Current' ? undefined : health;
}

function etcdProgress(
  cluster: EtcdCluster,
  sts: StatefulSet | undefined,
  membership?: MembershipReport,
  health?: Verdict,
): EtcdProgress {
  const want = cluster.spec.replicas;
  const ready = sts?.status?.readyReplicas ?? 0;
  const current = sts?.status?.replicas ?? 0;
  const scaling = current !== want || (membership?.reachable === true && votersOf(membership).length !== want);
  const step = membership?.step;
  const rolling = stillRolling(health);
  return { want, ready, current, step, scaling, rolling, complete: !step && !scaling && ready === want && !rolling };
}

/** `Progressing`: the membership step under way, else scaling, waiting, or Complete. */
function setProgressing(list: ConditionList, p: EtcdProgress): void {
  if (p.step) {
    list.set('Progressing', 'True', p.step.reason, p.step.message);
    return;
  }
  if (p.complete) {
    list.set('Progressing', 'False', 'Complete', `all ${p.want} members ready`);
    return;
  }
  if (!p.scaling && p.rolling && p.ready === p.want) {
    list.set('Progressing', 'True', p.rolling.reason, `StatefulSet: ${p.rolling.message}`);
    return;
  }
  const reason = !p.scaling ? 'WaitingForMembers' : p.current < p.want ? 'ScalingUp' : 'ScalingDown';
  list.set('Progressing', 'True', reason, `${p.current} members, ${p.ready} ready, ${p.want} requested`);
}

/** Phases of a cluster that has formed: it does not go back to Creating when a member is down. */
const FORMED_PHASES = new Set<EtcdClusterStatus['phase']>(['Running', 'Scaling', 'Upgrading']);

/**
 * The phase: Failed on a refusal, Scaling or Upgrading during a step, then Scaling; Running once
 * complete, and from then on (a member down is for the conditions to say); else Creating.
 */
function etcdPhase(
  p: EtcdProgress,
  s: { refused: boolean; hasStatefulSet: boolean; restoring: boolean; before?: EtcdClusterStatus['phase'] },
): EtcdClusterStatus['phase'] {
  if (s.refused) return 'Failed';
  if (s.restoring) return 'Restoring';
  if (p.step && SCALING_STEPS.has(p.step.reason)) return 'Scaling';
  if (p.step?.reason === 'Upgrading') return 'Upgrading';
  if (p.scaling && s.hasStatefulSet) return 'Scaling';
  return p.complete || (s.hasStatefulSet && FORMED_PHASES.has(s.before)) ? 'Running' : 'Creating';
}

/** What the backup CronJob and its Jobs report, and where a restored cluster came from. */
function backupFields(cluster: EtcdCluster, input: EtcdStatusInput): Partial<EtcdClusterStatus> {
  const backupJob = cluster.spec.backup ? input.backup : undefined;
  const restore = cluster.spec.restore && snapshotSource(cluster.spec.restore);
  return {
    ...backupStatusFields(cluster.status, input.backupPods ?? [], input.backupListing, cluster.spec.backup?.retention),
    ...(restore ? { restoredFrom: `${restore.claim}/${restore.path}` } : {}),
    ...(backupJob ? { backupCronJob: backupJob.metadata.name } : {}),
    ...(backupJob?.status?.lastSuccessfulTime ? { lastBackupTime: backupJob.status.lastSuccessfulTime } : {}),
  };
}

/**
 * The status an EtcdCluster should show. Pure. With `membership` (what etcd's own API said),
 * availability is a healthy voting quorum, not ready pods.
 */
export function desiredEtcdStatus(cluster: EtcdCluster, input: EtcdStatusInput): EtcdClusterStatus {
  const { statefulSet: sts, members, applyError, childFailure, membership } = input;
  const generation = cluster.metadata.generation ?? 0;
  const list = new ConditionList(cluster.status?.conditions, generation, input.now ?? new Date());
  const progress = etcdProgress(cluster, sts, membership, input.statefulSetHealth);
  const { want, ready, current } = progress;
  setAvailable(list, { want, ready, membership });
  setProgressing(list, progress);
  const restoreFailure = input.restore && setRestored(list, cluster.status?.conditions, input.restore);
  list.degraded(
    [
      applyError !== undefined && { reason: 'InvalidResources', message: applyError },
      restoreFailure,
      membership?.refused,
      tlsRefusal(cluster, input.made),
      secretsNotOwned(input.certificates),
      input.certificates?.problem,
      // Kubernetes accepted the StatefulSet but cannot make its members (only its Events say so),
      // or a member failed; a failed member is replaced at once, so its failure stands until ready.
      ready < want && (childFailure ?? list.reported('PodFailing')),
    ],
    'the StatefulSet and Services match the spec',
  );
  setOddMembers(list, want);
  return {
    phase: etcdPhase(progress, {
      refused: applyError !== undefined || restoreFailure !== undefined,
      hasStatefulSet: sts !== undefined,
      restoring: findCondition(list.conditions, 'Restored')?.status === 'False',
      before: cluster.status?.phase,
    }),
    members,
    ...membershipFields(membership, cluster.status),
    ...transportFields(cluster, input.made, input.certificates),
    ...backupFields(cluster, input),
    replicas: current,
    readyReplicas: ready,
    clientService: `${cluster.metadata.name}-client.${cluster.metadata.namespace}.svc:${ETCD_CLIENT_PORT}`,
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/** `OddMembers`: an even member count tolerates no more failures than one member fewer. */
function setOddMembers(list: ConditionList, want: number): void {
  const q = quorum(want);
  if (want % 2 === 0) {
    list.set(
      'OddMembers',
      'False',
      'EvenMemberCount',
      `${want} members tolerate ${want - q} failure(s), no more than ${want - 1} would; prefer an odd number`,
    );
  } else {
    list.set('OddMembers', 'True', 'OddMemberCount', `${want} members tolerate ${want - q} failure(s)`);
  }
}

/** The EtcdCluster a StatefulSet (named after it) or member claim (`data-<name>-<ordinal>`) belongs to. */
export function etcdClusterOfChild(involved: { kind?: string; name?: string }): string | undefined {
  if (involved.kind === 'StatefulSet') return involved.name;
  if (involved.kind === 'PersistentVolumeClaim') return /^data-(.+)-\d+$/.exec(involved.name ?? '')?.[1];
  return undefined;
}

/**
 * Events speak of the cluster, not of each child: created, and a warning when the member count
 * turns even. Membership steps (member added, promoted, removed; leadership moved) have their
 * own Events from the membership step.
 */
export function etcdEvents(
  cluster: EtcdCluster,
  observed: Observed<EtcdFacts, EtcdPrepared>,
  status: EtcdCluster['status'],
): EventSpec[] {
  if (observed.applyError) return [];
  const name = cluster.metadata.name;
  const events: EventSpec[] = [];
  if (!observed.before.of(BuiltinTypes.StatefulSet, name) && observed.children.of(BuiltinTypes.StatefulSet, name)) {
    events.push({
      type: 'Normal',
      reason: 'Created',
      message: `Created etcd cluster ${name} with ${cluster.spec.replicas} members`,
    });
  }
  events.push(...backupListEvents('snapshot', cluster.status, etcdBackupListing(cluster, observed)));
  events.push(...quorumLostEvents(cluster.status, status));
  events.push(...certificateEvents(observed.prepared?.certificates));
  const now = findCondition(status?.conditions, 'OddMembers');
  if (now?.status === 'False' && findCondition(cluster.status?.conditions, 'OddMembers')?.status !== 'False') {
    events.push({ type: 'Warning', reason: 'EvenMemberCount', message: now.message });
  }
  return events;
}

/** A Warning when the quorum is lost (`Available` turns `QuorumLost`), once. */
function quorumLostEvents(before: EtcdCluster['status'], after: EtcdCluster['status']): EventSpec[] {
  const available = findCondition(after?.conditions, 'Available');
  const was = findCondition(before?.conditions, 'Available');
  if (available?.reason !== QUORUM_LOST || was?.reason === QUORUM_LOST) return [];
  return [{ type: 'Warning', reason: QUORUM_LOST, message: available.message }];
}

/** How the listing of the snapshots already on the backup claim stands (undefined: backups are off). */
function etcdBackupListing(cluster: EtcdCluster, observed: Observed<EtcdFacts>): BackupListing | undefined {
  if (!cluster.spec.backup) return undefined;
  const name = cluster.metadata.name;
  return observedBackupListing(observed, { app: 'etcd', instance: name, claim: etcdBackupNames(name).claim });
}

/** How the restore of `spec.restore` stands: its Jobs (one per member) and their pods. */
function restoreProgress(cluster: EtcdCluster, observed: Observed<EtcdFacts>, pods: readonly Pod[]): RestoreProgress {
  const source = snapshotSource(cluster.spec.restore ?? {});
  const jobs = Array.from({ length: cluster.spec.replicas }, (_, i) =>
    observed.children.of(BuiltinTypes.Job, restoreJobName(cluster.metadata.name, i)),
  );
  return {
    source: `snapshot ${source.path} from PVC ${source.claim}`,
    sourceClaim: source.claim,
    jobs,
    pods,
    failure: observed.health.failure,
  };
}

/** The certificates, loaded on first use at run time: they need node:crypto, which a synth never loads. */
function certificatesModule(): typeof Certificates {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load; the package is CommonJS
  return require('./cluster-certificates') as typeof Certificates;
}

/**
 * The membership step, loaded on first use at run time: it talks to etcd over HTTP and reads the
 * hosts file, none of which a synth needs, so the constructs entry never loads it.
 */
function membershipModule(): typeof Membership {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load; the package is CommonJS
  return require('./membership') as typeof Membership;
}

/**
 * The etcdcluster controller: an EtcdCluster becomes a headless peer Service, a client Service,
 * a StatefulSet and a PodDisruptionBudget. It reads Pods for status, and the Warning Events that
 * say a member's pod or claim cannot be made (for `Degraded`). Member data outlives scale-downs
 * and the EtcdCluster itself: the one claim it deletes is the new claim of a member whose data was
 * lost, with its pod, once that member is removed from etcd (lost-members.ts).
 */
/** Whether deleting an EtcdCluster waits for a last snapshot. */
export function wantsFinalSnapshot(cluster: EtcdCluster): boolean {
  return cluster.spec.backup?.finalSnapshot === true;
}

/**
 * The final snapshot of a deleted EtcdCluster: the scheduled snapshot once more, now — a Job
 * `<name>-final-backup` from the backup CronJob's template (the one the cluster runs), into the
 * kept backup claim (see `runFinalJob`).
 */
export async function finalEtcdSnapshot(cluster: EtcdCluster, context: FinalizeContext): Promise<FinalizeOutcome> {
  if (!wantsFinalSnapshot(cluster)) return { done: true };
  const names = etcdBackupNames(cluster.metadata.name);
  const cronJob =
    context.children.of(BuiltinTypes.CronJob, names.cronJob) ??
    renderConstructs(
      (scope) =>
        new EtcdClusterResources(scope, 'etcd', {
          name: cluster.metadata.name,
          namespace: cluster.metadata.namespace ?? '',
          spec: cluster.spec,
          owner: context.owner,
        }),
    ).find((o) => o.kind === 'CronJob');
  if (!cronJob) throw new Error(`EtcdCluster ${cluster.metadata.name} has backups but renders no CronJob`);
  return runFinalJob(
    {
      job: jobFromCronJob(cronJob, `${cluster.metadata.name}-final-backup`),
      kind: 'EtcdCluster',
      does: `take a snapshot into PVC ${names.claim}`,
      leaves: `the snapshot is on PVC ${names.claim}, which is kept`,
    },
    context,
  );
}

export const etcdClusterController: ControllerDeclaration<EtcdCluster, EtcdFacts, EtcdPrepared> = {
  name: 'etcdcluster',
  image: DEFAULT_IMAGE,
  for: etcdClusterKind,
  owns: [
    BuiltinTypes.Service,
    BuiltinTypes.ConfigMap,
    BuiltinTypes.StatefulSet,
    BuiltinTypes.PodDisruptionBudget,
    BuiltinTypes.NetworkPolicy,
    BuiltinTypes.CronJob,
    BuiltinTypes.PersistentVolumeClaim,
    // The final snapshot (see finalize).
    BuiltinTypes.Job,
  ],
  // The backup CronJob goes when backups are unscheduled, the restore and listing Jobs once done,
  // the NetworkPolicy when switched off (no longer rendered); claims (the members' and the
  // backups') are never pruned.
  deletes: [BuiltinTypes.CronJob, BuiltinTypes.Job, BuiltinTypes.NetworkPolicy],
  // But for one: the new claim a lost member's pod ran on, holding only the removed member's log,
  // discarded with the pod so both are made again empty for the member added back (lost-members.ts).
  discardsClaims: true,
  // Claims: which one each member runs on (a new one means its data is gone).
  reads: [BuiltinTypes.Pod, BuiltinTypes.CoreEvent, BuiltinTypes.PersistentVolumeClaim],
  // The CAs and certificates (with TLS): made, read back and renewed by name, never listed; or
  // cert-manager's Certificates for them (spec.tls.issuerRef), whose Secrets are cert-manager's.
  keeps: [BuiltinTypes.Secret, CertManagerTypes.Certificate],
  external: async (cluster, children, context) => {
    const { reconcileMembership } = membershipModule();
    const { topology, report, events, requeueAfterMs, restartPods, caRolled, outOfReach } = await reconcileMembership(
      cluster,
      children,
      context,
    );
    return {
      facts: { topology, report, ...(caRolled ? { caRolled } : {}) },
      events,
      requeueAfterMs,
      ...(restartPods ? { restartPods } : {}),
      ...(outOfReach ? { outOfReach } : {}),
    };
  },
  // What the membership step last left, as the StatefulSet and members' ConfigMap show it.
  observeExternal: (cluster, children) => ({
    topology: observedTopology(cluster, children),
    report: { reachable: false, members: [] },
  }),
  // Whether a restore is over (`conditions`, only with spec.restore), the backup claim listed, and
  // the transport recorded (read only before the members' ConfigMap says how the cluster was made).
  renderReadsStatus: ['conditions', 'backupsListedFrom', 'transport'],
  // With TLS, the CAs and certificates are issued and renewed once the children are applied.
  prepare: async (api, cluster, children, facts) => {
    if (etcdTransport(cluster, madeTransport(children, cluster.metadata.name)) !== 'TLS') return {};
    const { ensureClusterCertificates } = certificatesModule();
    return { certificates: await ensureClusterCertificates(api, cluster, new Date(), facts?.caRolled) };
  },
  render: (scope, cluster, { owner, external }) =>
    new EtcdClusterResources(scope, 'etcd', {
      name: cluster.metadata.name,
      namespace: cluster.metadata.namespace ?? '',
      spec: cluster.spec,
      owner,
      topology: external?.topology,
      restoring: stillToRestore(cluster),
      listBackups: backupsToList(cluster, cluster.spec.backup && etcdBackupNames(cluster.metadata.name).claim),
      transport: etcdTransport(cluster, external?.topology.made),
    }),
  status: (cluster, observed) => {
    const pods = observed.read(BuiltinTypes.Pod, etcdSelectorLabels(cluster.metadata.name));
    const podsOf = (component: string) =>
      observed.read(
        BuiltinTypes.Pod,
        selectorLabels({ name: 'etcd', instance: cluster.metadata.name, component, managedBy: '' }),
      );
    return desiredEtcdStatus(cluster, {
      statefulSet: observed.children.of(BuiltinTypes.StatefulSet, cluster.metadata.name),
      statefulSetHealth: observed.health.children.find(
        (c) => c.kind === 'StatefulSet' && c.name === cluster.metadata.name,
      ),
      members: livePodNames(pods),
      applyError: observed.applyError,
      // A member whose container cannot run (an image that cannot be pulled, a crash loop), or
      // a claim or pod Kubernetes cannot make or keeps recreating: the children's health.
      childFailure: observed.health.failure,
      now: observed.now,
      membership: observed.external?.report,
      backup: observed.children.of(BuiltinTypes.CronJob, etcdBackupNames(cluster.metadata.name).cronJob),
      backupPods: podsOf('backup'),
      backupListing: etcdBackupListing(cluster, observed),
      restore: cluster.spec.restore && restoreProgress(cluster, observed, podsOf('restore')),
      certificates: observed.prepared?.certificates,
      made: observed.external?.topology.made,
    });
  },
  events: etcdEvents,
  // Only a cluster asking for a final snapshot carries the finalizer.
  needsFinalizer: wantsFinalSnapshot,
  finalize: finalEtcdSnapshot,
  mapReads: { Pod: podInstance(['etcd'], ['member', 'backup', BACKUP_LIST_COMPONENT, 'restore']) },
  failureOwner: etcdClusterOfChild,
};
