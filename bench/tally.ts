import type { KubeObject, ResourceType } from '../constructs/contract';
import pino from 'pino';
import type { KubeClient } from '../operator/runtime/client/client';
import { Informer } from '../operator/runtime/cache/informer';

/**
 * Counts the objects of one namespace (or several) that satisfy a predicate, from a watch, and says when the
 * count reaches a target. The benchmarks used to poll with a full list every 200 ms; at N = 1000
 * each list of Deployments is megabytes the API server serializes, on the 2 cores the contenders
 * share, so the instrument slowed what it measured (and the slower contender more). A watch
 * costs the server one event per change, which it sends to the contender's own informers anyway.
 */
export class Tally<T extends KubeObject = KubeObject> {
  private readonly matching = new Set<string>();
  private readonly stop = new AbortController();
  private readonly informer: Informer<T>;
  private readonly running: Promise<void>;
  private waiter?: { target: number; resolve: (at: number) => void };

  private constructor(
    client: KubeClient,
    type: ResourceType<T>,
    namespace: string | readonly string[],
    private readonly predicate: (obj: T) => boolean,
  ) {
    this.informer = new Informer<T>(client, type, {
      ...(typeof namespace === 'string' ? { namespace } : { namespaces: namespace }),
      logger: pino({ level: 'warn' }),
      resyncPeriodMs: 0,
    });
    const update = (obj: T) => {
      const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
      if (this.predicate(obj)) this.matching.add(key);
      else this.matching.delete(key);
      this.check();
    };
    this.informer.addHandler({
      onAdd: update,
      onUpdate: (_old, obj) => {
        update(obj);
      },
      onDelete: (obj) => {
        this.matching.delete(`${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`);
        this.check();
      },
    });
    this.running = this.informer.run(this.stop.signal);
  }

  /** Starts watching; resolves once the first list is in, so no change after this is missed. */
  static async start<T extends KubeObject>(
    client: KubeClient,
    type: ResourceType<T>,
    namespace: string | readonly string[],
    predicate: (obj: T) => boolean,
  ): Promise<Tally<T>> {
    const tally = new Tally<T>(client, type, namespace, predicate);
    await tally.informer.waitForSync();
    return tally;
  }

  /**
   * Milliseconds from `t0` (a `performance.now()`) until `target` objects match; rejects after
   * `timeoutMs` from t0.
   */
  async reached(target: number, t0: number, timeoutMs: number, what: string): Promise<number> {
    if (this.matching.size >= target) return performance.now() - t0;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await new Promise<number>((resolve, reject) => {
        this.waiter = { target, resolve };
        timer = setTimeout(
          () => {
            reject(
              new Error(
                `timed out after ${timeoutMs / 1000} s waiting for ${what} (${this.matching.size} of ${target})`,
              ),
            );
          },
          Math.max(0, t0 + timeoutMs - performance.now()),
        );
      }).then((at) => at - t0);
    } finally {
      clearTimeout(timer);
      this.waiter = undefined;
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
  }

  private check(): void {
    if (this.waiter && this.matching.size >= this.waiter.target) this.waiter.resolve(performance.now());
  }
}
