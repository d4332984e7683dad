/**
 * The membership step's last: give back a member's free pages. etcd's database file never
 * shrinks by itself — compaction frees pages inside it, only a defragmentation returns them to
 * the disk, and the member answers nothing else while it runs. So one member at a time, only on a
 * settled cluster (every member healthy, no version rolling), the leader last (defragmenting it
 * would stall every write), and only past the spec's threshold.
 */
import { parseQuantity } from '../contract/quantity';
import type { MembershipResult } from './topology';
import type { EtcdClusterSpec } from './api';
import { defragment, type EtcdMember, memberStatus } from './etcd-api';
import type { ClusterView } from './membership';

/** What `spec.defragmentation` says when it is omitted. */
const DEFAULTS = { fragmentedPercent: 50, minimumSize: '100Mi' } as const;

const STEP_POLL_MS = 1000;

/** `n` bytes for a message: MiB with one decimal. */
function mib(n: number): string {
  return `${(n / 2 ** 20).toFixed(1)} MiB`;
}

/** The share of a member's database file that is free pages, in percent (0 when it has not said). */
function freePercent(sizes: { dbSizeBytes?: number; dbSizeInUseBytes?: number }): number {
  const { dbSizeBytes: size = 0, dbSizeInUseBytes: inUse = size } = sizes;
  return size > 0 ? ((size - inUse) / size) * 100 : 0;
}

/**
 * 6. Settled: defragment the most fragmented member past the threshold, non-leaders first; once a
 * step, with an Event saying how much it gave back. Undefined when there is nothing to do.
 */
export async function defragmentOne(
  view: ClusterView,
  spec: EtcdClusterSpec['defragmentation'],
): Promise<MembershipResult | undefined> {
  const { members } = view;
  const { wantVersion, current } = view.facts;
  const settled =
    members.every(view.healthy) &&
    current.version === wantVersion &&
    current.partition === 0 &&
    members.every((m) => view.versionOf(m) === wantVersion);
  if (!settled) return undefined;
  const percent = spec?.fragmentedPercent ?? DEFAULTS.fragmentedPercent;
  const minimum = parseQuantity(spec?.minimumSize ?? DEFAULTS.minimumSize);
  const due = members.filter((m) => {
    const sizes = view.sizesOf(m);
    return (sizes.dbSizeBytes ?? 0) >= minimum && freePercent(sizes) >= percent;
  });
  if (!due.length) return undefined;
  const leader = view.leaderId;
  // The leader last; among the rest, the most fragmented first.
  const [next] = [...due].sort(
    (a, b) =>
      Number(a.id === leader) - Number(b.id === leader) || freePercent(view.sizesOf(b)) - freePercent(view.sizesOf(a)),
  ) as [EtcdMember];
  const name = view.podName(next);
  const before = view.sizesOf(next).dbSizeBytes ?? 0;
  const free = freePercent(view.sizesOf(next)).toFixed(0);
  const url = view.urlOf(next);
  await view.write('Defragment', next, `${free} % of its database is free pages (the spec says ${percent} %)`, () =>
    defragment(url),
  );
  const after = await memberStatus(url).then(
    (s) => s.dbSize,
    () => undefined,
  );
  const sizes = after === undefined ? '' : `: ${mib(before)} → ${mib(after)}`;
  return view.unchanged({ reason: 'Defragmenting', message: `defragmented ${name}${sizes}` }, STEP_POLL_MS, [
    {
      type: 'Normal',
      reason: 'Defragmented',
      message: `Defragmented member ${name}${sizes} (${free} % was free pages)`,
    },
  ]);
}
