/**
 * Whether a child is ready, still on its way, or failed: one set of rules for every child a kind
 * makes, in the manner of kstatus (sigs.k8s.io/cli-utils), so the kit's kinds and a user's say
 * the same thing about the same child. Pure functions of the objects as cached.
 */
import { claimSizeVerdict } from './claim-sizes';
import { compareText } from './compare';
import type { Problem } from './declaration';
import { isJsonObject } from './json';
import { podProblem, waitsForClaims } from './pod-problems';
import type {
  DaemonSet,
  Deployment,
  Ingress,
  Job,
  KubeObject,
  PersistentVolumeClaim,
  Pod,
  ReplicaSet,
  Service,
  StatefulSet,
  WorkloadCondition,
} from './objects';

/**
 * `Current`: as its spec asks (a workload with every replica updated and available, a Job
 * complete, a claim bound); `InProgress`: on its way there; `Failed`: it will not get there
 * without a change (a rollout past its deadline, a Job out of retries, a claim lost).
 */
export type Readiness = 'Current' | 'InProgress' | 'Failed';

/** What the rules make of one object. */
export interface Verdict {
  readonly readiness: Readiness;
  /** CamelCase, e.g. `RollingOut`, `JobFailed`, `ClaimPending`. */
  readonly reason: string;
  readonly message: string;
}

/** A child's verdict, with the child it is about. */
export interface ChildHealth extends Verdict {
  readonly kind: string;
  readonly name: string;
}

const current = (message: string): Verdict => ({ readiness: 'Current', reason: 'Current', message });
const inProgress = (reason: string, message: string): Verdict => ({ readiness: 'InProgress', reason, message });
const failed = (reason: string, message: string): Verdict => ({ readiness: 'Failed', reason, message });

/** The verdict on one object: the rule of its type, or the generic rule of conditions. */
export function childHealth(object: KubeObject): ChildHealth {
  const kind = object.kind ?? '';
  const name = object.metadata.name ?? '';
  return { kind, name, ...verdictOf(object) };
}

function verdictOf(object: KubeObject): Verdict {
  if (object.metadata.deletionTimestamp) return inProgress('Terminating', 'being deleted');
  const rule = RULES[`${groupOf(object.apiVersion)}/${object.kind ?? ''}`];
  const pending = rule ? generationPending(object) : undefined;
  if (pending) return pending;
  return rule ? rule.verdict(object) : customResourceVerdict(object);
}

/**
 * One type's rule. A method, so a rule of one type's objects is a rule (its parameter is
 * compared bivariantly): the table is keyed by that type.
 */
interface Rule {
  verdict(object: KubeObject): Verdict;
}

/** The rules of the built-in types, by `group/Kind`; a type not here follows its conditions. */
const RULES: Readonly<Record<string, Rule>> = {
  'apps/Deployment': { verdict: deploymentVerdict },
  'apps/StatefulSet': { verdict: statefulSetVerdict },
  'apps/DaemonSet': { verdict: daemonSetVerdict },
  'apps/ReplicaSet': { verdict: replicaSetVerdict },
  'batch/Job': { verdict: jobVerdict },
  // kstatus's rule: a CronJob is as asked once it exists; its Jobs' runs are history.
  'batch/CronJob': { verdict: () => current('scheduled') },
  '/Pod': { verdict: podVerdict },
  '/PersistentVolumeClaim': { verdict: claimVerdict },
  '/Service': { verdict: serviceVerdict },
  'networking.k8s.io/Ingress': { verdict: ingressVerdict },
};

function groupOf(apiVersion: string | undefined): string {
  return apiVersion?.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

/** Whether an object's status says its controller has not yet seen its generation (`observedGeneration` older). */
export function observedGenerationLags(object: KubeObject): boolean {
  const status = isJsonObject(object.status) ? object.status : {};
  const observed = status.observedGeneration;
  const generation = object.metadata.generation;
  return typeof observed === 'number' && generation !== undefined && observed < generation;
}

/** A workload whose controller has not yet seen its latest spec is on its way, whatever its counts say. */
function generationPending(object: KubeObject): Verdict | undefined {
  if (!observedGenerationLags(object)) return undefined;
  return inProgress('RolloutPending', `its controller has not yet seen generation ${object.metadata.generation}`);
}

function trueCondition(conditions: readonly WorkloadCondition[] | undefined, type: string) {
  return conditions?.find((c) => c.type === type && c.status === 'True');
}

function deploymentVerdict(d: Deployment): Verdict {
  const byCondition = deploymentConditionVerdict(d);
  if (byCondition) return byCondition;
  if (d.spec?.paused) return current('paused');
  const want = d.spec?.replicas ?? 1;
  const { updatedReplicas = 0, availableReplicas = 0, replicas = 0 } = d.status ?? {};
  if (updatedReplicas < want) return inProgress('RollingOut', `${updatedReplicas}/${want} pods updated`);
  if (replicas > updatedReplicas)
    return inProgress('RollingOut', `${replicas - updatedReplicas} old pod(s) still to go`);
  if (availableReplicas < want) return inProgress('WaitingForPods', `${availableReplicas}/${want} pods available`);
  return current(`${want} pod(s) updated and available`);
}

/** What a Deployment's own conditions say: a rollout past its deadline, or pods it cannot create. */
function deploymentConditionVerdict(d: Deployment): Verdict | undefined {
  const conditions = d.status?.conditions;
  const stuck = conditions?.find(
    (c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded',
  );
  if (stuck) return failed('ProgressDeadlineExceeded', stuck.message ?? 'the rollout is past its progress deadline');
  // Pods it cannot create (a quota, an admission plugin) are on their way until the deadline: the
  // ReplicaSet's FailedCreate Event says which and why (see `assessChildren`'s `failureEvent`).
  const refused = trueCondition(conditions, 'ReplicaFailure');
  return refused && inProgress(refused.reason ?? 'ReplicaFailure', refused.message ?? 'pods cannot be created');
}

function statefulSetVerdict(s: StatefulSet): Verdict {
  const want = s.spec?.replicas ?? 1;
  const { readyReplicas = 0, replicas = 0 } = s.status ?? {};
  if (replicas > want) return inProgress('ScalingDown', `${replicas} pods, ${want} wanted`);
  if (readyReplicas < want) return inProgress('WaitingForPods', `${readyReplicas}/${want} pods ready`);
  return statefulSetRevisionVerdict(s, want);
}

/** A StatefulSet with every pod ready: whether they are on its latest revision (above a partition). */
function statefulSetRevisionVerdict(s: StatefulSet, want: number): Verdict {
  const strategy = s.spec?.updateStrategy;
  if (strategy?.type === 'OnDelete') return current(`${want} pod(s) ready`);
  const { updatedReplicas = 0, currentRevision, updateRevision } = s.status ?? {};
  const partition = strategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    return updatedReplicas < want - partition
      ? inProgress('RollingOut', `${updatedReplicas}/${want - partition} pods above the partition updated`)
      : current(`${want} pod(s) ready, updated above partition ${partition}`);
  }
  if (updateRevision && currentRevision !== updateRevision)
    return inProgress('RollingOut', `${updatedReplicas}/${want} pods updated`);
  return current(`${want} pod(s) ready`);
}

function daemonSetVerdict(d: DaemonSet): Verdict {
  const { desiredNumberScheduled = 0, updatedNumberScheduled = 0, numberAvailable = 0 } = d.status ?? {};
  if (updatedNumberScheduled < desiredNumberScheduled)
    return inProgress('RollingOut', `${updatedNumberScheduled}/${desiredNumberScheduled} pods updated`);
  if (numberAvailable < desiredNumberScheduled)
    return inProgress('WaitingForPods', `${numberAvailable}/${desiredNumberScheduled} pods available`);
  return current(`${desiredNumberScheduled} pod(s) available`);
}

function replicaSetVerdict(r: ReplicaSet): Verdict {
  const refused = trueCondition(r.status?.conditions, 'ReplicaFailure');
  if (refused) return inProgress(refused.reason ?? 'ReplicaFailure', refused.message ?? 'pods cannot be created');
  const want = r.spec?.replicas ?? 1;
  const available = r.status?.availableReplicas ?? 0;
  return available < want
    ? inProgress('WaitingForPods', `${available}/${want} pods available`)
    : current(`${want} pod(s) available`);
}

function jobVerdict(j: Job): Verdict {
  const conditions = j.status?.conditions;
  if (trueCondition(conditions, 'Complete')) return current('complete');
  const failure = trueCondition(conditions, 'Failed');
  if (failure)
    return failed('JobFailed', `${failure.reason ? `${failure.reason}: ` : ''}${failure.message ?? 'the Job failed'}`);
  if (j.spec?.suspend) return inProgress('Suspended', 'suspended');
  const { active = 0, succeeded = 0, failed: failures = 0 } = j.status ?? {};
  return inProgress('Running', `${active} running, ${succeeded} succeeded, ${failures} failed`);
}

function podVerdict(p: Pod): Verdict {
  const problem = podProblem(p);
  if (problem) return failed(problem.reason, problem.message);
  const phase = p.status?.phase;
  if (phase === 'Succeeded') return current('succeeded');
  if (phase === 'Failed') return failed('PodFailed', `pod ${p.metadata.name} failed`);
  return trueCondition(p.status?.conditions, 'Ready')
    ? current('ready')
    : inProgress('WaitingForPods', `pod ${p.metadata.name} is ${phase ?? 'Pending'}, not ready yet`);
}

function claimVerdict(c: PersistentVolumeClaim): Verdict {
  const phase = c.status?.phase;
  if (phase === 'Bound') return current('bound');
  if (phase === 'Lost') return failed('ClaimLost', 'its volume is gone');
  return inProgress('ClaimPending', 'not bound to a volume yet');
}

function serviceVerdict(s: Service): Verdict {
  if (s.spec?.type !== 'LoadBalancer') return current('no address to wait for');
  return s.status?.loadBalancer?.ingress?.length
    ? current('has a load balancer address')
    : inProgress('WaitingForAddress', 'waiting for a load balancer address');
}

function ingressVerdict(i: Ingress): Verdict {
  return i.status?.loadBalancer?.ingress?.length
    ? current('has an address')
    : inProgress('WaitingForAddress', 'waiting for an ingress controller to give it an address');
}

/**
 * Any other object, e.g. a custom resource: by its conditions, as kstatus reads them — `Stalled`
 * or `Degraded` True is a failure; `Ready` or `Available` says whether it is ready; a status whose
 * `observedGeneration` lags its generation is on its way; no conditions at all, nothing to wait for.
 */
function customResourceVerdict(object: KubeObject): Verdict {
  const status = isJsonObject(object.status) ? object.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isWorkloadCondition) : [];
  const broken = conditions.find((c) => (c.type === 'Stalled' || c.type === 'Degraded') && c.status === 'True');
  if (broken) return failed(broken.reason ?? broken.type, broken.message ?? broken.type);
  const pending = generationPending(object);
  if (pending) return pending;
  const ready = conditions.find((c) => c.type === 'Ready') ?? conditions.find((c) => c.type === 'Available');
  if (!ready) return current('no Ready or Available condition to wait for');
  return ready.status === 'True'
    ? current(ready.message ?? ready.type)
    : inProgress(ready.reason ?? `Not${ready.type}`, ready.message ?? `not ${ready.type} yet`);
}

function isWorkloadCondition(v: unknown): v is WorkloadCondition {
  return isJsonObject(v) && typeof v.type === 'string' && typeof v.status === 'string';
}

/**
 * What of the children a child waits for (by `Kind/name`, see `waitsFor`) is not ready yet, each
 * as `Kind name (why)`: not made yet, or its verdict's message. Empty: it may be applied.
 */
export function waitingOn(waitsFor: readonly string[], objectOf: (key: string) => KubeObject | undefined): string[] {
  return waitsFor.flatMap((key) => {
    const object = objectOf(key);
    const what = key.replace('/', ' ');
    if (!object) return [`${what} (not made yet)`];
    const health = childHealth(object);
    return health.readiness === 'Current' ? [] : [`${what} (${health.message})`];
  });
}

/** The built-in kinds whose children are pods, which the runtime traces to them. */
export const POD_WORKLOAD_KINDS: readonly string[] = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'];

/** What a resource's children are, together: ready or not, and the first failure. */
export interface ChildrenHealth {
  /** Each child's verdict, and each child held back (`Waiting`), by kind then name. */
  readonly children: readonly ChildHealth[];
  /** The children that are not `Current`. */
  readonly notReady: readonly ChildHealth[];
  /** Every child is `Current` (and none is held back). */
  readonly ready: boolean;
  /**
   * Why the resource is not as its spec asks, for `Degraded`, naming the child — the most telling
   * first: a pod of a child not yet ready that cannot run (a container that cannot, then a pod
   * no node takes), a Warning Event about a child Kubernetes cannot make, a failed child. A
   * pod's failure once its workload is ready again is history, and so is a failure Event once
   * every child is ready, or a ProvisioningFailed one once no claim waits.
   */
  readonly failure?: Problem;
}

/** What `assessChildren` reads. */
export interface ChildrenInput {
  readonly children: Iterable<KubeObject>;
  /** The pods traced to a child (see `podWorkloads`). @default none */
  readonly podsOf?: (child: KubeObject) => readonly Pod[];
  /**
   * The claims in the child's namespace, for a StatefulSet: it is not as asked while a claim of
   * its pods is smaller than its template asks (see `claimSizeVerdict`). @default none
   */
  readonly claimsOf?: (child: KubeObject) => readonly PersistentVolumeClaim[];
  /** Children not applied yet because they wait for others (see `waitsFor`). @default none */
  readonly held?: readonly ChildHealth[];
  /** The newest Warning Event about a child Kubernetes cannot make (FailedCreate, ProvisioningFailed). */
  readonly failureEvent?: Problem;
}

/** The health of a resource's children: the same rules for every kind. Pure. */
export function assessChildren(input: ChildrenInput): ChildrenHealth {
  const held = input.held ?? [];
  const isHeld = (o: KubeObject) => held.some((h) => h.kind === o.kind && h.name === o.metadata.name);
  // A held child that exists stays as it was: what it is now is not what its spec asks.
  const judged = [...input.children]
    .filter((o) => !isHeld(o))
    .map((o) => ({ object: o, health: withClaimSizes(o, childHealth(o), input.claimsOf) }));
  const verdicts = [...judged.map((j) => j.health), ...held].sort(
    (a, b) => compareText(a.kind, b.kind) || compareText(a.name, b.name),
  );
  const notReady = verdicts.filter((v) => v.readiness !== 'Current');
  const unready = judged.filter((j) => j.health.readiness !== 'Current');
  const pods = unready.map((j) => ({ workload: j.object, pods: input.podsOf?.(j.object) ?? [] }));
  const podProblems = pods.flatMap((p) => tracedPodProblems(p.workload, p.pods));
  const failedChild = notReady.find((v) => v.readiness === 'Failed');
  // What the pods show now comes first; an Event may be history (a provisioning conflict that
  // a retry got past): it is read only when no pod says why, and one about a claim only while a
  // claim waits (an owned one not bound, or a pod waiting for its claims).
  const claimWaits =
    unready.some((j) => j.object.kind === 'PersistentVolumeClaim') || pods.some((p) => p.pods.some(waitsForClaims));
  const event = input.failureEvent?.reason === 'ProvisioningFailed' && !claimWaits ? undefined : input.failureEvent;
  const failure =
    podProblems.find((p) => p.reason === 'PodFailing') ??
    podProblems[0] ??
    (notReady.length > 0 ? event : undefined) ??
    (failedChild && {
      reason: failedChild.reason,
      message: `${failedChild.kind} ${failedChild.name}: ${failedChild.message}`,
      object: { kind: failedChild.kind, name: failedChild.name },
    });
  return { children: verdicts, notReady, ready: notReady.length === 0, failure: failure && clip(failure) };
}

/**
 * The pods whose state speaks for a workload's spec now. A StatefulSet's pods of an older
 * revision are on their way out — its own rollout, or the runtime's recovery of one stuck behind
 * them (stuck-rollouts.ts), replaces them — so what they show is not what the spec asks: while
 * its controller has not yet seen its spec none of its pods speak for it, then only those of its
 * update revision (and any without a revision label). Not for OnDelete StatefulSets, whose old
 * pods stay until someone deletes them.
 */
function podsOfItsSpec(workload: KubeObject, pods: readonly Pod[]): readonly Pod[] {
  if (!isStatefulSet(workload)) return pods;
  const sts = workload;
  if (sts.spec?.updateStrategy?.type === 'OnDelete') return pods;
  if (observedGenerationLags(sts)) return [];
  const revision = sts.status?.updateRevision;
  if (!revision) return pods;
  return pods.filter((p) => {
    const own = p.metadata.labels?.['controller-revision-hash'];
    return own === undefined || own === revision;
  });
}

function isStatefulSet(o: KubeObject): o is StatefulSet {
  return o.kind === 'StatefulSet';
}

/** A StatefulSet as its own rule says, unless it is Current while a claim of its pods is smaller than asked. */
function withClaimSizes(object: KubeObject, health: ChildHealth, claimsOf: ChildrenInput['claimsOf']): ChildHealth {
  if (health.readiness !== 'Current' || object.kind !== 'StatefulSet' || !claimsOf) return health;
  const sizes = claimSizeVerdict(object, claimsOf(object));
  return sizes ? { kind: health.kind, name: health.name, ...sizes } : health;
}

/** The problems of a workload's pods that cannot run (by pod name), each naming the workload. */
function tracedPodProblems(workload: KubeObject, pods: readonly Pod[]): Problem[] {
  return [...podsOfItsSpec(workload, pods)]
    .sort((a, b) => compareText(a.metadata.name ?? '', b.metadata.name ?? ''))
    .flatMap((pod) => {
      const problem = podProblem(pod);
      const object = { kind: workload.kind ?? '', name: workload.metadata.name ?? '' };
      return problem
        ? [{ reason: problem.reason, message: `${object.kind} ${object.name}: ${problem.message}`, object }]
        : [];
    });
}

function clip(p: Problem): Problem {
  return { ...p, message: p.message.slice(0, 1024) };
}
