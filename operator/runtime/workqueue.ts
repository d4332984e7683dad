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
 * A work queue with client-go semantics:
 * - a key added several times before it is processed is processed once (de-duplication);
 * - a key is never handed to two workers at once: added while processing, it is marked dirty
 *   and re-queued when `done` is called (per-key serialization);
 * - `addAfter` delays a key (requeue-after), `addRateLimited` delays it by the rate limiter.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;

  constructor(
    readonly rateLimiter: RateLimiter = new RateLimiter(),
    private readonly metrics?: QueueMetrics,
  ) {}

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.added();
    this.dirty.add(key);
    this.addedAt.set(key, performance.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `ms`; an earlier pending add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const pending = this.waiting.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.waiting.set(key, { at, timer });
  }

  addRateLimited(key: string): void {
    this.metrics?.retried();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** The next key to process; undefined once the queue is shut down and drained of waiters. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.startProcessing(key));
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
  }

  get length(): number {
    return this.queue.length;
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Stops handing out work: waiting getters get undefined; delayed adds are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.queue.splice(0);
    this.dirty.clear();
    this.metrics?.depth(0);
    this.getters.splice(0).forEach((g) => {
      g(undefined);
    });
  }

  private push(key: string): void {
    const getter = this.getters.shift();
    if (getter) {
      getter(this.startProcessing(key));
      return;
    }
    this.queue.push(key);
    this.metrics?.depth(this.queue.length);
  }

  private startProcessing(key: string): string {
    this.dirty.delete(key);
    this.processing.add(key);
    const added = this.addedAt.get(key);
    if (added !== undefined) {
      this.metrics?.latency((performance.now() - added) / 1000);
      this.addedAt.delete(key);
    }
    this.metrics?.depth(this.queue.length);
    return key;
  }
}
