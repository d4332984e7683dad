/**
 * Standbys left behind by a failover. A standby streams from `<name>-rw`; when the primary hangs,
 * its WAL receiver gives up on the stream (wal_receiver_timeout) and connects again — to the hung
 * primary still, until the failover moves `<name>-rw` — and that connection hangs for good:
 * PostgreSQL's WAL receiver waits on its connection without a timeout (connect_timeout is not
 * applied there), and a hung server's kernel still accepts it. Such a standby never streams from
 * the new primary, and with synchronous standbys the new primary's commits wait on it. A restart
 * is what ends it: the standby connects again through `<name>-rw`, to the primary now there.
 */
import type { PodRestart } from '../contract';
import type { InstanceObservation } from './instances';

/** How long a standby may not stream from a serving primary before it is restarted. */
export const STUCK_STANDBY_MS = 20_000;

export interface StuckStandbyInput {
  readonly observations: readonly InstanceObservation[];
  readonly primary: string;
  /** Since when the primary has served (`Available` true). */
  readonly servingSince?: Date;
  readonly now: Date;
}

/**
 * The first standby that has not streamed for `STUCK_STANDBY_MS` from a primary that serves, and
 * whose pod was made before the primary began serving — a pod made since has connected to it
 * already, and restarting it again would not help (so each is restarted once per failover).
 */
export function stuckStandby(input: StuckStandbyInput): PodRestart | undefined {
  const { servingSince, now, primary } = input;
  if (!servingSince) return undefined;
  for (const o of input.observations) {
    const uid = o.pod?.metadata.uid;
    const made = Date.parse(o.pod?.metadata.creationTimestamp ?? '');
    const since = o.notStreamingSince;
    if (o.name === primary || o.answer?.standby !== true || o.answer.streaming !== false || !uid || !since) continue;
    const waited = now.getTime() - since.getTime();
    if (waited < STUCK_STANDBY_MS || !(made < servingSince.getTime())) continue;
    return {
      name: o.name,
      uid,
      reason: `it has not streamed from the primary ${primary} for ${String(Math.round(waited / 1000))} s (its WAL receiver may hang on a former primary): restarted, to connect to the primary again`,
    };
  }
  return undefined;
}

/**
 * When this process first saw each standby's pod not streaming (by uid, per Database), forgotten
 * once it streams or is gone. In memory: a restart of the operator starts the count again, which
 * only delays a restart.
 */
export class NotStreamingClock {
  private readonly byDatabase = new Map<string, Map<string, Date>>();

  /** Records what the standbys answered now; returns each one's first moment not streaming. */
  observe(
    database: string,
    standbys: readonly { readonly uid: string; readonly streaming: boolean }[],
    now: Date,
  ): (uid: string) => Date | undefined {
    const before = this.byDatabase.get(database) ?? new Map<string, Date>();
    const after = new Map<string, Date>();
    for (const { uid, streaming } of standbys) if (!streaming) after.set(uid, before.get(uid) ?? now);
    if (after.size > 0) this.byDatabase.set(database, after);
    else this.byDatabase.delete(database);
    return (uid) => after.get(uid);
  }
}
