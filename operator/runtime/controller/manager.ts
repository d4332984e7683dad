import type { KubeObject, ResourceType } from '../../../constructs/contract';
import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { exponentialDelay, sleep } from '../queue';
import type { KubeClient } from '../client';
import { type Controller } from './controller';
import { cacheDecoder, cacheTransform, Informer, namespaceInRange, type ShardScope } from '../cache';
import { LeaderElector, type LeaderElectionOptions, ShardElector } from '../election';
import type { Metrics, MetricsAuthorizer } from '../observability';
import { selfSignedCertificate } from '../webhooks';

export interface ManagerOptions {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Watch only this namespace (`namespaces` with one). @default - all namespaces */
  readonly namespace?: string;
  /** Watch only these namespaces: a list and watch of each, never of all. @default - all namespaces */
  readonly namespaces?: readonly string[];
  /** `host:port` or `:port` of /metrics; '0' disables. @default not served */
  readonly metricsBindAddress?: string;
  /**
   * Serve /metrics over HTTPS to authorized callers only. Absent: plain HTTP, open to anyone
   * who reaches the port (`--metrics-secure=false`).
   * @default plain HTTP
   */
  readonly metricsSecurity?: {
    readonly authorizer: MetricsAuthorizer;
    /** A directory with tls.crt and tls.key (e.g. a mounted cert-manager Secret). @default a self-signed certificate */
    readonly certPath?: string;
  };
  /** `host:port` or `:port` of /healthz and /readyz; '0' disables. @default not served */
  readonly healthProbeBindAddress?: string;
  /** Leader election; absent means every replica reconciles (only safe with one). @default none */
  readonly leaderElection?: Omit<LeaderElectionOptions, 'logger' | 'onLeaderChange'>;
  /**
   * Cut the namespaces into this many shards, each reconciled by the replica holding its Lease
   * (named from `leaderElection`, which it needs): a replica caches and reconciles only the
   * namespaces whose hash falls in its shard's range. @default 1: no sharding
   */
  readonly shards?: number;
  /** Informer resync period. @default 10 hours */
  readonly syncPeriodMs?: number;
  /**
   * How long a watch may have nothing from the API server (the server bookmarks about every
   * minute) before `/healthz` fails; a watch silent for half as long is watched again first.
   * @default 3 minutes
   */
  readonly watchStallTimeoutMs?: number;
  /** Longest wait for in-flight reconciles on shutdown. @default 25000 */
  readonly gracefulShutdownTimeoutMs?: number;
  /**
   * With leader election (unsharded): a replica that does not lead lists and watches as the
   * leader does, so it takes over with its caches synced. False: it caches nothing until it holds
   * the lease (its memory stays at the process's own), and a takeover waits for every list.
   * @default true
   */
  readonly warmStandby?: boolean;
}

/** The longest wait between attempts of a failing leader task. */
const LEADER_TASK_MAX_DELAY_MS = 60_000;

/**
 * Runs shared informers, controllers, leader election and the health and metrics endpoints,
 * and shuts them down gracefully: stop taking work, finish in-flight reconciles, release the
 * lease, then stop watching.
 *
 * Informers start at once (so a standby replica is ready and warm); controllers start only on
 * the elected leader. A leader that loses its lease stops and `run` resolves with 1, so the pod
 * restarts clean rather than risk two leaders, as controller-runtime does.
 */
export class Manager {
  private readonly informers = new Map<string, Informer>();
  private readonly controllers: Controller[] = [];
  private readonly leaderTasks: { name: string; task: (signal: AbortSignal) => Promise<void> }[] = [];
  private readonly servers: http.Server[] = [];
  readonly elector?: LeaderElector;
  readonly sharding?: ShardElector;

  constructor(private readonly options: ManagerOptions) {
    const election = options.leaderElection;
    const shards = options.shards ?? 1;
    if (shards > 1) {
      if (!election) throw new Error('sharding needs leader election: the shards are Leases');
      this.sharding = new ShardElector(options.client, {
        ...election,
        shards,
        logger: options.logger.child({ component: 'sharding' }),
        onShardChange: (shard) => {
          options.metrics.shard.reset();
          if (shard !== undefined) options.metrics.shard.set({ shard: String(shard), shards: String(shards) }, 1);
        },
      });
    } else if (election) {
      this.elector = new LeaderElector(options.client, {
        ...election,
        logger: options.logger.child({ component: 'leader-election' }),
        onLeaderChange: (leading) => {
          options.metrics.leader.set({ name: election.name }, leading ? 1 : 0);
        },
      });
    }
  }

  /** The one shared informer of a resource type (and field selector). */
  informer<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: { fieldSelector?: string } = {},
  ): Informer<T> {
    const key = `${type.group}/${type.resource}?${options.fieldSelector ?? ''}`;
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new Informer(this.options.client, type, {
        fieldSelector: options.fieldSelector,
        transform: cacheTransform(this.options.client.fieldManager, type),
        protobuf: cacheDecoder(type),
        // The informer reads either: one namespace, or several.
        namespace: type.namespaced ? this.options.namespace : undefined,
        namespaces: type.namespaced ? this.options.namespaces : undefined,
        resyncPeriodMs: this.options.syncPeriodMs,
        stallTimeoutMs: this.options.watchStallTimeoutMs,
        logger: this.options.logger.child({ component: 'informer' }),
        onWatchRestart: (reason) => {
          this.options.metrics.watchRestarts.inc({ resource: type.resource, reason });
        },
        onReceived: (objects) => {
          this.options.metrics.watchEvents.inc({ resource: type.resource }, objects);
        },
      });
      this.informers.set(key, inf);
      // One asked for after the shard was taken caches that shard too.
      if (this.shardScope) this.restrict(inf, this.shardScope);
      const created = inf;
      this.options.metrics.startWatch(type.resource, () => created.silentMs());
    }
    return inf as unknown as Informer<T>;
  }

  add(controller: Controller): void {
    this.controllers.push(controller);
  }

  /**
   * Work the leader does once after its controllers start (a storage migration): retried with
   * backoff while it fails, abandoned on shutdown; it never holds up reconciling.
   */
  addLeaderTask(name: string, task: (signal: AbortSignal) => Promise<void>): void {
    this.leaderTasks.push({ name, task });
  }

  get synced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** A cold standby (`warmStandby: false`) that does not lead: its informers are not started. */
  private get waitingCold(): boolean {
    return this.options.warmStandby === false && !this.sharding && !!this.elector && !this.elector.isLeader;
  }

  /** Each informer stream with nothing from the API server past the stall window, said for `/healthz`. */
  stalledWatches(): string[] {
    return [...this.informers.values()].flatMap((i) =>
      i
        .stalledStreams()
        .map(
          (s) =>
            `${i.type.resource}${s.namespace === undefined ? '' : ` in ${s.namespace}`} for ${Math.round(s.silentMs / 1000)}s`,
        ),
    );
  }

  /** Whether a cached object is this replica's: always, unless sharded (then: in its shard's range). */
  owns(namespace: string | undefined): boolean {
    const shard = this.sharding?.shard;
    return !this.sharding || (!!shard && namespaceInRange(namespace ?? '', shard.range));
  }

  /** Runs until `signal` aborts (resolves 0) or the lease is lost (resolves 1). */
  async run(signal: AbortSignal): Promise<number> {
    const log = this.options.logger;
    await this.serve();
    const informerStop = new AbortController();
    // Every list and watch of every namespace listens on it: more than Node's warning threshold.
    setMaxListeners(0, informerStop.signal);
    const informerRuns: Promise<void>[] = [];
    let exitCode = 0;
    try {
      const holding = await this.takeWork(signal, (runs) => informerRuns.push(...runs), informerStop.signal);
      if (!holding) return 0;
      if (holding === 'lost') return (exitCode = 1);
      this.controllers.forEach((c) => {
        c.start();
      });
      // Leader tasks stop on shutdown, and when leadership ends; with shards, shard 0 runs them.
      const tasksStop = new AbortController();
      const taskSignal = AbortSignal.any([signal, tasksStop.signal]);
      const leads = !this.sharding || this.sharding.shard?.index === 0;
      const tasks = leads ? this.leaderTasks.map((t) => this.runLeaderTask(t, taskSignal)) : [];

      if (!(await holding.kept)) exitCode = 1;
      tasksStop.abort();
      await Promise.allSettled(tasks);
      log.info(
        { reason: exitCode ? 'lost leader lease' : 'signal' },
        'shutting down: no new work; waiting for in-flight reconciles',
      );
      await withTimeout(
        Promise.all(this.controllers.map((c) => c.stop())),
        this.options.gracefulShutdownTimeoutMs ?? 25_000,
        () => {
          log.warn('graceful shutdown timed out with reconciles still running');
        },
      );
      if (exitCode === 0) await (this.sharding ?? this.elector)?.release();
      return exitCode;
    } finally {
      informerStop.abort();
      await Promise.allSettled(informerRuns);
      await this.closeServers();
      this.options.client.close();
      log.info({ exitCode }, 'manager stopped');
    }
  }

  /**
   * Starts the informers and waits until this process may reconcile: caches synced and, with
   * leader election, the lease held; with shards, a shard held (taken first, since the informers
   * cache only its range) and its range let go by any earlier holder. Resolves with what resolves
   * false when the lease is lost (true on shutdown); 'lost' when it was lost before this process
   * started reconciling; undefined when `signal` aborted first.
   */
  private async takeWork(
    signal: AbortSignal,
    started: (runs: Promise<void>[]) => void,
    informerSignal: AbortSignal,
  ): Promise<{ kept: Promise<boolean> } | 'lost' | undefined> {
    const startInformers = () => {
      started([...this.informers.values()].map((i) => i.run(informerSignal)));
    };
    const synced = () => Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
    if (this.sharding) {
      const shard = await this.sharding.acquire(signal);
      if (!shard) return undefined;
      this.shardScope = {
        range: shard.range,
        serverFilters: await this.sharding.serverFilters(signal),
        onServedBy: this.reportServedBy,
      };
      for (const informer of this.informers.values()) this.restrict(informer, this.shardScope);
      const sharding = this.sharding;
      const held = await this.syncWhileHolding(sharding, signal, () => {
        startInformers();
        return Promise.all([synced(), sharding.waitForHandover(signal)]);
      });
      if (typeof held === 'object')
        this.options.logger.info({ informers: this.informers.size, shard: shard.index }, 'caches synced');
      return held;
    }
    if (this.elector && this.options.warmStandby === false)
      return this.takeWorkCold(this.elector, signal, startInformers, synced);
    startInformers();
    await Promise.race([synced(), aborted(signal)]);
    if (signal.aborted) return undefined;
    this.options.logger.info({ informers: this.informers.size }, 'caches synced');
    if (!this.elector) return { kept: aborted(signal).then(() => true) };
    if (!(await this.elector.acquire(signal))) return undefined;
    return { kept: this.elector.holdUntilLost(signal) };
  }

  /**
   * A cold standby's way to work: the lease first, then the informers, renewing meanwhile (a
   * large list can outlast the lease). Stopped while syncing, it gives the lease back as a holder does.
   */
  private async takeWorkCold(
    elector: LeaderElector,
    signal: AbortSignal,
    startInformers: () => void,
    synced: () => Promise<unknown>,
  ): Promise<{ kept: Promise<boolean> } | 'lost' | undefined> {
    if (!(await elector.acquire(signal))) return undefined;
    const held = await this.syncWhileHolding(elector, signal, () => {
      startInformers();
      return synced();
    });
    if (typeof held === 'object')
      this.options.logger.info(
        { informers: this.informers.size },
        'caches synced (listed once leading: a cold standby)',
      );
    return held;
  }

  /**
   * Renews what `holder` holds (a shard, the lease) from now on, since filling the caches can
   * outlast the lease, while `sync` runs: `{ kept }` once it is done; 'lost' when the lease went
   * first; undefined when `signal` aborted first — then it is given back, as a holder does.
   */
  private async syncWhileHolding(
    holder: { holdUntilLost(signal: AbortSignal): Promise<boolean>; release(): Promise<void> },
    signal: AbortSignal,
    sync: () => Promise<unknown>,
  ): Promise<{ kept: Promise<boolean> } | 'lost' | undefined> {
    const kept = holder.holdUntilLost(signal);
    const ready = sync().then(() => true);
    if (await Promise.race([ready, kept.then(() => false), aborted(signal).then(() => false)])) return { kept };
    if (!signal.aborted) return 'lost';
    await kept;
    await holder.release();
    return undefined;
  }

  /** A namespaced informer caches the shard's range only; a cluster-scoped one, everything (every shard may read it). */
  private restrict(informer: Informer, scope: ShardScope): void {
    if (informer.type.namespaced) informer.restrictTo(scope);
  }

  /** The held shard's range, as every namespaced informer caches it, once a shard is held. */
  private shardScope?: ShardScope;

  /** Where each kind's shard range is applied: the metric, and the log once per kind and way. */
  private readonly servedByLogged = new Map<string, string>();
  private readonly reportServedBy = (resource: string, by: 'server' | 'client'): void => {
    this.options.metrics.shardFilter.set({ resource, by }, 1);
    this.options.metrics.shardFilter.set({ resource, by: by === 'server' ? 'client' : 'server' }, 0);
    if (this.servedByLogged.get(resource) === by) return;
    this.servedByLogged.set(resource, by);
    if (by === 'server')
      this.options.logger.info({ resource }, 'sharded list and watch: the API server sends only this shard');
    else
      this.options.logger.warn(
        { resource },
        'the API server ignored shardSelector (feature gate ShardedListAndWatch off?): receiving every object and keeping this shard only',
      );
  };

  private async closeServers(): Promise<void> {
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.closeAllConnections();
            s.close(() => {
              r();
            });
          }),
      ),
    );
  }

  private async runLeaderTask(
    { name, task }: { name: string; task: (signal: AbortSignal) => Promise<void> },
    signal: AbortSignal,
  ): Promise<void> {
    const log = this.options.logger.child({ component: 'leader-task', task: name });
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        await task(signal);
        return;
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by an abort during the await above
        if (signal.aborted) return;
        const delayMs = exponentialDelay(attempt + 1, 1000, LEADER_TASK_MAX_DELAY_MS);
        log.error({ err, retryInMs: delayMs }, 'leader task failed; retrying');
        await sleep(delayMs, signal);
      }
    }
  }

  /** The health probe and metrics endpoints, each on its own address (none when it is "0"). */
  private async serve(): Promise<void> {
    const { metricsBindAddress, healthProbeBindAddress, metricsSecurity } = this.options;
    await this.listen(healthProbeBindAddress, 'health probes', (req, res) => {
      this.serveHealth(req, res);
    });
    await this.listen(
      metricsBindAddress,
      'metrics',
      (req, res) => void this.serveMetrics(req, res),
      metricsSecurity ? servingCertificate(metricsSecurity.certPath) : undefined,
    );
  }

  private async listen(
    address: string | undefined,
    what: string,
    handler: http.RequestListener,
    tls?: { cert: string; key: string },
  ): Promise<void> {
    if (!address || address === '0') return;
    const { host, port } = parseBindAddress(address);
    const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        resolve();
      });
    });
    this.servers.push(server);
    const actual = server.address();
    this.options.logger.info(
      { address: typeof actual === 'object' && actual ? `${actual.address}:${actual.port}` : address, secure: !!tls },
      `serving ${what}`,
    );
  }

  /**
   * Live while the process runs and its watches deliver: a watch with nothing from the API server
   * (not even a bookmark) past the stall window fails it, so the kubelet restarts an operator that
   * looks healthy but hears nothing. Ready once the caches have synced.
   */
  private serveHealth(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/healthz' || path === '/livez') {
      const stalled = this.stalledWatches();
      if (stalled.length) reply(res, 503, `watches delivering nothing: ${stalled.join('; ')}`);
      else reply(res, 200, 'ok');
      return;
    }
    if (path === '/readyz') {
      // A sharded standby holds no shard and a cold standby no lease: neither caches anything,
      // and waiting is their healthy state.
      if (this.synced || (this.sharding && !this.sharding.shard) || this.waitingCold) reply(res, 200, 'ok');
      else reply(res, 503, 'informers not synced');
      return;
    }
    reply(res, 404, 'not found');
  }

  /** Prometheus metrics, behind TokenReview and SubjectAccessReview when secure. Never rejects: failures answer 500. */
  private async serveMetrics(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { metrics, metricsSecurity: security } = this.options;
    const urlPath = (req.url ?? '').split('?')[0] ?? '';
    if (urlPath !== '/metrics') {
      reply(res, 404, 'not found');
      return;
    }
    try {
      if (security) {
        const decision = await security.authorizer.authorize(req.headers.authorization, urlPath);
        if (decision.status !== 200) {
          reply(res, decision.status, decision.reason);
          return;
        }
      }
      const body = await metrics.registry.metrics();
      res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
      res.end(body);
    } catch (err) {
      reply(res, 500, String(err));
    }
  }
}

/** The mounted certificate, or a self-signed one made now (what controller-runtime does too). */
function servingCertificate(certPath: string | undefined): { cert: string; key: string } {
  if (certPath) return mountedCertificate(certPath);
  const host = os.hostname();
  return selfSignedCertificate(host, [host, 'localhost']);
}

/** `tls.crt` and `tls.key` of a directory, e.g. a mounted cert-manager Secret. */
export function mountedCertificate(dir: string): { cert: string; key: string } {
  return {
    cert: fs.readFileSync(path.join(dir, 'tls.crt'), 'utf8'),
    key: fs.readFileSync(path.join(dir, 'tls.key'), 'utf8'),
  };
}

function reply(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}

/** `:8080` → all interfaces; `127.0.0.1:0` → loopback, any free port. */
export function parseBindAddress(address: string): { host?: string; port: number } {
  const i = address.lastIndexOf(':');
  const host = i > 0 ? address.slice(0, i).replace(/^\[|\]$/g, '') : undefined;
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`bad bind address ${JSON.stringify(address)}: expected host:port or :port`);
  return { host, port };
}

function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((r) => {
        signal.addEventListener(
          'abort',
          () => {
            r();
          },
          { once: true },
        );
      });
}

async function withTimeout(p: Promise<unknown>, ms: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((r) => {
    timer = setTimeout(() => {
      onTimeout();
      r();
    }, ms);
  });
  await Promise.race([p.then(() => undefined), timeout]);
  clearTimeout(timer);
}
