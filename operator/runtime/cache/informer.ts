import { isOfType, type KubeObject, type ResourceType } from '../../../constructs/contract';
import type { Logger } from 'pino';
import { type Clock, exponentialDelay, jitter, realClock } from '../queue';
import {
  ApiError,
  isGone,
  isNotFound,
  type KubeClient,
  type KubeList,
  type ObjectDecoder,
  type WatchEvent,
  apiVersionOf,
  controllerOf,
  objectKey,
} from '../client';
import { namespaceInRange, type ShardScope, shardSelector } from './sharding';

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
}

/**
 * A list-then-watch cache of one resource type, in the manner of client-go's reflector and
 * shared informer:
 * - lists (paginated) and watches from the list's resourceVersion, with bookmarks, so a
 *   re-watch resumes where it left off;
 * - on 410 Gone / Expired (the resourceVersion was compacted away) lists again, emitting adds,
 *   updates and deletes for what changed while it was not watching;
 * - on ANY other error (connection reset, timeout, 5xx, 403) it logs, counts, backs off
 *   (0.8 s doubling to 30 s; 2 s at most for a type not served yet, 404) and tries again;
 *   it never stops until its signal aborts. A
 *   watch that stayed up (see `healthyWatchMs`) resets the backoff, so only consecutive
 *   failures make it grow;
 * - a watch that goes silent past its server timeout plus a margin is treated as broken.
 * Given namespaces, it lists and watches each apart (each with its resourceVersion, its retries
 * and its relists, which replace only that namespace's objects), into one cache.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly byNamespace = new Map<string, Set<string>>();
  /**
   * Keys by namespace and label=value, and by label=value across namespaces (see labelKey), for
   * the label names someone has listed by: indexing every label of every object cost more memory
   * (a set per distinct value: thousands of them) than the objects' own labels.
   */
  private readonly byLabel = new Map<string, Set<string>>();
  private readonly indexedLabels = new Set<string>();
  /** Keys by the uid of their controller owner. */
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly handlers: InformerHandler<T>[] = [];
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];
  /** One list-and-watch per namespace watched (one, `undefined`, for all namespaces). */
  private readonly streams: Stream[];
  private readonly clock: Clock;
  private shard?: ShardScope & { readonly selector: string };
  private servedBy?: 'server' | 'client';
  /** Objects the protobuf decoder made: already what the transform keeps. */
  private readonly decoded = new WeakSet<KubeObject>();
  private readonly decode?: ObjectDecoder;

  constructor(
    private readonly client: KubeClient,
    readonly type: ResourceType<T>,
    private readonly options: InformerOptions,
  ) {
    this.clock = options.clock ?? realClock;
    const namespaces = options.namespaces ?? (options.namespace === undefined ? [undefined] : [options.namespace]);
    this.streams = [...new Set(namespaces)].map((namespace) => ({ namespace, resourceVersion: '', synced: false }));
    const { protobuf } = options;
    if (protobuf) {
      this.decode = (r, end) => {
        const obj = protobuf(r, end);
        this.decoded.add(obj);
        return obj;
      };
    }
  }

  /**
   * Caches only the objects whose namespace hashes into the range (a sharded replica's share),
   * asking the server to send only those. Call before `run`.
   */
  restrictTo(shard: ShardScope): void {
    this.shard = { ...shard, selector: shardSelector(shard.range) };
  }

  addHandler(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  hasSynced(): boolean {
    return this.synced;
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
    const stream = this.streams.find((s) => s.namespace === undefined || s.namespace === namespace);
    return stream?.resourceVersion ?? '';
  }

  /**
   * Cached objects, optionally of one namespace and matching all the given labels. With labels,
   * it starts from the smallest set the label index holds for one of them, so listing one
   * resource's pods costs what they are, not what the namespace holds.
   */
  list(namespace?: string, labels?: Record<string, string>): T[] {
    let keys: Iterable<string>;
    const pairs = Object.entries(labels ?? {});
    if (pairs.length) {
      for (const [l] of pairs) this.indexLabel(l);
      const sets = pairs.map(([l, v]) => this.byLabel.get(labelKey(namespace, l, v)) ?? new Set<string>());
      keys = sets.reduce((a, b) => (b.size < a.size ? b : a));
    } else {
      keys = namespace === undefined ? this.store.keys() : (this.byNamespace.get(namespace) ?? []);
    }
    const out: T[] = [];
    for (const k of keys) {
      const obj = this.store.get(k);
      if (!obj) continue;
      if (namespace !== undefined && (obj.metadata.namespace ?? '') !== namespace) continue;
      if (!pairs.every(([l, v]) => obj.metadata.labels?.[l] === v)) continue;
      out.push(obj);
    }
    return out;
  }

  /** Cached objects whose controller owner has this uid (an index: no scan of the cache). */
  listControlledBy(ownerUid: string): T[] {
    const out: T[] = [];
    for (const k of this.byOwner.get(ownerUid) ?? []) {
      const obj = this.store.get(k);
      if (obj) out.push(obj);
    }
    return out;
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
      await Promise.all(this.streams.map((s) => this.runStream(s, signal)));
    } finally {
      if (resyncTimer) clearInterval(resyncTimer);
    }
  }

  /** One namespace's (or every namespace's) list and watch, until `signal` aborts. */
  private async runStream(stream: Stream, signal: AbortSignal): Promise<void> {
    const log = this.options.logger.child({
      resource: this.type.resource,
      ...(stream.namespace === undefined ? {} : { namespace: stream.namespace }),
    });
    let needList = true;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.listAndReplace(stream);
          needList = false;
        }
        await this.watchFromCache(stream, signal, () => {
          failures = 0;
        });
        failures = 0;
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by an abort during the await above
        if (!signal.aborted) this.options.onWatchRestart?.('closed');
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by an abort during the await above
        if (signal.aborted) break;
        if (isGone(err)) {
          log.info({ resourceVersion: stream.resourceVersion }, 'watch resourceVersion expired; listing again');
          this.options.onWatchRestart?.('expired');
          needList = true;
          continue;
        }
        failures++;
        this.options.onWatchRestart?.('error');
        const delay = this.retryDelay(err, failures, log);
        await this.clock.sleep(delay, signal);
      }
    }
  }

  /**
   * How long to wait before the next list/watch after `failures` in a row, logged: 0.8 s doubling
   * to 30 s. A type not served yet (404: its CRD not installed) is cheap to ask for and may come
   * any moment: looked for again every 2 s at most, so an operator started first sees its CRD
   * within 2 s of its arrival; said once, not at every look.
   */
  private retryDelay(err: unknown, failures: number, log: Logger): number {
    const missing = isNotFound(err);
    const delay = jitter(exponentialDelay(failures, this.options.retryBaseMs ?? 800, missing ? 2000 : 30_000));
    if (missing && failures > 1) return delay;
    log.warn(
      { err, failures, retryInMs: Math.round(delay) },
      missing
        ? 'the API server does not serve this type (is its CRD installed?); looking again every 2 s'
        : 'list/watch failed; retrying',
    );
    return delay;
  }

  /**
   * One watch from the cached resourceVersion, until the server ends it or it fails. A watch that
   * stayed up for `healthyWatchMs` calls `onHealthy` however it ended, so the retry backoff
   * starts again from its first step.
   */
  private async watchFromCache(stream: Stream, signal: AbortSignal, onHealthy: () => void): Promise<void> {
    const healthyWatchMs = this.options.healthyWatchMs ?? 1000;
    // The server ends a watch after timeoutSeconds; spread them so watches do not all
    // reconnect at once.
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    let openedAt: number | undefined;
    try {
      await this.client.watch(this.type, {
        namespace: stream.namespace,
        query: { resourceVersion: stream.resourceVersion, timeoutSeconds: String(timeoutSeconds), ...this.selector() },
        onEvent: (e) => {
          this.handleEvent(stream, e);
        },
        protobuf: this.decode,
        signal,
        idleTimeoutMs: (timeoutSeconds + 60) * 1000,
        onOpen: () => {
          openedAt = this.clock.now();
        },
      });
    } finally {
      if (openedAt !== undefined && this.clock.now() - openedAt >= healthyWatchMs) onHealthy();
    }
  }

  /** Lists the stream's namespace (or all), and makes the cache's objects of it what the list says. */
  private async listAndReplace(stream: Stream): Promise<void> {
    const fresh = new Map<string, T>();
    let continueToken: string | undefined;
    let rv: string;
    do {
      const page = await this.client.list<T>(
        this.type,
        stream.namespace,
        {
          limit: String(this.options.pageSize ?? 500),
          ...this.selector(),
          ...(continueToken ? { continue: continueToken } : {}),
        },
        { protobuf: this.decode },
      );
      this.takePage(page, fresh);
      continueToken = page.metadata.continue === '' ? undefined : page.metadata.continue;
      rv = page.metadata.resourceVersion;
    } while (continueToken);

    this.dropUnlisted(stream, fresh);
    const initialList = !stream.synced;
    for (const [key, obj] of fresh) {
      const old = this.store.get(key);
      this.put(key, obj);
      if (!old) this.emit((h) => h.onAdd?.(obj, initialList));
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit((h) => h.onUpdate?.(old, obj));
    }
    stream.resourceVersion = rv;
    stream.synced = true;
    if (!this.synced && this.streams.every((s) => s.synced)) {
      this.synced = true;
      this.syncWaiters.splice(0).forEach((r) => {
        r();
      });
    }
  }

  /** A list page's objects of this informer (its shard's, when sharded), typed, into `fresh`. */
  private takePage(page: KubeList<T>, fresh: Map<string, T>): void {
    this.options.onReceived?.(page.items.length);
    let outside = false;
    // Items of a LIST carry no apiVersion/kind (only watch events do); every cached object
    // does, so that what a controller reads from the cache is the same whichever way it came.
    for (const item of page.items) {
      if (!this.inShard(item)) outside = true;
      else {
        const typed = this.typed(item);
        if (typed) fresh.set(objectKey(item.metadata), typed);
      }
    }
    if (this.shard) {
      const served = !!page.metadata.shardInfo || (!outside && !!this.shard.serverFilters);
      this.noteServedBy(served ? 'server' : 'client');
    }
  }

  /** Deletes the cached objects of the stream's namespace (or all) that its list no longer has. */
  private dropUnlisted(stream: Stream, fresh: ReadonlyMap<string, T>): void {
    // Only this stream's objects: another namespace's are another list's.
    const listed = stream.namespace === undefined ? this.store.keys() : (this.byNamespace.get(stream.namespace) ?? []);
    for (const key of [...listed]) {
      const old = this.store.get(key);
      if (old && !fresh.has(key)) {
        this.remove(key);
        this.emit((h) => h.onDelete?.(old));
      }
    }
  }

  private handleEvent(stream: Stream, e: WatchEvent): void {
    if (e.type === 'ERROR') {
      const status = e.object;
      throw new ApiError(
        status.code ?? 500,
        status.reason ?? 'Unknown',
        `watch ${this.type.resource}: ${status.message ?? 'error event'}`,
      );
    }
    const rv = e.object.metadata.resourceVersion;
    if (rv) stream.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return;
    this.options.onReceived?.(1);
    if (!this.inShard(e.object)) {
      // Out of the shard: only an API server that ignored the selector sends it.
      this.noteServedBy('client');
      return;
    }
    const obj = this.typed(e.object);
    if (!obj) return;
    const key = objectKey(obj.metadata);
    const old = this.store.get(key);
    if (e.type === 'DELETED') {
      this.remove(key);
      this.emit((h) => h.onDelete?.(obj));
    } else {
      this.put(key, obj);
      if (old) this.emit((h) => h.onUpdate?.(old, obj));
      else this.emit((h) => h.onAdd?.(obj, false));
    }
  }

  private selector(): Record<string, string> {
    return {
      ...(this.options.fieldSelector ? { fieldSelector: this.options.fieldSelector } : {}),
      ...(this.shard ? { shardSelector: this.shard.selector } : {}),
    };
  }

  /**
   * Where the range is applied: by the server when a list says so (`shardInfo`) or the probe did
   * and nothing out of the range came; by this process once an object out of the range arrives.
   */
  private noteServedBy(by: 'server' | 'client'): void {
    if (!this.shard || this.servedBy === 'client' || this.servedBy === by) return;
    this.servedBy = by;
    this.shard.onServedBy?.(this.type.resource, by);
  }

  /** Whether the object is this replica's to cache: always, unless sharded. */
  private inShard(obj: KubeObject): boolean {
    return !this.shard || namespaceInRange(obj.metadata.namespace ?? '', this.shard.range);
  }

  /** The object as cached: with its apiVersion and kind, transformed. */
  private typed(obj: KubeObject): T | undefined {
    const typed =
      obj.apiVersion && obj.kind ? obj : { ...obj, apiVersion: apiVersionOf(this.type), kind: this.type.kind };
    const kept = this.options.transform && !this.decoded.has(obj) ? this.options.transform(typed) : typed;
    // Always true of what the API server sends for this type, and of a transform that keeps the
    // kind; the check is what makes the cache's objects `T`.
    if (isOfType(this.type, kept)) return kept;
    this.options.logger.error(
      { resource: this.type.resource, apiVersion: kept.apiVersion, kind: kept.kind },
      'not cached: the object is not of the informer type (a cache transform changed its kind?)',
    );
    return undefined;
  }

  private resync(): void {
    for (const obj of this.store.values()) this.emit((h) => h.onUpdate?.(obj, obj));
  }

  private put(key: string, obj: T): void {
    this.unindexLabels(key);
    this.store.set(key, obj);
    const owner = controllerOf(obj)?.uid;
    if (owner) {
      let set = this.byOwner.get(owner);
      if (!set) this.byOwner.set(owner, (set = new Set()));
      set.add(key);
    }
    for (const l of this.indexedLabels) this.indexLabelOf(key, obj, l);
    const ns = obj.metadata.namespace ?? '';
    let set = this.byNamespace.get(ns);
    if (!set) this.byNamespace.set(ns, (set = new Set()));
    set.add(key);
  }

  /** Starts indexing by label `l`: from now on, and every object already cached. */
  private indexLabel(l: string): void {
    if (this.indexedLabels.has(l)) return;
    this.indexedLabels.add(l);
    for (const [key, obj] of this.store) this.indexLabelOf(key, obj, l);
  }

  private indexLabelOf(key: string, obj: T, l: string): void {
    const v = obj.metadata.labels?.[l];
    if (v === undefined) return;
    for (const k of [labelKey(obj.metadata.namespace ?? '', l, v), labelKey(undefined, l, v)]) {
      let set = this.byLabel.get(k);
      if (!set) this.byLabel.set(k, (set = new Set()));
      set.add(key);
    }
  }

  // eslint-disable-next-line complexity -- takes one object out of its owner index and each label index it is in, pruning emptied entries: optional lookups the rule counts
  private unindexLabels(key: string): void {
    const old = this.store.get(key);
    const owner = old && controllerOf(old)?.uid;
    if (owner) {
      const set = this.byOwner.get(owner);
      set?.delete(key);
      if (set?.size === 0) this.byOwner.delete(owner);
    }
    for (const [l, v] of Object.entries(old?.metadata.labels ?? {})) {
      if (!this.indexedLabels.has(l)) continue;
      for (const k of [labelKey(old?.metadata.namespace ?? '', l, v), labelKey(undefined, l, v)]) {
        const set = this.byLabel.get(k);
        set?.delete(key);
        if (set?.size === 0) this.byLabel.delete(k);
      }
    }
  }

  private remove(key: string): void {
    const obj = this.store.get(key);
    this.unindexLabels(key);
    this.store.delete(key);
    if (obj) this.byNamespace.get(obj.metadata.namespace ?? '')?.delete(key);
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

/** The list and watch of one namespace (or of all: `undefined`). */
interface Stream {
  readonly namespace: string | undefined;
  /** Where its next watch resumes. */
  resourceVersion: string;
  /** Whether its first list has filled the cache. */
  synced: boolean;
}

function labelKey(namespace: string | undefined, label: string, value: string): string {
  return `${namespace ?? '*'}\u0000${label}=${value}`;
}
