import { exponentialDelay } from './backoff';

/** What the queue reports, for Prometheus metrics. */
export interface QueueMetrics {
  depth(n: number): void;
  added(): void;
  retried(): void;
  /** Seconds a key waited between being added and being picked up. */
  latency(seconds: number): void;
}

export interface RateLimiterOptions {
  /** First retry delay of a failing key. @default 5 ms (controller-runtime) */
  readonly baseDelayMs?: number;
  /** Longest retry delay of a failing key. @default 1000 s (controller-runtime) */
  readonly maxDelayMs?: number;
  /** Overall retry rate, shared by all keys (token bucket). @default 10 per second */
  readonly qps?: number;
  /** @default 100 */
  readonly burst?: number;
}

/**
 * The larger of a per-key exponential backoff and an overall token bucket, as client-go's
 * default controller rate limiter: one failing key backs off alone, and a storm of failures
 * cannot retry faster than `qps` in total.
 */
export class RateLimiter {
  private readonly failures = new Map<string, number>();
  private tokens: number;
  private last: number;
  private readonly base: number;
  private readonly max: number;
  private readonly qps: number;
  private readonly burst: number;

  constructor(
    options: RateLimiterOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.base = options.baseDelayMs ?? 5;
    this.max = options.maxDelayMs ?? 1_000_000;
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** Delay before the next retry of `key`, counting this as one more failure. */
  when(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    return Math.max(exponentialDelay(n, this.base, this.max), this.bucketDelay());
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The key succeeded: its backoff starts over. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  private bucketDelay(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
}

/**
 * How soon a key should be processed. `low` is for work nobody is waiting on: the initial list
 * of a starting controller and periodic resyncs, which at 10,000 objects are 10,000 reconciles
 * that (almost always) change nothing. `normal` is for everything else: an object created,
 * changed or deleted, a child's change, a retry. (controller-runtime's priority queue gives the
 * initial list and resyncs its LowPriority for the same reason.)
 */
export type Priority = 'normal' | 'low';

/** A first-in first-out list of keys that does not copy on every take, as `Array.shift` does. */
class Fifo {
  private items: string[] = [];
  private head = 0;

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  get empty(): boolean {
    return this.head >= this.items.length;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

export interface WorkQueueOptions {
  /**
   * Whether `low` keys wait for `normal` ones (false: one first-in first-out list, every key
   * `normal`). @default true
   */
  readonly priorities?: boolean;
  /**
   * While both kinds wait, every this-many-th key taken is a `low` one, so a steady stream of
   * events cannot starve the initial list or a resync. @default 10
   */
  readonly lowEvery?: number;
}

/**
 * A work queue with client-go semantics:
 * - a key added several times before it is processed is processed once (de-duplication), at the
 *   highest priority it was added with;
 * - a key is never handed to two workers at once: added while processing, it is marked dirty
 *   and re-queued when `done` is called (per-key serialization);
 * - `normal` keys go before `low` ones (see Priority), in the order they were added, but not
 *   forever: see `lowEvery`;
 * - `addAfter` delays a key (requeue-after), `addRateLimited` delays it by the rate limiter.
 */
export class WorkQueue {
  private readonly normal = new Fifo();
  private readonly low = new Fifo();
  /** Keys in one of the lists, with the list that counts (a promoted key's `low` entry is skipped). */
  private readonly queued = new Map<string, Priority>();
  /** Keys added and not yet taken, with the priority they were added at. */
  private readonly dirty = new Map<string, Priority>();
  /** Keys being processed, with the priority they were taken at. */
  private readonly processing = new Map<string, Priority>();
  private readonly addedAt = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; priority: Priority; timer: NodeJS.Timeout }>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  /** A hand-over to waiting workers is scheduled (see wakeGetters). */
  private waking = false;
  private normalInARow = 0;
  private readonly priorities: boolean;
  private readonly lowEvery: number;

  constructor(
    readonly rateLimiter: RateLimiter = new RateLimiter(),
    private readonly metrics?: QueueMetrics,
    options: WorkQueueOptions = {},
  ) {
    this.priorities = options.priorities ?? true;
    this.lowEvery = Math.max(2, options.lowEvery ?? 10);
  }

  add(key: string, priority: Priority = 'normal'): void {
    if (this.shuttingDown) return;
    const p = this.priorities ? priority : 'normal';
    const was = this.dirty.get(key);
    if (was !== undefined) {
      if (was === 'low' && p === 'normal') this.promote(key);
      return;
    }
    this.metrics?.added();
    this.dirty.set(key, p);
    this.addedAt.set(key, performance.now());
    if (this.processing.has(key)) return;
    this.push(key, p);
  }

  /** Adds `key` after `ms`; an earlier pending add of the same key wins (at the higher priority). */
  addAfter(key: string, ms: number, priority: Priority = 'normal'): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key, priority);
      return;
    }
    const at = Date.now() + ms;
    const pending = this.waiting.get(key);
    if (pending && pending.at <= at) {
      if (priority === 'normal') pending.priority = 'normal';
      return;
    }
    if (pending) clearTimeout(pending.timer);
    const entry = {
      at,
      priority: pending?.priority === 'normal' ? 'normal' : priority,
      timer: setTimeout(() => {
        this.waiting.delete(key);
        this.add(key, entry.priority);
      }, ms),
    };
    entry.timer.unref();
    this.waiting.set(key, entry);
  }

  addRateLimited(key: string, priority: Priority = 'normal'): void {
    this.metrics?.retried();
    this.addAfter(key, this.rateLimiter.when(key), priority);
  }

  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * Moves every queued normal key that `keep` does not keep to the low list, after the low keys
   * already there, in their order. Added again at normal, such a key is promoted as any low key is.
   */
  demote(keep: (key: string) => boolean): void {
    for (const [key, priority] of this.queued) {
      if (priority !== 'normal' || keep(key)) continue;
      this.queued.set(key, 'low');
      this.dirty.set(key, 'low');
      this.low.push(key);
    }
  }

  /** The priority `key` was taken at, while it is processed (for its retry or requeue-after). */
  priorityOf(key: string): Priority {
    return this.processing.get(key) ?? 'normal';
  }

  /** The next key to process; undefined once the queue is shut down and drained of waiters. */
  get(): Promise<string | undefined> {
    const key = this.take();
    if (key !== undefined) {
      const taken = this.startProcessing(key);
      // Handed over through the event loop, not as a resolved promise: workers whose reconciles
      // need no I/O (a relist's thousands of no-ops) would otherwise run back to back in
      // microtasks and hold off every watch event, health probe and scrape until the queue is
      // empty — including the event of a resource created meanwhile, which the priorities are for.
      return new Promise((resolve) => {
        setImmediate(() => {
          resolve(taken);
        });
      });
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    const again = this.dirty.get(key);
    if (again !== undefined) this.push(key, again);
  }

  get length(): number {
    return this.queued.size;
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Stops handing out work: waiting getters get undefined; delayed adds are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.normal.clear();
    this.low.clear();
    this.queued.clear();
    this.dirty.clear();
    this.metrics?.depth(0);
    this.getters.splice(0).forEach((g) => {
      g(undefined);
    });
  }

  private push(key: string, priority: Priority): void {
    this.queued.set(key, priority);
    (priority === 'low' ? this.low : this.normal).push(key);
    this.metrics?.depth(this.queued.size);
    this.wakeGetters();
  }

  /**
   * Hands queued keys to waiting workers from the event loop, not at once: an informer adds a
   * key for an update's old and new object in one turn (and a watch chunk's events in one
   * read), and a key handed out at the first add would be marked dirty by the second and
   * reconciled twice. Taken this way, they are one, in priority order.
   */
  private wakeGetters(): void {
    if (this.waking || this.getters.length === 0) return;
    this.waking = true;
    setImmediate(() => {
      this.waking = false;
      while (this.getters.length > 0) {
        const key = this.take();
        if (key === undefined) return;
        this.getters.shift()?.(this.startProcessing(key));
      }
    });
  }

  /** A `low` key added again at `normal`: it moves to the normal list (its old entry is skipped). */
  private promote(key: string): void {
    this.dirty.set(key, 'normal');
    if (this.queued.get(key) === 'low') {
      this.queued.set(key, 'normal');
      this.normal.push(key);
    }
  }

  /** Normal keys first; a low one when none waits, and every `lowEvery`-th take while both wait. */
  private take(): string | undefined {
    const lowsTurn = this.normalInARow >= this.lowEvery - 1;
    const order: [Fifo, Priority][] = lowsTurn
      ? [
          [this.low, 'low'],
          [this.normal, 'normal'],
        ]
      : [
          [this.normal, 'normal'],
          [this.low, 'low'],
        ];
    for (const [list, priority] of order) {
      const key = this.shiftFrom(list, priority);
      if (key === undefined) continue;
      this.normalInARow = priority === 'normal' ? this.normalInARow + 1 : 0;
      return key;
    }
    return undefined;
  }

  /** The next key of a list that still belongs there (promoted keys left a stale `low` entry). */
  private shiftFrom(list: Fifo, priority: Priority): string | undefined {
    for (let key = list.shift(); key !== undefined; key = list.shift()) {
      if (this.queued.get(key) === priority) {
        this.queued.delete(key);
        return key;
      }
    }
    return undefined;
  }

  private startProcessing(key: string): string {
    const priority = this.dirty.get(key) ?? 'normal';
    this.dirty.delete(key);
    this.processing.set(key, priority);
    const added = this.addedAt.get(key);
    if (added !== undefined) {
      this.metrics?.latency((performance.now() - added) / 1000);
      this.addedAt.delete(key);
    }
    this.metrics?.depth(this.queued.size);
    return key;
  }
}
