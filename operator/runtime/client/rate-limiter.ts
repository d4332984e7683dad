import { type Clock, realClock } from '../queue';

/**
 * A client-side limit on requests to the API server: `qps` a second on average, up to `burst` at
 * once after a quiet spell (a token bucket, kept as the time the next request may go, so requests
 * asking together are spaced out in the order they asked). Off unless asked for: the API server's
 * priority and fairness protects it, and a limit slows every reconcile (controller-runtime's
 * QPS 20 would take a minute and a half for 1000 resources' first writes).
 */
export class RateLimiter {
  private readonly intervalMs: number;
  /** How far ahead of now the next request may be reserved: the burst, less the one going now. */
  private readonly toleranceMs: number;
  /** When the next request would be due if none had been saved up. */
  private dueAt = 0;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new Error(`a rate limit needs a positive QPS, got ${qps}`);
    this.intervalMs = 1000 / qps;
    this.toleranceMs = Math.max(0, Math.ceil(burst) - 1) * this.intervalMs;
  }

  /** Waits until one more request may go; resolves with how long it waited, in milliseconds. */
  async acquire(): Promise<number> {
    const now = this.clock.now();
    const due = Math.max(this.dueAt, now);
    const waitMs = Math.max(0, due - this.toleranceMs - now);
    // Reserved before waiting: requests asking meanwhile queue behind it.
    this.dueAt = due + this.intervalMs;
    if (waitMs > 0) await this.clock.sleep(waitMs);
    return waitMs;
  }
}
