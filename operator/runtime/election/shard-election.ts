import { BuiltinTypes, type Lease } from '../../../constructs/contract';
import { type Clock, realClock } from '../queue';
import type { KubeClient } from '../client';
import { LeaderElector, type LeaderElectionOptions, LeaseObserver } from './leader-election';
import { type HashRange, rangesOverlap, shardRange, shardSelector } from '../cache';

/** The label every shard Lease of one operator carries: its set, across shard counts. */
export const SHARD_SET_LABEL = 'operator-kit.cdk8s.io/shard-set';
/** The label with the shard count of the Lease's set, e.g. "4". */
export const SHARD_COUNT_LABEL = 'operator-kit.cdk8s.io/shards';
/** The label with the shard's index, e.g. "0". */
export const SHARD_INDEX_LABEL = 'operator-kit.cdk8s.io/shard';

export interface ShardElectionOptions extends Omit<LeaderElectionOptions, 'name' | 'labels' | 'onLeaderChange'> {
  /** The operator's lease name; shard i of N is the Lease `<name>-shard-<i>-of-<N>`. */
  readonly name: string;
  /** How many shards the namespace hash space is cut into. */
  readonly shards: number;
  /** Told when this process takes its shard (its index) or loses it (undefined). @default none */
  readonly onShardChange?: (shard: number | undefined) => void;
}

/** A shard this process holds. */
export interface HeldShard {
  readonly index: number;
  readonly count: number;
  readonly range: HashRange;
}

/**
 * Shard ownership on Leases, one per range: `<name>-shard-<i>-of-<N>`, each with leader
 * election's rules (see LeaderElector). A process holds at most one shard; one without a shard
 * is a standby that tries every Lease each retry period and takes the first that is free or
 * whose holder stopped renewing.
 *
 * Changing the shard count starts a new set of Leases beside the old one, and their ranges
 * overlap. Of two live Leases of different counts whose ranges overlap, the one taken first
 * (acquireTime, then name) reconciles; the other waits (`waitForHandover`) until it is released
 * or expires, and a holder that finds an earlier overlapping Lease later steps down. So a range
 * is never reconciled by two processes, and an old replica's graceful release hands its range on
 * within a retry period.
 */
export class ShardElector {
  private readonly electors: LeaderElector[];
  private held?: HeldShard;
  /** Whether this process's range was let go by every earlier holder, so that it reconciles it. */
  private handedOver = false;
  /** When each other Lease's record last changed, on this process's clock. */
  private readonly observer: LeaseObserver;
  private readonly clock: Clock;

  constructor(
    private readonly client: KubeClient,
    private readonly options: ShardElectionOptions,
  ) {
    const { shards, name } = options;
    this.clock = options.clock ?? realClock;
    this.observer = new LeaseObserver(this.clock);
    this.electors = Array.from(
      { length: shards },
      (_, i) =>
        new LeaderElector(client, {
          ...options,
          name: shardLeaseName(name, i, shards),
          labels: { [SHARD_SET_LABEL]: name, [SHARD_COUNT_LABEL]: String(shards), [SHARD_INDEX_LABEL]: String(i) },
          logger: options.logger.child({ shard: `${i}-of-${shards}` }),
        }),
    );
  }

  get shard(): HeldShard | undefined {
    return this.held;
  }

  private get retryPeriodMs(): number {
    return this.options.retryPeriodMs ?? 2_000;
  }

  /** Resolves with the shard this process took; undefined if `signal` aborted first. */
  async acquire(signal: AbortSignal): Promise<HeldShard | undefined> {
    const { shards, identity } = this.options;
    this.options.logger.info({ shards, identity }, 'standing by for a shard');
    // Start the round at a different shard in each process, so that replicas starting together
    // do not all contend for shard 0 first.
    const first = Math.floor(Math.random() * shards);
    while (!signal.aborted) {
      for (let k = 0; k < shards; k++) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by an abort during an await below
        if (signal.aborted) return undefined;
        const index = (first + k) % shards;
        const elector = this.electors[index];
        if (elector && (await elector.tryOnce())) {
          this.held = { index, count: shards, range: shardRange(index, shards) };
          this.options.logger.info({ shard: index, shards, identity }, 'took a shard');
          this.options.onShardChange?.(index);
          return this.held;
        }
      }
      await this.clock.sleep(this.retryPeriodMs, signal);
    }
    return undefined;
  }

  /**
   * Resolves true once no live Lease of another shard count, taken before this one, overlaps the
   * held range (so its holder has stopped reconciling it); false if `signal` aborted first.
   */
  async waitForHandover(signal: AbortSignal): Promise<boolean> {
    let logged = false;
    while (!signal.aborted) {
      const blocking = await this.earlierOverlapping();
      if (blocking.length === 0) {
        this.handedOver = true;
        return true;
      }
      if (!logged) {
        this.options.logger.info({ waitingFor: blocking }, 'waiting for the previous holders of this range to let go');
        logged = true;
      }
      await this.clock.sleep(this.retryPeriodMs, signal);
    }
    return false;
  }

  /**
   * Keeps renewing until `signal` aborts (resolves true), or the Lease is lost or, once handed
   * over, an earlier overlapping Lease turns up (resolves false: the process must stop
   * reconciling). Call it as soon as the shard is taken: renewing cannot wait for the handover.
   */
  async holdUntilLost(signal: AbortSignal): Promise<boolean> {
    const elector = this.heldElector();
    const stop = new AbortController();
    const both = AbortSignal.any([signal, stop.signal]);
    const [kept, clear] = await Promise.all([
      elector.holdUntilLost(both).finally(() => {
        stop.abort();
      }),
      this.watchOverlaps(both).finally(() => {
        stop.abort();
      }),
    ]);
    if (!(kept && clear)) this.options.onShardChange?.(undefined);
    return kept && clear;
  }

  /**
   * Whether the API server applies shard selectors (KEP-5866's gate on): a list of the shard
   * Leases with the held range's selector comes back with `metadata.shardInfo`. A failed probe
   * counts as no (the informers then filter themselves, which is right either way).
   */
  async serverFilters(signal: AbortSignal): Promise<boolean> {
    if (!this.held || signal.aborted) return false;
    try {
      const list = await this.client.list(BuiltinTypes.Lease, this.options.namespace, {
        labelSelector: `${SHARD_SET_LABEL}=${this.options.name}`,
        shardSelector: shardSelector(this.held.range),
        limit: '1',
      });
      return !!list.metadata.shardInfo;
    } catch (err) {
      this.options.logger.warn({ err }, 'cannot ask the API server whether it shards lists; filtering here');
      return false;
    }
  }

  async release(): Promise<void> {
    if (!this.held) return;
    await this.heldElector().release();
    this.held = undefined;
    this.handedOver = false;
    this.options.onShardChange?.(undefined);
  }

  private heldElector(): LeaderElector {
    const elector = this.held && this.electors[this.held.index];
    if (!elector) throw new Error('no shard held');
    return elector;
  }

  private async watchOverlaps(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      await this.clock.sleep(this.retryPeriodMs, signal);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by an abort during the await above
      if (signal.aborted) break;
      // Before the handover, an earlier holder is what this process waits on, not a conflict.
      if (!this.handedOver) continue;
      const blocking = await this.earlierOverlapping();
      if (blocking.length) {
        this.options.logger.error({ blocking }, 'an earlier holder of this range is live: stepping down');
        return false;
      }
    }
    return true;
  }

  /** Names of the live Leases of other shard counts that overlap the held range and were taken first. */
  private async earlierOverlapping(): Promise<string[]> {
    const held = this.held;
    const mine = held && this.electors[held.index]?.acquiredAt;
    if (!held || !mine) return [];
    const mineName = shardLeaseName(this.options.name, held.index, held.count);
    let leases: Lease[];
    try {
      const list = await this.client.list(BuiltinTypes.Lease, this.options.namespace, {
        labelSelector: `${SHARD_SET_LABEL}=${this.options.name}`,
      });
      leases = list.items;
    } catch (err) {
      // Unknown is not clear: wait, and ask again next period.
      this.options.logger.warn({ err }, 'cannot list the shard leases');
      return ['(unknown: the list failed)'];
    }
    return leases
      .filter((lease) => {
        const other = leaseShard(lease);
        if (!other || other.count === held.count || !rangesOverlap(other.range, held.range)) return false;
        if (!this.isLive(lease)) return false;
        const theirs = lease.spec.acquireTime ?? '';
        return theirs < mine || (theirs === mine && lease.metadata.name < mineName);
      })
      .map((lease) => `${lease.metadata.name} (${lease.spec.holderIdentity ?? ''})`);
  }

  /** Held, and renewed within its duration as this process has watched it. */
  private isLive(lease: Lease): boolean {
    if (!lease.spec.holderIdentity) return false;
    return this.observer.unchangedFor(lease) < (lease.spec.leaseDurationSeconds ?? 15) * 1000;
  }
}

export function shardLeaseName(name: string, index: number, count: number): string {
  return `${name}-shard-${index}-of-${count}`;
}

/** The shard a Lease of the set stands for, from its labels. */
function leaseShard(lease: Lease): HeldShard | undefined {
  const labels = lease.metadata.labels ?? {};
  const count = Number(labels[SHARD_COUNT_LABEL]);
  const index = Number(labels[SHARD_INDEX_LABEL]);
  if (!Number.isInteger(count) || !Number.isInteger(index) || count < 1 || index < 0 || index >= count)
    return undefined;
  return { index, count, range: shardRange(index, count) };
}
