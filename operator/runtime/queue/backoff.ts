/** Exponential backoff with an upper bound, and optional jitter. */
export function exponentialDelay(failures: number, baseMs: number, maxMs: number): number {
  if (failures <= 0) return 0;
  // 2^(n-1) * base, computed without overflowing for large n.
  const exp = Math.min(failures - 1, 60);
  return Math.min(maxMs, baseMs * 2 ** exp);
}

/** Adds up to ±`fraction` of random spread, so many clients do not retry in lockstep. */
export function jitter(ms: number, fraction = 0.2): number {
  return Math.max(0, ms * (1 + (Math.random() * 2 - 1) * fraction));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The time source of a retry loop: the real one by default; a test passes a virtual one so it can
 * count the delays a loop asked for instead of timing them (controller-runtime's clock injection).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = { now: () => Date.now(), sleep };
