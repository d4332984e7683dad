import { X509Certificate } from 'node:crypto';
import { BuiltinTypes, type Pod } from '../contract';
import type { CaRotationPhase } from './ca-rotation-names';
import { type CaState, caStateOf } from './ca-secret';
import { type EtcdMember, servedCertificate } from './etcd-api';
import { etcdSelectorLabels } from './etcd-cluster-resources';
import type { ClusterView } from './membership';
import type { MembershipResult } from './topology';
import { etcdTlsSecrets } from './tls';

// How soon to look again while a rotation's restarts are under way.
const STEP_POLL_MS = 1000;
const WAIT_POLL_MS = 3000;

/**
 * The members' part of a rotation of the operator's CAs (the Secrets' part: ca-secret.ts). etcd
 * reads its trusted CA files only when it starts, so each phase ends with every member pod made
 * after the phase's certificates were written: a pod made before is restarted, one at a time,
 * highest ordinal first, only while every member is healthy (a quorum stays up) and no version
 * rolls (an upgrade's restarts count too). In `drop`, a member is restarted only once every
 * member serves its certificate of the new CA — the kubelet updates a Secret volume within a
 * minute or so, and a member trusting the new CA alone would refuse a peer still presenting the
 * old one. When the phase's restarts are done and every member is healthy, the result says so
 * (`caRolled`), and the prepare step moves the rotation on.
 *
 * Undefined when no rotation is under way (or the cluster's certificates are not the operator's).
 */
export async function rollCaTrust(view: ClusterView): Promise<MembershipResult | undefined> {
  const state = await rotationUnderWay(view);
  if (!state?.phase) return undefined;
  const phase = state.phase;
  const step = (message: string) => ({ reason: 'RotatingCA', message: `${what(phase)}: ${message}` });
  if (!state.since) return view.unchanged(step('writing the certificates'), STEP_POLL_MS);
  const members = [...view.members].sort(view.byOrdinal);
  const unhealthy = members.filter((m) => !view.healthy(m)).map(view.podName);
  if (unhealthy.length > 0) {
    const message = `${what(phase)}: waiting for ${unhealthy.join(', ')} to be healthy`;
    return view.unchanged({ reason: 'WaitingForHealthyMembers', message }, WAIT_POLL_MS);
  }
  const stale = stalePods(view, members, state.since);
  if (stale === 'restarting') return view.unchanged(step('waiting for a member pod to start again'), STEP_POLL_MS);
  if (stale.length === 0) return { ...view.unchanged(step('every member restarted'), STEP_POLL_MS), caRolled: phase };
  const notServing = phase === 'drop' ? await notServingNewCertificate(view, members, state) : undefined;
  if (notServing)
    return view.unchanged(
      step(`waiting for ${notServing} to serve its certificate of the new CA (the kubelet updates its Secret)`),
      WAIT_POLL_MS,
    );
  // Highest ordinal first.
  const next = stale[stale.length - 1];
  const pod = next?.metadata.name ?? '';
  const done = members.length - stale.length;
  return {
    ...view.unchanged(step(`restarting ${pod}, ${done} of ${members.length} members done`), STEP_POLL_MS),
    restartPods: [
      {
        name: pod,
        uid: next?.metadata.uid ?? '',
        reason: `to ${phase === 'trust' ? 'trust the new CAs beside the old' : 'trust the new CAs alone'} (etcd reads its trusted CAs only at a start)`,
      },
    ],
  };
}

/** The CA Secret's state while a rotation is under way and no version rolls (an upgrade's restarts go first). */
async function rotationUnderWay(view: ClusterView): Promise<CaState | undefined> {
  const { name, context, current, wantVersion } = view.facts;
  if (current.version !== wantVersion || current.partition !== 0) return undefined;
  const found = await context.getOwn(BuiltinTypes.Secret, etcdTlsSecrets(name).ca);
  return found.state === 'own' ? caStateOf(found.object) : undefined;
}

/**
 * The members' pods made before `since`, in ordinal order; 'restarting' while one of them is gone
 * or going (its StatefulSet makes it again).
 */
function stalePods(view: ClusterView, members: readonly EtcdMember[], since: string): Pod[] | 'restarting' {
  const pods = new Map(
    view.facts.context.read(BuiltinTypes.Pod, etcdSelectorLabels(view.facts.name)).map((p) => [p.metadata.name, p]),
  );
  const stale: Pod[] = [];
  for (const m of members) {
    const pod = pods.get(view.podName(m));
    if (!pod?.metadata.uid || pod.metadata.deletionTimestamp) return 'restarting';
    if (madeBefore(pod, since)) stale.push(pod);
  }
  return stale;
}

/** The first member that does not serve a certificate of the signing client CA yet, if any. */
async function notServingNewCertificate(
  view: ClusterView,
  members: readonly EtcdMember[],
  state: CaState,
): Promise<string | undefined> {
  const ca = new X509Certificate(state.cas.client.cert);
  for (const m of members) {
    const served = await servedCertificate(view.urlOf(m)).catch(() => undefined);
    if (!served || !new X509Certificate(served).checkIssued(ca)) return view.podName(m);
  }
  return undefined;
}

function what(phase: CaRotationPhase): string {
  return phase === 'trust'
    ? 'rotating the CAs, members trusting the new beside the old'
    : 'rotating the CAs, dropping the old';
}

/** Made before the phase's certificates were written (creation times are whole seconds: a tie counts as before). */
function madeBefore(pod: Pod, since: string): boolean {
  const made = Date.parse(pod.metadata.creationTimestamp ?? '');
  return !(made > Date.parse(since));
}
