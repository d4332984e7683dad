import type { Logger } from 'pino';
import { BuiltinTypes, type Lease, type LeaseSpec } from '../../../constructs/contract';
import { type Clock, realClock } from '../queue';
import { isConflict, isNotFound, type KubeClient, microTime } from '../client';

export interface LeaderElectionOptions {
  readonly namespace: string;
  /** Lease name, e.g. `memcached-operator-leader`. */
  readonly name: string;
  /** Unique per process, e.g. the pod name plus a random suffix. */
  readonly identity: string;
  /** How long a lease stays valid without renewal. @default 15000 */
  readonly leaseDurationMs?: number;
  /** The leader gives up if it cannot renew for this long. @default 10000 */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts. @default 2000 */
  readonly retryPeriodMs?: number;
  readonly logger: Logger;
  /** Told when this process gains or loses the lease. @default none */
  readonly onLeaderChange?: (leading: boolean) => void;
  /** Labels of the Lease when this process creates it (shard leases carry their set's). @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** The time renewals are paced and leases judged by: a virtual one in unit tests. @default the real one */
  readonly clock?: Clock;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics:
 * - a follower takes the lease only when its holder has not renewed it for a whole lease
 *   duration, measured on the follower's own clock from when it last saw the record change
 *   (so clock skew between machines does not matter);
 * - updates carry the resourceVersion, so two candidates can never both win;
 * - the leader renews every retry period and steps down when it could not renew within the
 *   renew deadline;
 * - `release` empties the holder on graceful shutdown, so a successor need not wait.
 */
export class LeaderElector {
  private readonly observer: LeaseObserver;
  private leading = false;
  private lease?: Lease;

  private readonly clock: Clock;

  constructor(
    private readonly client: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.clock = options.clock ?? realClock;
    this.observer = new LeaseObserver(this.clock);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private get leaseDurationMs() {
    return this.options.leaseDurationMs ?? 15_000;
  }
  private get renewDeadlineMs() {
    return this.options.renewDeadlineMs ?? 10_000;
  }
  private get retryPeriodMs() {
    return this.options.retryPeriodMs ?? 2_000;
  }

  /** When this process took the lease (its acquireTime), while it holds it. */
  get acquiredAt(): string | undefined {
    return this.leading ? this.lease?.spec.acquireTime : undefined;
  }

  /** One attempt to take (or renew) the lease, without waiting: whether this process now holds it. */
  async tryOnce(): Promise<boolean> {
    const won = await this.tryAcquireOrRenew();
    if (won) this.setLeading(true);
    return won;
  }

  /** Resolves once this process leads; resolves false if `signal` aborted first. */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const log = this.options.logger;
    log.info(
      { lease: `${this.options.namespace}/${this.options.name}`, identity: this.options.identity },
      'attempting to acquire leader lease',
    );
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) {
        this.setLeading(true);
        log.info({ identity: this.options.identity }, 'successfully acquired lease');
        return true;
      }
      await this.clock.sleep(this.retryPeriodMs, signal);
    }
    return false;
  }

  /**
   * Keeps renewing until `signal` aborts (resolves true) or the lease is lost (resolves false).
   */
  async holdUntilLost(signal: AbortSignal): Promise<boolean> {
    let lastRenew = this.clock.now();
    while (!signal.aborted) {
      await this.clock.sleep(this.retryPeriodMs, signal);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by an abort during the await above
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = this.clock.now();
      } else if (this.clock.now() - lastRenew >= this.renewDeadlineMs || this.heldByOther()) {
        this.setLeading(false);
        this.options.logger.error({ identity: this.options.identity }, 'leader lease lost');
        return false;
      }
    }
    return true;
  }

  /** Gives the lease up (holder emptied, duration 1 s) if this process holds it. */
  async release(): Promise<void> {
    if (!this.leading || !this.lease) return;
    const now = microTime(new Date(this.clock.now()));
    try {
      await this.client.update(BuiltinTypes.Lease, {
        ...this.lease,
        spec: { ...this.lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
      });
      this.options.logger.info({ identity: this.options.identity }, 'released leader lease');
    } catch (err) {
      this.options.logger.warn({ err }, 'could not release leader lease');
    }
    this.setLeading(false);
  }

  private heldByOther(): boolean {
    const holder = this.lease?.spec.holderIdentity;
    return !!holder && holder !== this.options.identity;
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.options.onLeaderChange?.(leading);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date(this.clock.now());
    const me = this.options.identity;
    const desired: LeaseSpec = {
      holderIdentity: me,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      renewTime: microTime(now),
    };
    try {
      let current: Lease;
      try {
        current = await this.client.get(BuiltinTypes.Lease, this.options.name, this.options.namespace);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.lease = await this.client.create(
          BuiltinTypes.Lease,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: {
              name: this.options.name,
              namespace: this.options.namespace,
              ...(this.options.labels ? { labels: { ...this.options.labels } } : {}),
            },
            spec: { ...desired, acquireTime: microTime(now), leaseTransitions: 0 },
          },
          this.options.namespace,
        );
        this.observer.unchangedFor(this.lease);
        return true;
      }
      this.lease = current;
      const holder = current.spec.holderIdentity ?? '';
      const expired = this.observer.unchangedFor(current) >= this.leaseDurationMs;
      if (holder && holder !== me && !expired) return false;

      const takingOver = holder !== me;
      const spec: LeaseSpec = {
        ...desired,
        acquireTime: takingOver ? microTime(now) : (current.spec.acquireTime ?? microTime(now)),
        leaseTransitions: (current.spec.leaseTransitions ?? 0) + (takingOver && holder ? 1 : 0),
      };
      this.lease = await this.client.update(BuiltinTypes.Lease, { ...current, spec });
      this.observer.unchangedFor(this.lease);
      return true;
    } catch (err) {
      if (!isConflict(err)) this.options.logger.warn({ err }, 'leader election attempt failed');
      return false;
    }
  }
}

/**
 * When each Lease's record last changed, on this process's clock (client-go's observedTime): a
 * holder counts as live while its record keeps changing within the lease duration, whatever the
 * clocks of the machines say.
 */
export class LeaseObserver {
  private readonly seen = new Map<string, { record: string; at: number }>();

  constructor(private readonly clock: Pick<Clock, 'now'> = realClock) {}

  /** Notes the Lease's record; returns how long it has stayed unchanged, in ms (0: it just changed). */
  unchangedFor(lease: Lease): number {
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    const record = JSON.stringify(lease.spec);
    const seen = this.seen.get(key);
    const now = this.clock.now();
    if (seen?.record !== record) {
      this.seen.set(key, { record, at: now });
      return 0;
    }
    return now - seen.at;
  }
}
