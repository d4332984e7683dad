import type { Clock } from '../../../../operator/runtime/queue/backoff';

/**
 * A clock whose time moves only when code sleeps on it or a test advances it: a retry loop then
 * runs at full speed and the test reads the delays it asked for, however busy the machine is.
 */
export class VirtualClock implements Clock {
  private time = 0;
  /** Every delay asked of `sleep`, in order. */
  readonly sleeps: number[] = [];

  now(): number {
    return this.time;
  }

  advance(ms: number): void {
    this.time += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    this.time += ms;
    // Resolved from the event loop, not as a microtask, so a loop that keeps failing still lets
    // the test's own callbacks (and the abort) run between its turns.
    return new Promise((resolve) => {
      if (signal?.aborted) resolve();
      else setImmediate(resolve);
    });
  }
}
