import type { Logger } from 'pino';
import type { KubeObject, ResourceType } from '../../../constructs/contract';
import { type Clock, exponentialDelay, jitter, realClock } from '../queue';
import { ApiError, isGone, isNotFound, type KubeClient, type KubeList, type WatchEvent, objectKey } from '../client';
import type { InformerDecoder } from './decoder';
import { namespaceInRange, type ShardScope, shardSelector } from './sharding';

/** Where a reflector delivers what it lists and watches: the informer's store and handlers. */
export interface ReflectorSink<T extends KubeObject> {
  /**
   * A list of one namespace (of all, `undefined`): the cache's objects of it become these.
   * `initialList`: its first list, not a relist after a broken watch.
   */
  replace(namespace: string | undefined, listed: ReadonlyMap<string, T>, initialList: boolean): void;
  /** One watched change. */
  apply(event: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, obj: T): void;
  /** Every namespace's first list is in. */
  synced(): void;
}

export interface ReflectorOptions {
  /** The namespaces to list and watch apart; `[undefined]` for all namespaces as one. */
  readonly namespaces: readonly (string | undefined)[];
  readonly logger: Logger;
  readonly onWatchRestart?: (reason: string) => void;
  readonly onReceived?: (objects: number) => void;
  /** @default 500 */
  readonly pageSize?: number;
  readonly fieldSelector?: string;
  /** @default 1000 */
  readonly healthyWatchMs?: number;
  /** @default 800 */
  readonly retryBaseMs?: number;
  /** @default the real clock */
  readonly clock?: Clock;
  /**
   * A watch that delivers nothing for half this long — not even one of the bookmarks the API
   * server sends about every minute — is ended and watched again; a stream with no delivery for
   * this long is stalled (`stalledStreams`). @default 3 minutes
   */
  readonly stallTimeoutMs?: number;
}

/** The stall window unless told (three of the API server's bookmark periods of about a minute). */
export const DEFAULT_WATCH_STALL_TIMEOUT_MS = 3 * 60_000;

/** The list and watch of one namespace (or of all: `undefined`). */
interface Stream {
  readonly namespace: string | undefined;
  /** Where its next watch resumes. */
  resourceVersion: string;
  /** Whether its first list has filled the cache. */
  synced: boolean;
  /** When it last got something from the server: a list page, a watch accepted, an event or a bookmark. */
  deliveredAt: number;
}

/** A stream that has had nothing from the server for longer than the stall window. */
export interface StalledStream {
  readonly namespace: string | undefined;
  readonly silentMs: number;
}

/**
 * The list-then-watch loop of one resource type, in the manner of client-go's reflector; what it
 * reads goes to a sink (the informer's store), never kept here but for where each watch resumes.
 * - lists (paginated) and watches from the list's resourceVersion, with bookmarks, so a
 *   re-watch resumes where it left off;
 * - on 410 Gone / Expired (the resourceVersion was compacted away) lists again, and the sink makes
 *   its cache what the list says;
 * - on ANY other error (connection reset, timeout, 5xx, 403) it logs, counts, backs off
 *   (0.8 s doubling to 30 s; 2 s at most for a type not served yet, 404) and tries again; it never
 *   stops until its signal aborts. A watch that stayed up (see `healthyWatchMs`) resets the
 *   backoff, so only consecutive failures make it grow;
 * - a watch that delivers nothing (not even a bookmark) for half the stall window is treated as
 *   broken and watched again; a stream with nothing from the server for the whole window is
 *   reported stalled (`stalledStreams`), for `/healthz`.
 * Given namespaces, it lists and watches each apart (each with its resourceVersion, its retries
 * and its relists).
 */
export class Reflector<T extends KubeObject> {
  private readonly streams: Stream[];
  private readonly clock: Clock;
  private shard?: ShardScope & { readonly selector: string };
  private servedBy?: 'server' | 'client';
  /** Whether `run` is running: only then are the streams expected to hear from the server. */
  private running = false;

  constructor(
    private readonly client: KubeClient,
    private readonly type: ResourceType<T>,
    private readonly decoder: InformerDecoder<T>,
    private readonly sink: ReflectorSink<T>,
    private readonly options: ReflectorOptions,
  ) {
    this.clock = options.clock ?? realClock;
    const now = this.clock.now();
    this.streams = [...new Set(options.namespaces)].map((namespace) => ({
      namespace,
      resourceVersion: '',
      synced: false,
      deliveredAt: now,
    }));
  }

  private get stallTimeoutMs(): number {
    return this.options.stallTimeoutMs ?? DEFAULT_WATCH_STALL_TIMEOUT_MS;
  }

  /**
   * The streams that have had nothing from the server for longer than the stall window: their
   * watch delivers nothing though it should (a bookmark comes about every minute), or no list or
   * watch has gone through since. What `/healthz` fails on.
   */
  stalledStreams(): StalledStream[] {
    // Not running (a sharded standby caches nothing until it holds a shard): nothing is awaited.
    if (!this.running) return [];
    const now = this.clock.now();
    return this.streams
      .filter((s) => now - s.deliveredAt > this.stallTimeoutMs)
      .map((s) => ({ namespace: s.namespace, silentMs: now - s.deliveredAt }));
  }

  /** How long the quietest stream has had nothing from the server, in milliseconds. */
  silentMs(): number {
    if (!this.running) return 0;
    const now = this.clock.now();
    return Math.max(0, ...this.streams.map((s) => now - s.deliveredAt));
  }

  /** Lists and watches only the namespaces whose hash falls in the shard's range. Call before `run`. */
  restrictTo(shard: ShardScope): void {
    this.shard = { ...shard, selector: shardSelector(shard.range) };
  }

  /** The resourceVersion seen up to for objects of `namespace`: '' before its first list, or for a namespace not watched. */
  seenResourceVersion(namespace: string | undefined): string {
    const stream = this.streams.find((s) => s.namespace === undefined || s.namespace === namespace);
    return stream?.resourceVersion ?? '';
  }

  /** Runs every namespace's list and watch until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const now = this.clock.now();
    for (const s of this.streams) s.deliveredAt = now;
    this.running = true;
    try {
      await Promise.all(this.streams.map((s) => this.runStream(s, signal)));
    } finally {
      this.running = false;
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
        await this.watchFrom(stream, signal, () => {
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
        await this.clock.sleep(this.retryDelay(err, failures, log), signal);
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
   * One watch from the stream's resourceVersion, until the server ends it or it fails. A watch that
   * stayed up for `healthyWatchMs` calls `onHealthy` however it ended, so the retry backoff
   * starts again from its first step.
   */
  private async watchFrom(stream: Stream, signal: AbortSignal, onHealthy: () => void): Promise<void> {
    const healthyWatchMs = this.options.healthyWatchMs ?? 1000;
    // The server ends a watch after timeoutSeconds; spread them so watches do not all
    // reconnect at once.
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    // Silent for half the stall window (the server sends a bookmark about every minute): the
    // connection is dead though open — ended here and watched again, well before /healthz fails.
    const idleTimeoutMs = Math.min((timeoutSeconds + 60) * 1000, Math.max(1000, this.stallTimeoutMs / 2));
    let openedAt: number | undefined;
    try {
      await this.client.watch(this.type, {
        namespace: stream.namespace,
        query: { resourceVersion: stream.resourceVersion, timeoutSeconds: String(timeoutSeconds), ...this.selector() },
        onEvent: (e) => {
          stream.deliveredAt = this.clock.now();
          this.handleEvent(stream, e);
        },
        protobuf: this.decoder.protobuf,
        signal,
        idleTimeoutMs,
        onOpen: () => {
          openedAt = this.clock.now();
          stream.deliveredAt = openedAt;
        },
      });
    } finally {
      if (openedAt !== undefined && this.clock.now() - openedAt >= healthyWatchMs) onHealthy();
    }
  }

  /** Lists the stream's namespace (or all), page by page, and hands the whole list to the sink. */
  private async listAndReplace(stream: Stream): Promise<void> {
    const listed = new Map<string, T>();
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
        { protobuf: this.decoder.protobuf },
      );
      stream.deliveredAt = this.clock.now();
      this.takePage(page, listed);
      continueToken = page.metadata.continue === '' ? undefined : page.metadata.continue;
      rv = page.metadata.resourceVersion;
    } while (continueToken);

    this.sink.replace(stream.namespace, listed, !stream.synced);
    stream.resourceVersion = rv;
    const wasSynced = this.streams.every((s) => s.synced);
    stream.synced = true;
    if (!wasSynced && this.streams.every((s) => s.synced)) this.sink.synced();
  }

  /** A list page's objects of this type (its shard's, when sharded), typed, into `listed`. */
  private takePage(page: KubeList<T>, listed: Map<string, T>): void {
    this.options.onReceived?.(page.items.length);
    let outside = false;
    for (const item of page.items) {
      if (!this.inShard(item)) outside = true;
      else {
        const typed = this.decoder.typed(item);
        if (typed) listed.set(objectKey(item.metadata), typed);
      }
    }
    if (this.shard) {
      const served = !!page.metadata.shardInfo || (!outside && !!this.shard.serverFilters);
      this.noteServedBy(served ? 'server' : 'client');
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
    const obj = this.decoder.typed(e.object);
    if (obj) this.sink.apply(e.type, objectKey(obj.metadata), obj);
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
}
