import type { KubeObject, ResourceType } from '../../../constructs/contract';
import type { Logger } from 'pino';
import type { Clock } from '../queue';
import type { KubeClient, ObjectDecoder } from '../client';
import { InformerDecoder } from './decoder';
import { Reflector, type ReflectorSink, type StalledStream } from './reflector';
import type { ShardScope } from './sharding';
import { IndexedStore } from './store';
import { CACHED_STRINGS, type StringPool } from './string-pool';

export interface InformerHandler<T extends KubeObject> {
  /**
   * `initialList`: the object came with the informer's first list (a controller starting), not
   * from a change it watched (nor from a relist after a broken watch, which delivers changes).
   */
  onAdd?(obj: T, initialList: boolean): void;
  /** Also called on every resync with `old === obj`. */
  onUpdate?(old: T, obj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions {
  /** Watch one namespace only (`namespaces` with one). @default - all namespaces */
  readonly namespace?: string;
  /**
   * Watch these namespaces only: a list and a watch of each, into one cache, so the informer
   * needs rights in those namespaces alone (a Role in each), never cluster-wide. @default - all namespaces
   */
  readonly namespaces?: readonly string[];
  /** Re-deliver every cached object as an update this often (0: never). @default 10 hours, as controller-runtime */
  readonly resyncPeriodMs?: number;
  readonly logger: Logger;
  /** Called on each watch restart with its reason ('expired', 'error', 'closed'). @default none */
  readonly onWatchRestart?: (reason: string) => void;
  /** Told how many objects arrived, from each list page and each watch event (bookmarks aside). @default none */
  readonly onReceived?: (objects: number) => void;
  /** Page size of the initial and recovery lists. @default 500 */
  readonly pageSize?: number;
  /** Cache only the objects matching this field selector, e.g. `reason=FailedCreate`. @default every object of the type */
  readonly fieldSelector?: string;
  /** What of each object to keep in the cache (client-go's informer transform). @default all of it */
  readonly transform?: (obj: KubeObject) => KubeObject;
  /**
   * Reads the type's lists and watches in protobuf with this decoder, which builds what
   * `transform` keeps and nothing else (a built-in type only; see pod-protobuf.ts). What the
   * server still sends as JSON goes through `transform`. @default JSON
   */
  readonly protobuf?: ObjectDecoder;
  /**
   * Keeps one copy of the string values cached, across the informers that share it.
   * @default the process's one pool, shared by every informer (`CACHED_STRINGS`)
   */
  readonly strings?: StringPool;
  /**
   * A watch that the server accepted and that stayed up this long was healthy: its failure
   * starts the backoff afresh (client-go's reflector rule), so an isolated cut re-watches after
   * the base delay instead of a delay that grew with every cut the process ever saw.
   * @default 1000
   */
  readonly healthyWatchMs?: number;
  /** The first retry delay after a failure; it doubles with each failure in a row, to 30 s. @default 800 (client-go's) */
  readonly retryBaseMs?: number;
  /** Where time comes from: the retry delays and how long a watch stayed up. @default the real clock */
  readonly clock?: Clock;
  /**
   * A watch silent for half this long is watched again; a stream with nothing from the server for
   * this long is stalled (`stalledStreams`). @default 3 minutes (the server bookmarks about every minute)
   */
  readonly stallTimeoutMs?: number;
}

/**
 * A list-then-watch cache of one resource type, in the manner of client-go's shared informer: a
 * reflector (reflector.ts: list, watch, relist on 410 Gone, backoff, sharding) fills a store with
 * its indexes (store.ts) with what a decoder (decoder.ts) makes of each object, and the informer
 * tells its handlers of each change, and of every cached object again at each resync.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly store = new IndexedStore<T>();
  private readonly handlers: InformerHandler<T>[] = [];
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];
  private readonly reflector: Reflector<T>;

  constructor(
    client: KubeClient,
    readonly type: ResourceType<T>,
    private readonly options: InformerOptions,
  ) {
    const namespaces = options.namespaces ?? (options.namespace === undefined ? [undefined] : [options.namespace]);
    const decoder = new InformerDecoder(type, { ...options, strings: options.strings ?? CACHED_STRINGS });
    this.reflector = new Reflector(client, type, decoder, this.sink(), { ...options, namespaces });
  }

  /**
   * Caches only the objects whose namespace hashes into the range (a sharded replica's share),
   * asking the server to send only those. Call before `run`.
   */
  restrictTo(shard: ShardScope): void {
    this.reflector.restrictTo(shard);
  }

  addHandler(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Its streams (one per namespace watched apart) that have had nothing from the server for longer than the stall window. */
  stalledStreams(): StalledStream[] {
    return this.reflector.stalledStreams();
  }

  /** How long its quietest stream has had nothing from the server (no list page, watch, event or bookmark), in milliseconds. */
  silentMs(): number {
    return this.reflector.silentMs();
  }

  /** Resolves once the first list has filled the cache. */
  waitForSync(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((r) => this.syncWaiters.push(r));
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /**
   * The resourceVersion the cache has seen up to for objects of `namespace` (its stream's last
   * event, bookmark or list): everything written at or before it is in the cache. '' before the
   * first list, or for a namespace it does not watch.
   */
  seenResourceVersion(namespace: string | undefined): string {
    return this.reflector.seenResourceVersion(namespace);
  }

  /**
   * Cached objects, optionally of one namespace and matching all the given labels (through the
   * store's label index: listing one resource's pods costs what they are, not what the namespace holds).
   */
  list(namespace?: string, labels?: Record<string, string>): T[] {
    return this.store.list(namespace, labels);
  }

  /** Cached objects whose controller owner has this uid (an index: no scan of the cache). */
  listControlledBy(ownerUid: string): T[] {
    return this.store.listControlledBy(ownerUid);
  }

  get size(): number {
    return this.store.size;
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const resync = this.options.resyncPeriodMs ?? 10 * 60 * 60 * 1000;
    const resyncTimer =
      resync > 0
        ? setInterval(() => {
            this.resync();
          }, resync)
        : undefined;
    try {
      await this.reflector.run(signal);
    } finally {
      if (resyncTimer) clearInterval(resyncTimer);
    }
  }

  /** What the reflector's lists and watches do to the store, told to the handlers. */
  private sink(): ReflectorSink<T> {
    return {
      replace: (namespace, listed, initialList) => {
        // Only this namespace's objects: another namespace's are another list's.
        for (const key of this.store.keysOf(namespace)) {
          const old = this.store.get(key);
          if (old && !listed.has(key)) {
            this.store.remove(key);
            this.emit((h) => h.onDelete?.(old));
          }
        }
        for (const [key, obj] of listed) {
          const old = this.store.get(key);
          this.store.put(key, obj);
          if (!old) this.emit((h) => h.onAdd?.(obj, initialList));
          else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
            this.emit((h) => h.onUpdate?.(old, obj));
        }
      },
      apply: (event, key, obj) => {
        const old = this.store.get(key);
        if (event === 'DELETED') {
          this.store.remove(key);
          this.emit((h) => h.onDelete?.(obj));
        } else {
          this.store.put(key, obj);
          if (old) this.emit((h) => h.onUpdate?.(old, obj));
          else this.emit((h) => h.onAdd?.(obj, false));
        }
      },
      synced: () => {
        this.synced = true;
        this.syncWaiters.splice(0).forEach((r) => {
          r();
        });
      },
    };
  }

  private resync(): void {
    for (const obj of this.store.values()) this.emit((h) => h.onUpdate?.(obj, obj));
  }

  private emit(fn: (h: InformerHandler<T>) => void): void {
    for (const h of this.handlers) {
      try {
        fn(h);
      } catch (err) {
        this.options.logger.error({ err, resource: this.type.resource }, 'informer handler threw');
      }
    }
  }
}
