/**
 * A replicated Database's instances as the operator keeps them: which one is the primary, which
 * stream as standbys (labelled for `<name>-ro`), and the failover — a primary not ready for
 * `failoverDelay` replaced by the most advanced ready standby, promoted by `pg_promote()` (a new
 * timeline), `<name>-rw` then sent to it; a former primary still running as one is restarted, to
 * rejoin as a standby (its start script rewinds it). Decided here from what the instances answer
 * (`decideInstances`, pure); asked and written by the external step (instances-step.ts).
 */
import { BuiltinTypes, type Children, type Pod, type PodLabels, type PodRestart } from '../contract';
import type { Database, DatabaseStatus } from './api';
import { databaseNames } from './database-resources';
import { PRIMARY_KEY } from './replication';
import { instanceOrdinal, instancePod, ROLE_LABEL, STANDBY_ROLE } from './instance-names';
import type { InstanceAnswer } from './instance-queries';
import { stuckStandby } from './stuck-standbys';

/** One instance as the status shows it. */
export type InstanceStatus = NonNullable<DatabaseStatus['instances']>[number];

/** What the external step found, for the render and the status. */
export interface DatabaseFacts {
  /** The primary's pod, as this reconcile leaves it. */
  readonly primary: string;
  /** Each instance as asked (a Database of more than one). */
  readonly instances?: readonly InstanceStatus[];
  /** Why a failover due is not made yet (synchronous standbys: one that may hold acknowledged writes is not ready or not heard). */
  readonly failoverHeld?: string;
}

/** The annotation asking for a planned switchover: its value names the instance to be the primary. */
export const SWITCHOVER_ANNOTATION = 'database.example.com/switchover-to';

/** One instance as observed: its pod as cached, and what its server answered (undefined: nothing). */
export interface InstanceObservation {
  readonly name: string;
  readonly pod?: Pod;
  readonly ready: boolean;
  readonly answer?: InstanceAnswer;
  /** Its pod is being deleted: a former primary shutting down still sends its last WAL. */
  readonly terminating?: boolean;
  /** A standby not streaming: since when the operator has seen it so. */
  readonly notStreamingSince?: Date;
}

/** What to do about the instances. */
export interface InstancesDecision {
  readonly primary: string;
  /** The standby to promote now, and why: the primary lost, or a switchover's last step. */
  readonly promote?: { readonly name: string; readonly reason: string; readonly by: 'failover' | 'switchover' };
  /** A switchover begun now: the primary named `to` (a standby still), the former one restarted next. */
  readonly switchover?: { readonly from: string; readonly to: string; readonly reason: string };
  /** Instances running as a primary that is not the primary: restarted, to rejoin as standbys. */
  readonly fence: readonly PodRestart[];
  readonly labels: readonly PodLabels[];
  readonly instances: readonly InstanceStatus[];
  /** Why a failover due is not made yet. */
  readonly failoverHeld?: string;
  /** When to look again: the failover delay's end, or the next refresh of the status. */
  readonly requeueAfterMs: number;
}

export interface InstancesInput {
  readonly database: string;
  /** The primary as the status last recorded it (or the first instance). */
  readonly designated: string;
  /** The instances the spec asks for: a standby beyond them (being scaled away) is never promoted. */
  readonly count: number;
  readonly observations: readonly InstanceObservation[];
  /** The primary the ConfigMap names now, which a restarted instance reads. */
  readonly configuredPrimary?: string;
  /** Since when the primary has been unavailable, as the status's `Available` condition says. */
  readonly unavailableSince?: Date;
  /** The instance a switchover is asked to (the annotation, not yet acted on). */
  readonly switchoverTo?: string;
  readonly failoverDelayMs: number;
  /** Since when the primary has served (`Available` true): a standby made before it and not streaming since is restarted. */
  readonly servingSince?: Date;
  /** The StatefulSet's pod template revision (its `updateRevision`): instances on another are rolled to it. */
  readonly updateRevision?: string;
  /** How many standbys acknowledge each commit (`synchronousStandbys`): a failover then never loses one. @default 0 */
  readonly synchronous?: number;
  readonly now: Date;
}

/** How often the instances are asked again while all is well, at most: their positions in the status. */
export const INSTANCES_REFRESH_MS = 30_000;

/**
 * How often the instances are asked while all is well: half the failover delay, between 2 and 30
 * s. A server that hangs changes nothing the operator watches (its pod may even stay Ready), so
 * asking is how it is seen: a failover comes within about 1.5 failover delays of the hang.
 */
export function refreshMs(failoverDelayMs: number): number {
  return Math.min(INSTANCES_REFRESH_MS, Math.max(2000, Math.round(failoverDelayMs / 2)));
}

/** An LSN (`X/Y`, hexadecimal) as a number of bytes. */
export function lsnBytes(lsn: string): bigint {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** The ordinal of an observation (a name not of the Database sorts last). */
const ordinalOf = (database: string, name: string) => instanceOrdinal(database, name) ?? Number.MAX_SAFE_INTEGER;

/**
 * The primary: the designated one, unless another answers as a primary on a later timeline than
 * the designated one answers on (each promotion begins a new one: a promotion whose status was
 * not written yet) or the designated one does not answer at all. A switchover's target, named
 * but a standby still while the former primary runs on the same timeline, stays the primary.
 */
function actualPrimary(input: InstancesInput): string {
  const primaries = input.observations.filter((o) => o.answer && !o.answer.standby);
  primaries.sort(
    (a, b) =>
      (b.answer?.timeline ?? 0) - (a.answer?.timeline ?? 0) ||
      Number(b.name === input.designated) - Number(a.name === input.designated) ||
      ordinalOf(input.database, a.name) - ordinalOf(input.database, b.name),
  );
  const top = primaries[0];
  const designated = input.observations.find((o) => o.name === input.designated)?.answer;
  if (!top || top.name === input.designated) return input.designated;
  return !designated || (top.answer?.timeline ?? 0) > (designated.timeline ?? 0) ? top.name : input.designated;
}

/** How soon a running switchover is looked at again. */
const SWITCHOVER_RECHECK_MS = 2000;

/** How far behind the primary a switchover's target may be when it begins (it catches up while the former primary stops). */
const SWITCHOVER_MAX_LAG = 16n * 1024n * 1024n;

/**
 * A switchover begun: asked by the annotation, or needed by a scale-down below the primary's
 * ordinal (to the most advanced standby that stays) — only from a ready primary answering as
 * one, to a ready standby of the spec's instances close behind it. The primary is named the
 * target first (the Services send writes nowhere writable for the few seconds that follow); the
 * former primary is restarted once the ConfigMap names the target, and the target promoted once
 * no primary runs (`finishSwitchover`).
 */
function startSwitchover(input: InstancesInput, primary: string): InstancesDecision['switchover'] {
  const current = input.observations.find((o) => o.name === primary);
  const scaledAway = ordinalOf(input.database, primary) >= input.count;
  const to = input.switchoverTo ?? (scaledAway ? mostAdvancedStandby(input)?.name : undefined);
  const target = input.observations.find((o) => o.name === to && o.name !== primary);
  if (
    !target ||
    !current?.ready ||
    current.answer?.standby !== false ||
    !isCaughtUpStandby(input, target, current.answer)
  )
    return undefined;
  const why = input.switchoverTo
    ? `asked by ${SWITCHOVER_ANNOTATION}`
    : `${primary} is beyond the ${String(input.count)} instances asked`;
  return { from: primary, to: target.name, reason: why };
}

/** A ready standby of the spec's instances, at most `SWITCHOVER_MAX_LAG` behind the primary's `at`. */
function isCaughtUpStandby(input: InstancesInput, o: InstanceObservation, at: InstanceAnswer): boolean {
  if (!o.ready || o.answer?.standby !== true || ordinalOf(input.database, o.name) >= input.count) return false;
  // Streaming from this primary, on its timeline: one that is not (cut off, or left on an earlier
  // timeline it cannot leave) may hold WAL the primary never had, and promoted it would fork a
  // timeline the others cannot follow.
  if (o.answer.streaming !== true || (o.answer.timeline ?? 0) !== (at.timeline ?? 0)) return false;
  return lsnBytes(at.lsn) - lsnBytes(o.answer.replayed ?? o.answer.lsn) <= SWITCHOVER_MAX_LAG;
}

/**
 * A switchover's last step: the primary named is a standby still, no instance runs as a primary
 * and none is shutting down (a former primary sends its last WAL as it stops): it is promoted.
 */
function finishSwitchover(input: InstancesInput, primary: string): InstancesDecision['promote'] {
  const named = input.observations.find((o) => o.name === primary);
  if (named?.answer?.standby !== true || !named.ready) return undefined;
  if (input.observations.some((o) => o.terminating === true || o.answer?.standby === false)) return undefined;
  return {
    name: primary,
    reason: `the switchover to ${primary}: the former primary has stopped, and ${primary} has received its WAL (${named.answer.lsn})`,
    by: 'switchover',
  };
}

/** The ready standby of the spec's instances that has received the most WAL (the lowest ordinal among equals). */
function mostAdvancedStandby(input: InstancesInput): InstanceObservation | undefined {
  const candidates = input.observations.filter(
    (o) => o.ready && o.answer?.standby === true && ordinalOf(input.database, o.name) < input.count,
  );
  // By WAL received alone: cut off from a primary that hangs, standbys report the timeline of
  // their last restartpoint, which says nothing of the WAL they hold.
  candidates.sort((a, b) => {
    const ahead = lsnBytes(b.answer?.lsn ?? '0/0') - lsnBytes(a.answer?.lsn ?? '0/0');
    return ahead !== 0n ? (ahead > 0n ? 1 : -1) : ordinalOf(input.database, a.name) - ordinalOf(input.database, b.name);
  });
  return candidates[0];
}

/** How soon a failover held for a synchronous standby is looked at again: its readiness may change with no event of ours. */
const FAILOVER_HELD_RECHECK_MS = 5000;

/**
 * Why promoting `standby` could lose an acknowledged commit, with `synchronous` standbys: each
 * acknowledged commit is on that many of them, so the standbys heard from must be enough that one
 * of any such set is among them (all but synchronous - 1), and none heard from may have received
 * more than `standby`. Undefined when it cannot (or without synchronous standbys).
 */
function acknowledgedWritesUnsure(
  input: InstancesInput,
  primary: string,
  standby: InstanceObservation,
): string | undefined {
  const synchronous = input.synchronous ?? 0;
  if (synchronous === 0) return undefined;
  const heard = input.observations.filter((o) => o.name !== primary && o.answer?.standby === true);
  const needed = input.count - synchronous;
  if (heard.length < needed)
    return `each acknowledged commit is on ${String(synchronous)} standby(s), and only ${String(heard.length)} of the ${String(input.count - 1)} answer (${String(needed)} needed to be sure to promote one holding them all)`;
  const ahead = heard.find((o) => lsnBytes(o.answer?.lsn ?? '0/0') > lsnBytes(standby.answer?.lsn ?? '0/0'));
  if (ahead)
    return `${ahead.name} has received more WAL (${ahead.answer?.lsn ?? ''}) than ${standby.name}, the most advanced ready standby, and is not ready: promoting ${standby.name} could lose acknowledged commits`;
  return undefined;
}

/** The failover, if its time has come: the standby to promote, or when to look again. */
function failover(
  input: InstancesInput,
  primary: string,
): { readonly promote?: InstancesDecision['promote']; readonly held?: string; readonly requeueAfterMs: number } {
  const refresh = refreshMs(input.failoverDelayMs);
  const current = input.observations.find((o) => o.name === primary);
  // A primary that answers as one is alive, only not ready: promoting another would make two. One
  // whose pod is ready but that answers nothing while standbys do has hung (its probe with it).
  const alive = current?.answer?.standby === false || (current?.ready === true && current.answer !== undefined);
  if (alive || !input.unavailableSince) return { requeueAfterMs: refresh };
  const waited = input.now.getTime() - input.unavailableSince.getTime();
  if (waited < input.failoverDelayMs)
    return { requeueAfterMs: Math.min(refresh, input.failoverDelayMs - waited + 100) };
  const standby = mostAdvancedStandby(input);
  if (!standby) return { requeueAfterMs: refresh };
  const held = acknowledgedWritesUnsure(input, primary, standby);
  if (held) return { held, requeueAfterMs: FAILOVER_HELD_RECHECK_MS };
  const reason = `the primary ${primary} has not been ready for ${String(Math.round(waited / 1000))} s; ${standby.name} has received the most WAL (${standby.answer?.lsn ?? ''})`;
  return { promote: { name: standby.name, reason, by: 'failover' }, requeueAfterMs: refresh };
}

/**
 * The instances running as a primary that is not the primary: restarted, once the ConfigMap
 * names the primary (which they read at their start, to rejoin as standbys).
 */
function fences(input: InstancesInput, primary: string): PodRestart[] {
  if (input.configuredPrimary !== primary) return [];
  return input.observations.flatMap((o): PodRestart[] => {
    const uid = o.pod?.metadata.uid;
    if (o.name === primary || o.answer?.standby !== false || !uid) return [];
    const timeline = String(o.answer.timeline ?? '?');
    return [
      {
        name: o.name,
        uid,
        reason: `it runs as a primary (timeline ${timeline}) while ${primary} is the primary: it rejoins as a standby`,
      },
    ];
  });
}

/** Each pod's role label: on those streaming as standbys, off every other (`<name>-ro` selects it). */
function roleLabels(input: InstancesInput, primary: string): PodLabels[] {
  return input.observations.flatMap((o): PodLabels[] => {
    const uid = o.pod?.metadata.uid;
    if (!uid) return [];
    const standby = o.name !== primary && o.answer?.standby === true;
    return [
      {
        name: o.name,
        uid,
        labels: { [ROLE_LABEL]: standby ? STANDBY_ROLE : null },
        reason: standby ? 'it streams as a standby' : 'it is not a standby now',
      },
    ];
  });
}

/** One instance as the status shows it (what it answered; `promoted`, a primary now); a standby's lag behind the primary's position. */
function instanceStatus(
  o: InstanceObservation,
  promoted: string | undefined,
  primaryAnswer?: InstanceAnswer,
): InstanceStatus {
  const { answer } = o;
  if (!answer) return { name: o.name, role: 'unknown', ready: o.ready };
  const role = o.name === promoted || !answer.standby ? 'primary' : 'standby';
  const lag =
    role === 'standby' && primaryAnswer?.standby === false
      ? lsnBytes(primaryAnswer.lsn) - lsnBytes(answer.replayed ?? answer.lsn)
      : undefined;
  return {
    name: o.name,
    role,
    ready: o.ready,
    lsn: answer.lsn,
    ...(lag !== undefined ? { lagBytes: Number(lag > 0n ? lag : 0n) } : {}),
    ...(answer.timeline ? { timeline: answer.timeline } : {}),
  };
}

/** The pod template revision an instance's pod runs (the StatefulSet controller's label). */
const revisionOf = (o: InstanceObservation) => o.pod?.metadata.labels?.['controller-revision-hash'];

/**
 * A change of the pod template (a version, resources, settings) rolled so that writes stop only
 * for a switchover: the StatefulSet updates a pod only once it is deleted, and the operator
 * restarts the outdated standbys first, one at a time and only while every instance is ready,
 * then switches over to an updated standby — the former primary's restart updates it. Nothing
 * while a failover is due or a switchover runs.
 */
function rollout(
  input: InstancesInput,
  primary: string,
): { readonly restart?: PodRestart; readonly switchover?: InstancesDecision['switchover'] } {
  const { updateRevision } = input;
  const instances = input.observations.filter((o) => ordinalOf(input.database, o.name) < input.count);
  const outdated = instances.filter((o) => o.pod && revisionOf(o) !== updateRevision);
  if (!updateRevision || outdated.length === 0) return {};
  if (instances.some((o) => !o.ready || o.terminating === true || !o.answer)) return {};
  const standby = outdated.find((o) => o.name !== primary && o.answer?.standby === true);
  const uid = standby?.pod?.metadata.uid;
  if (standby && uid)
    return {
      restart: {
        name: standby.name,
        uid,
        reason: `its pod runs revision ${revisionOf(standby) ?? '(none)'} of the StatefulSet's template, which is at ${updateRevision}: the standbys are updated first, one at a time`,
      },
    };
  const current = instances.find((o) => o.name === primary);
  const target = mostAdvancedStandby({ ...input, observations: instances.filter((o) => !outdated.includes(o)) });
  if (!current || !outdated.includes(current) || current.answer?.standby !== false || !target) return {};
  if (!isCaughtUpStandby(input, target, current.answer)) return {};
  return {
    switchover: {
      from: primary,
      to: target.name,
      reason: `the pod template changed (revision ${updateRevision}); every standby runs it, so the primary moves to ${target.name} and ${primary} restarts on it`,
    },
  };
}

/** The steps of this reconcile over the primary `current`: a promotion, else a switchover or a rollout's restart. */
function steps(input: InstancesInput, current: string) {
  const failed = failover(input, current);
  const promote = failed.promote ?? finishSwitchover(input, current);
  if (promote) return { failed, promote };
  const running = input.observations.find((o) => o.name === current)?.answer?.standby === false;
  // Rolled only while nothing else runs: no failover due, no switchover midway.
  const rolled = failed.held || !running ? {} : rollout(input, current);
  const switchover = startSwitchover(input, current) ?? rolled.switchover;
  if (switchover) return { failed, switchover };
  const stuck = running ? stuckStandby({ ...input, primary: current }) : undefined;
  return { failed, restart: rolled.restart ?? stuck };
}

/** The decision over the instances as observed. Pure. */
export function decideInstances(input: InstancesInput): InstancesDecision {
  const current = actualPrimary(input);
  const { failed, promote, switchover, restart } = steps(input, current);
  const primary = promote?.name ?? switchover?.to ?? current;
  const primaryAnswer = input.observations.find((o) => o.name === primary)?.answer;
  // While a switchover or a rollout runs (a step begun now, or its primary named and a standby
  // still), looked at again soon: its steps wait on pods and servers whose changes may come with
  // no event of ours.
  const midway = switchover !== undefined || restart !== undefined || (primaryAnswer?.standby === true && !promote);
  return {
    primary,
    ...(promote ? { promote } : {}),
    ...(switchover ? { switchover } : {}),
    ...(failed.held ? { failoverHeld: failed.held } : {}),
    fence: [...fences(input, primary), ...(restart ? [restart] : [])],
    labels: roleLabels(input, primary),
    instances: input.observations.map((o) => instanceStatus(o, promote?.name, primaryAnswer)),
    requeueAfterMs: midway ? SWITCHOVER_RECHECK_MS : failed.requeueAfterMs,
  };
}

/**
 * The primary as the operator last named it: in the ConfigMap its instances read (written with
 * the Services in the reconcile that named it — the status may be written later, paced), else as
 * the status recorded it, else the first instance.
 */
export function designatedPrimary(db: Database, children?: Children): string {
  const config = children?.of(BuiltinTypes.ConfigMap, databaseNames(db.metadata.name).config);
  return config?.data?.[PRIMARY_KEY] ?? db.status?.primary ?? instancePod(db.metadata.name, 0);
}

/** The facts as the children and status say, without asking the instances (for `plan`, `diff`, `render`). */
export function observedDatabaseFacts(db: Database, children?: Children): DatabaseFacts {
  return {
    primary: designatedPrimary(db, children),
    ...(db.status?.instances ? { instances: db.status.instances } : {}),
  };
}
