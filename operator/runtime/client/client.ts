import type { RequestTracer } from './request-tracing';
import type { KubeObject, ResourceType } from '../../../constructs/contract';
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfigLike } from './kubeconfig';
import type { RateLimiter } from './rate-limiter';
import { resourcePath } from './resource';
import { ApiError, retryAfterSeconds, toApiError } from './errors';
import { jitter, sleep } from '../queue';
import { decodeList, decodeWatchEvent, type ObjectDecoder, PROTOBUF, PROTOBUF_WATCH } from './protobuf';
import { isProtobuf, readBody, readError, readFrames, readLines } from './responses';

export interface KubeList<T extends KubeObject = KubeObject> {
  /** `shardInfo`: the shard selector the server applied (KEP-5866), absent when it ignored it. */
  metadata: { resourceVersion: string; continue?: string; shardInfo?: { selector?: string } };
  items: T[];
}

export type WatchEvent<T extends KubeObject = KubeObject> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: WatchErrorStatus };

/** The Status an ERROR event of a watch carries (a 410 Gone when its resourceVersion is too old). */
export interface WatchErrorStatus {
  readonly kind?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
}

/** Counts requests by verb, for metrics and for tests that check a reconcile wrote nothing. */
export type RequestObserver = (method: string, path: string, status: number, seconds: number) => void;

export interface KubeClientOptions {
  /** Field manager for server-side apply and writes. */
  readonly fieldManager: string;
  /** Per-request timeout (not for watches). @default 30000 */
  readonly timeoutMs?: number;
  /** Told of every request's method, path, status and duration (for metrics). @default none */
  readonly observer?: RequestObserver;
  /**
   * The User-Agent of every request. The API server's audit log records it, so a value naming
   * the process (as the reconciler's `cdk8s-operator-kit-reconciler (<identity>)`) tells which
   * replica made a write. @default 'cdk8s-operator-kit-reconciler'
   */
  readonly userAgent?: string;
  /** Traces each request made inside a traced reconcile (see request-tracing.ts). @default not traced */
  readonly tracer?: RequestTracer;
  /**
   * Told of each request sent again in place (see `HttpKubeClient.request`): its method and what
   * it was answered — a status code, or `<error>` for a connection reset before any answer.
   * @default none
   */
  readonly onRetry?: (method: string, code: string) => void;
  /**
   * A client-side limit on requests (`--kube-api-qps`, `--kube-api-burst`); Lease requests are
   * never held by it, so leadership is renewed however busy the client is. @default none
   */
  readonly rateLimiter?: RateLimiter;
  /** Told how long each request waited for the rate limiter, in seconds. @default none */
  readonly onThrottle?: (method: string, seconds: number) => void;
}

/** What a request sends and how its answer is read (see `HttpKubeClient.request`). */
export interface RequestOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  readonly query?: Record<string, string>;
  /** The Accept header. @default application/json */
  readonly accept?: string;
  /** Reads a 2xx answer the server gave in protobuf. @default none: only JSON is asked for */
  readonly protobuf?: (body: Buffer) => unknown;
}

/** How many times a request is sent again in place before its failure is the caller's (client-go's 10). */
const MAX_RETRIES = 10;

/** The longest wait a Retry-After is honoured for, in seconds: a longer one is cut to it. */
const MAX_RETRY_AFTER_SECONDS = 10;

/** Errors of a request whose connection failed before any byte of an answer came. */
const UNANSWERED = new WeakSet<object>();

/**
 * How long to wait before sending a request again in place, or undefined when its failure is the
 * caller's: a 429 or 503 with Retry-After (API Priority and Fairness rejecting what its queues
 * cannot hold, storage initializing, a server shutting down), after that wait, capped, with
 * jitter so that rejected clients do not come back together; a connection reset before any byte
 * of the answer (a kept-alive connection the server had closed) at once and then on a short
 * doubling backoff — for every verb but POST, whose create may have been made (the others are
 * idempotent here: server-side apply, updates at a resourceVersion, deletes by uid).
 */
function retryWait(method: string, err: unknown, retries: number): number | undefined {
  if (retries >= MAX_RETRIES) return undefined;
  if (err instanceof ApiError && (err.status === 429 || err.status === 503) && err.retryAfterSeconds !== undefined)
    return jitter(Math.min(err.retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000, 0.1);
  // Not `instanceof Error`: Node's own errors may come from another realm (a test's sandbox).
  if (method !== 'POST' && typeof err === 'object' && err !== null && UNANSWERED.has(err) && isReset(err))
    return retries === 0 ? 0 : jitter(Math.min(50 * 2 ** retries, 2000));
  return undefined;
}

function isReset(err: object): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** What a retried request was answered, as the retries metric labels it. */
function retryCode(err: unknown): string {
  return err instanceof ApiError ? String(err.status) : '<error>';
}

/** A watch: where, from when, and who is told of its events. */
export interface WatchOptions {
  /** @default all namespaces */
  readonly namespace?: string;
  /** e.g. `resourceVersion`, `allowWatchBookmarks`, `labelSelector`. */
  readonly query: Record<string, string>;
  readonly onEvent: (e: WatchEvent) => void;
  readonly signal: AbortSignal;
  /** Ends the watch when no byte arrives for this long. @default 10 minutes */
  readonly idleTimeoutMs?: number;
  /** Called once the server accepted the watch. @default none */
  readonly onOpen?: () => void;
  /**
   * Asks for the stream in protobuf (built-in types only) and reads each object with this
   * decoder; a server that answers in JSON is read as JSON. @default JSON
   */
  readonly protobuf?: ObjectDecoder;
}

/** How a list is read. */
export interface ListOptions {
  /**
   * Asks for the list in protobuf (built-in types only) and reads each item with this decoder;
   * a server that answers in JSON is read as JSON. @default JSON
   */
  readonly protobuf?: ObjectDecoder;
}

/** How a merge patch is sent. */
export interface MergePatchOptions {
  /** A subresource to patch, e.g. `status`. */
  readonly subresource?: string;
  /** Only asked: the API server answers what it would store, admission included, and stores nothing. */
  readonly dryRun?: boolean;
}

/** One operation of a JSON patch (RFC 6902). */
export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'test';
  readonly path: string;
  readonly value?: unknown;
}

/**
 * What the runtime asks of the API server: the verbs a controller uses. `HttpKubeClient` speaks
 * them over HTTP; `FakeKubeClient` (`cdk8s-operator-kit/testing`) keeps objects in memory, for
 * unit tests of a controller.
 */
export interface KubeClient {
  /** The field manager of server-side apply and every write. */
  readonly fieldManager: string;
  get<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): Promise<T>;
  list<T extends KubeObject>(
    type: ResourceType<T>,
    namespace?: string,
    query?: Record<string, string>,
    options?: ListOptions,
  ): Promise<KubeList<T>>;
  create<T extends KubeObject>(type: ResourceType<T>, obj: KubeObject, namespace?: string): Promise<T>;
  /**
   * Server-side apply of a complete desired object (force: this manager owns its fields); with
   * `dryRun`, what the API server would store, defaults and admission included, without storing it.
   */
  apply<T extends KubeObject>(
    type: ResourceType<T>,
    obj: KubeObject,
    options?: { subresource?: string; force?: boolean; dryRun?: boolean },
  ): Promise<T>;
  /**
   * JSON merge patch, e.g. for finalizers; with `dryRun`, what the API server would store,
   * admission (a quota) included, without storing it.
   */
  mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options?: MergePatchOptions,
  ): Promise<T>;
  /** Deletes an object; with `uid`, only that object (409 Conflict if it was replaced). */
  delete(
    type: ResourceType,
    name: string,
    namespace?: string,
    options?: { uid?: string; propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' },
  ): Promise<void>;
  /**
   * Replaces an object (PUT) at the resourceVersion it carries: 409 Conflict when it changed since,
   * as optimistic concurrency wants (a Lease's renewal).
   */
  update<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<T>;
  /** JSON patch (RFC 6902), e.g. a `test` of the resourceVersion before a change of one field. */
  jsonPatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    operations: readonly JsonPatchOperation[],
  ): Promise<T>;
  /**
   * Feeds each event of a watch to `onEvent` until the stream ends (resolves), fails (rejects)
   * or `signal` aborts (resolves). `onOpen` is called once the server accepted it.
   */
  watch(type: ResourceType, options: WatchOptions): Promise<void>;
  /** Releases connections. */
  close(): void;
}

/**
 * A small REST client for the Kubernetes API on top of the kubeconfig's TLS and auth settings.
 * It knows resource paths from declarations, so it needs no discovery round trips, and it
 * exposes exactly the verbs a controller uses: get, list, watch, server-side apply, status
 * apply, merge patch, create, delete.
 */
export class HttpKubeClient implements KubeClient {
  private readonly server: URL;
  private readonly agent: http.Agent;

  /**
   * @param kubeConfig where the API server is and how to authenticate: `loadKubeConfig()`'s
   *   answer, or a `KubeConfig` of `@kubernetes/client-node`
   */
  constructor(
    readonly kubeConfig: KubeConfigLike,
    readonly options: KubeClientOptions,
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    const Agent = this.server.protocol === 'https:' ? https.Agent : http.Agent;
    // No client-side throttling unless asked (`rateLimiter`): the API server's priority and
    // fairness protects itself. Keep-alive avoids a TLS handshake per request.
    this.agent = new Agent({ keepAlive: true, maxSockets: 64 });
  }

  get fieldManager(): string {
    return this.options.fieldManager;
  }

  async get<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): Promise<T> {
    return this.request<T>('GET', resourcePath(type, namespace, name));
  }

  async list<T extends KubeObject>(
    type: ResourceType<T>,
    namespace?: string,
    query: Record<string, string> = {},
    options: ListOptions = {},
  ): Promise<KubeList<T>> {
    const { protobuf } = options;
    return this.request<KubeList<T>>('GET', resourcePath(type, namespace), {
      query,
      ...(protobuf
        ? { accept: `${PROTOBUF}, application/json`, protobuf: (body: Buffer) => decodeList<T>(body, protobuf) }
        : {}),
    });
  }

  async create<T extends KubeObject>(type: ResourceType<T>, obj: KubeObject, namespace?: string): Promise<T> {
    return this.request<T>('POST', resourcePath(type, namespace), {
      body: obj,
      query: { fieldManager: this.fieldManager },
    });
  }

  /** Server-side apply of a complete desired object (force: this manager owns its fields). */
  async apply<T extends KubeObject>(
    type: ResourceType<T>,
    obj: KubeObject,
    options: { subresource?: string; force?: boolean; dryRun?: boolean } = {},
  ): Promise<T> {
    return this.request<T>(
      'PATCH',
      resourcePath(type, obj.metadata.namespace, obj.metadata.name, options.subresource),
      {
        body: obj,
        contentType: 'application/apply-patch+yaml',
        query: {
          fieldManager: this.fieldManager,
          force: String(options.force ?? true),
          ...(options.dryRun ? { dryRun: 'All' } : {}),
        },
      },
    );
  }

  /** JSON merge patch, e.g. for finalizers; with `dryRun`, answered but not stored (`dryRun=All`). */
  async mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options: MergePatchOptions = {},
  ): Promise<T> {
    return this.request<T>('PATCH', resourcePath(type, namespace, name, options.subresource), {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: this.fieldManager, ...(options.dryRun ? { dryRun: 'All' } : {}) },
    });
  }

  async update<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<T> {
    return this.request<T>('PUT', resourcePath(type, obj.metadata.namespace, obj.metadata.name), {
      body: obj,
      query: { fieldManager: this.fieldManager },
    });
  }

  async jsonPatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    operations: readonly JsonPatchOperation[],
  ): Promise<T> {
    return this.request<T>('PATCH', resourcePath(type, namespace, name), {
      body: operations,
      contentType: 'application/json-patch+json',
      query: { fieldManager: this.fieldManager },
    });
  }

  /**
   * Deletes an object. With `uid`, only that object (a precondition): one that was deleted and
   * made again under the same name by someone else is not touched (409 Conflict).
   */
  async delete(
    type: ResourceType,
    name: string,
    namespace?: string,
    options: { uid?: string; propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' } = {},
  ): Promise<void> {
    await this.request('DELETE', resourcePath(type, namespace, name), {
      body: {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: options.propagationPolicy ?? 'Background',
        ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
      },
    });
  }

  /**
   * Any request, for what the typed verbs do not cover (`/version`, a subresource of its own);
   * resolves with the parsed JSON body, rejects with ApiError on a non-2xx answer.
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    for (let retries = 0; ; retries++) {
      try {
        return await this.send<T>(method, path, opts, payload);
      } catch (err) {
        // The API server said when to send it again, or never got it: sent again in place, as
        // client-go does, so the caller sees only the answer that comes then (see `retryWait`).
        const wait = retryWait(method, err, retries);
        if (wait === undefined) throw err;
        this.options.onRetry?.(method, retryCode(err));
        await sleep(wait);
      }
    }
  }

  /**
   * Waits for the client-side rate limit, if there is one: every request, each time it is sent,
   * but a Lease's (leadership must be renewed however many requests queue).
   */
  private async throttle(method: string, path: string): Promise<void> {
    const limiter = this.options.rateLimiter;
    if (!limiter || path.startsWith('/apis/coordination.k8s.io/')) return;
    const waitedMs = await limiter.acquire();
    this.options.onThrottle?.(method, waitedMs / 1000);
  }

  /** One request, as `request` sends it (each time, when it sends it again). */
  private async send<T>(method: string, path: string, opts: RequestOptions, payload: string | undefined): Promise<T> {
    await this.throttle(method, path);
    const started = process.hrtime.bigint();
    const span = this.options.tracer?.clientSpan(method, {
      'http.request.method': method,
      'url.path': path,
      'server.address': this.server.hostname,
    });
    const req = await this.prepare(method, path, opts.query, {
      ...(opts.accept ? { Accept: opts.accept } : {}),
      ...(span ? { traceparent: span.traceparent } : {}),
      ...(payload
        ? {
            'Content-Type': opts.contentType ?? 'application/json',
            'Content-Length': String(Buffer.byteLength(payload)),
          }
        : {}),
    });
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      const r = req.module.request(req.options, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          this.options.observer?.(method, path, status, Number(process.hrtime.bigint() - started) / 1e9);
          span?.end(status);
          const ok = status >= 200 && status < 300;
          let body: unknown;
          try {
            body = readBody(Buffer.concat(chunks), res.headers['content-type'], ok ? opts.protobuf : undefined);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          if (ok) resolve(body as T);
          else reject(toApiError(status, body, `${method} ${path}`, retryAfterSeconds(res.headers['retry-after'])));
        });
        res.on('error', reject);
      });
      r.setTimeout(this.options.timeoutMs ?? 30_000, () => r.destroy(new Error(`${method} ${path}: timed out`)));
      r.on('error', (err) => {
        this.options.observer?.(method, path, 0, Number(process.hrtime.bigint() - started) / 1e9);
        span?.end(0, err);
        if (!answered) UNANSWERED.add(err);
        reject(err);
      });
      if (payload) r.write(payload);
      r.end();
    });
  }

  /**
   * Opens a watch and feeds each event to `onEvent` until the server ends the stream, the
   * connection fails, or `signal` aborts. Resolves when the stream ends; rejects on errors
   * (including a non-2xx answer to the watch request itself). `onOpen` is called when the
   * server has accepted the watch (a 2xx answer).
   */
  async watch(type: ResourceType, options: WatchOptions): Promise<void> {
    // A watch's start answered 429 or 503 with Retry-After is started again in place, as a request is.
    for (let retries = 0; ; retries++) {
      const start = { opened: false };
      try {
        await this.watchOnce(type, {
          ...options,
          onOpen: () => {
            start.opened = true;
            options.onOpen?.();
          },
        });
        return;
      } catch (err) {
        // Only a start the server refused with Retry-After: a watch it took and that failed later,
        // or a connection that broke, is the caller's (the reflector's backoff and relist).
        const refusedStart = !start.opened && !options.signal.aborted && err instanceof ApiError;
        const wait = refusedStart ? retryWait('GET', err, retries) : undefined;
        if (wait === undefined) throw err;
        this.options.onRetry?.('WATCH', retryCode(err));
        await sleep(wait, options.signal);
      }
    }
  }

  private async watchOnce(type: ResourceType, options: WatchOptions): Promise<void> {
    const { namespace, query, onEvent, signal, idleTimeoutMs = 10 * 60 * 1000, onOpen, protobuf } = options;
    const path = resourcePath(type, namespace);
    await this.throttle('WATCH', path);
    const req = await this.prepare(
      'GET',
      path,
      { ...query, watch: 'true', allowWatchBookmarks: 'true' },
      protobuf ? { Accept: `${PROTOBUF_WATCH}, application/json` } : {},
    );
    return new Promise<void>((resolve, reject) => {
      const r = req.module.request({ ...req.options, agent: false }, (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          readError(res, `watch ${path}`).then(reject, reject);
          return;
        }
        onOpen?.();
        // An event the handler fails on ends the watch with that error. The readers are named so
        // that a CPU profile tells decoding a watch event from handling it.
        const events =
          protobuf && isProtobuf(res.headers['content-type'])
            ? readFrames(res, function decodedFrame(frame) {
                onEvent(decodeWatchEvent(frame, protobuf));
              })
            : readLines(res, function parsedLine(line) {
                onEvent(JSON.parse(line) as WatchEvent);
              });
        events.catch((err: unknown) => r.destroy(err instanceof Error ? err : new Error(String(err))));
        res.on('end', () => {
          signal.removeEventListener('abort', abort);
          resolve();
        });
        res.on('error', reject);
        res.on('aborted', () => {
          if (signal.aborted) resolve();
          else reject(new Error(`watch ${path}: connection aborted`));
        });
      });
      // A connection that carries nothing (not even a bookmark) for this long is dead.
      r.setTimeout(idleTimeoutMs, () => r.destroy(new Error(`watch ${path}: no data for ${idleTimeoutMs / 1000}s`)));
      r.on('error', (err) => {
        if (signal.aborted) resolve();
        else reject(err);
      });
      const abort = () => r.destroy();
      r.on('close', () => {
        // The signal outlives this watch (an informer passes its own to every watch it opens):
        // a listener left on it would keep this request for as long as the informer runs.
        signal.removeEventListener('abort', abort);
        if (signal.aborted) resolve();
        else reject(new Error(`watch ${path}: connection closed`));
      });
      if (signal.aborted) abort();
      signal.addEventListener('abort', abort, { once: true });
      r.end();
    });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private async prepare(
    method: string,
    path: string,
    query: Record<string, string> | undefined,
    headers: Record<string, string>,
  ) {
    const qs = query && Object.keys(query).length ? `?${new URLSearchParams(query).toString()}` : '';
    const basePath = this.server.pathname.replace(/\/$/, '');
    const options: https.RequestOptions = {
      method,
      protocol: this.server.protocol,
      hostname: this.server.hostname.replace(/^\[|\]$/g, ''),
      port: this.server.port || (this.server.protocol === 'https:' ? 443 : 80),
      path: `${basePath}${path}${qs}`,
      headers: {
        Accept: 'application/json',
        'User-Agent': this.options.userAgent ?? 'cdk8s-operator-kit-reconciler',
        ...headers,
      },
      agent: this.agent,
    };
    // Adds client certificates, CA and bearer token (re-read for rotating in-cluster tokens).
    await this.kubeConfig.applyToHTTPSOptions(options);
    options.agent = this.agent;
    const module = this.server.protocol === 'https:' ? https : http;
    return { module, options };
  }
}
