import type { KubeObject } from '../../../constructs/contract';
import { observedGenerationLags } from '../../../constructs/contract/health';
import { isJsonObject } from '../../../constructs/contract/json';
import type { Logger } from 'pino';
import { type Clock, type Priority, RateLimiter, type RateLimiterOptions, WorkQueue } from '../queue';
import { type KubeClient, sameJson, controllerOf, objectKey, splitKey, withoutBookkeeping } from '../client';
import { type EventRecorder, type Metrics, inSpan, type Tracer } from '../observability';
import { isTerminal } from './errors';
import type { Informer } from '../cache';

/** Which object to reconcile. */
export interface Request {
  readonly namespace?: string;
  readonly name: string;
}

/** What a reconcile asks for next. An error thrown instead means: retry with backoff. */
export interface Result {
  /** Reconcile again after this long, even if nothing changes (e.g. to poll something external). */
  readonly requeueAfterMs?: number;
}

export interface ReconcileContext {
  readonly client: KubeClient;
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  /** Fires when the controller stops: on shutdown, and when this process loses leadership. */
  readonly signal: AbortSignal;
}

// A reconciler with nothing to ask for returns nothing (`async () => {}`), like a zero
// reconcile.Result in controller-runtime.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- `async () => {}` must be a Reconciler
export type Reconciler = (req: Request, ctx: ReconcileContext) => Promise<Result | void>;

/** What every controller of a manager shares: the client, Events, logs, metrics and limits. */
export interface ControllerSetupOptions {
  readonly client: KubeClient;
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** @default 1 */
  readonly maxConcurrentReconciles?: number;
  /** Per-key backoff and overall rate of retries. @default 5 ms to 1000 s per key; 10 qps, burst 100 overall */
  readonly rateLimiter?: RateLimiterOptions;
  /**
   * Status writes of one resource are at least this many milliseconds apart, and the first comes
   * this long after its children were created or changed, so a burst of child events (a new
   * Deployment's status, then its pods) is written once. 0 writes every change at once.
   * @default 1000
   */
  readonly statusCoalesceMs?: number;
  /** Where the status pacing and the conditions' transition times read the time. @default the real clock */
  readonly clock?: Clock;
  /**
   * Reconciles of the initial list and of resyncs wait while created, changed and deleted objects
   * go first (see Priority): a resource created while a restarted controller works through
   * 10,000 no-op reconciles is not queued behind them. false: one first-in first-out queue.
   * @default true
   */
  readonly priorityQueue?: boolean;
  /** Traces each reconcile, its steps and its API requests (see tracing.ts). @default not traced */
  readonly tracer?: Tracer;
}

export interface ControllerOptions extends ControllerSetupOptions {
  readonly name: string;
  readonly reconciler: Reconciler;
  /**
   * How long until the status of the resource `key` may next be written (0: now). A change that
   * the reconcile writing it can take in (a child's add or update, a pod read for health) is
   * queued for then, not at once: a reconcile before it could compute the status, not write it.
   * @default always 0
   */
  readonly statusWriteWaitMs?: (key: string) => number;
}

/**
 * A controller in controller-runtime's shape: events from the primary kind (`for`), from owned
 * children (`owns`, mapped to their controller owner) and from anything else (`watches`, with a
 * map function) become keys in a rate-limited work queue; workers reconcile keys, never two
 * workers on the same key; a failed reconcile is retried with per-key exponential backoff.
 */
export class Controller {
  readonly queue: WorkQueue;
  private readonly log: Logger;
  private inFlight = 0;
  private running?: Promise<void>;
  private readonly stopping = new AbortController();
  /** The informer of the kind this controller reconciles (`for`). */
  private primary?: Informer;

  constructor(private readonly options: ControllerOptions) {
    this.log = options.logger.child({ controller: options.name });
    this.queue = new WorkQueue(new RateLimiter(options.rateLimiter), options.metrics.forQueue(options.name), {
      priorities: options.priorityQueue ?? true,
    });
    options.metrics.startController(options.name);
  }

  get name(): string {
    return this.options.name;
  }

  /**
   * Reconcile the objects of this informer's kind: when one is added or deleted, when anything
   * but its status changes, and on every resync. An update that only writes the status (ours,
   * mostly) is not a reason to reconcile, as with controller-runtime's GenerationChangedPredicate
   * — except that label, annotation, finalizer and deletion changes, which leave the generation
   * alone, do count. Resyncs are queued at low priority, and so is the initial list, but for
   * what it shows still waiting on a reconcile (see `awaitsReconcile`): a resource created or
   * changed just before this process started (or took over a shard) goes ahead of the re-checks.
   * `statusIsInput` says of a status-only update whether it changed an input of the object's
   * reconcile (a status field its render read): then it is reconciled too.
   */
  for(
    informer: Informer,
    options: { statusIsInput?: (key: string, before: KubeObject, after: KubeObject) => boolean } = {},
  ): this {
    const enqueue = (o: KubeObject, priority: Priority) => {
      this.queue.add(objectKey(o.metadata), priority);
    };
    this.primary = informer;
    informer.addHandler({
      onAdd: (o, initialList) => {
        enqueue(o, initialList && !awaitsReconcile(o) ? 'low' : 'normal');
      },
      onUpdate: (old, o) => {
        if (old === o) enqueue(o, 'low');
        else if (!onlyStatusChanged(old, o) || options.statusIsInput?.(objectKey(o.metadata), old, o))
          enqueue(o, 'normal');
      },
      onDelete: (o) => {
        enqueue(o, 'normal');
      },
    });
    return this;
  }

  /**
   * Reconcile the controlling owner (of `ownerKind`) when one of its children changes. While the
   * owner's status write waits (`statusWriteWaitMs`: its children just changed, or it was just
   * written), a child's add or update waits with it: a new Deployment's echo, its revision
   * annotation and its burst of status updates are then one reconcile, not one each. Anything
   * else they could need (a drift to repair) is repaired by that reconcile, at most the
   * coalescing window later. A child's delete is reconciled at once.
   */
  owns(informer: Informer, ownerKind: { apiVersion: string; kind: string }): this {
    const group = ownerKind.apiVersion.split('/')[0];
    const enqueueOwner = (o: KubeObject, priority: Priority, statusInput: boolean) => {
      const owner = controllerOf(o);
      if (owner?.kind === ownerKind.kind && owner.apiVersion.split('/')[0] === group) {
        this.enqueue(objectKey({ namespace: o.metadata.namespace, name: owner.name }), priority, statusInput);
      }
    };
    this.watchRelated(informer, enqueueOwner, (_old, o) => o !== undefined);
    return this;
  }

  /** Reconcile whatever `map` returns for each changed object. */
  watches(informer: Informer, map: (o: KubeObject) => Request[]): this {
    this.watchRelated(informer, (o, priority) => {
      map(o).forEach((r) => {
        this.queue.add(objectKey(r), priority);
      });
    });
    return this;
  }

  /**
   * Reconcile whatever `map` returns for each changed object, where no change of such an object
   * can do more than move the status of what it maps to (the pods a kind reads for its health):
   * each is queued for the resource's next status write (`statusWriteWaitMs`).
   */
  watchesForStatus(informer: Informer, map: (o: KubeObject) => Request[]): this {
    this.watchRelated(
      informer,
      (o, priority) => {
        map(o).forEach((r) => {
          this.enqueue(objectKey(r), priority, true);
        });
      },
      () => true,
    );
    return this;
  }

  /** Queues `key`; a change to fold into the status write no sooner than that write may come. */
  private enqueue(key: string, priority: Priority, statusInput: boolean): void {
    const wait = statusInput ? (this.options.statusWriteWaitMs?.(key) ?? 0) : 0;
    if (wait > 0) this.queue.addAfter(key, wait, priority);
    else this.queue.add(key, priority);
  }

  /**
   * Calls `enqueue` for every event of a related kind, old and new versions of an update alike:
   * at low priority for the initial list and resyncs, at normal priority for changes. A change
   * that `statusInput` (given the object before and after; undefined for an add or a delete)
   * judges an input to the status alone is flagged so.
   */
  private watchRelated(
    informer: Informer,
    enqueue: (o: KubeObject, priority: Priority, statusInput: boolean) => void,
    statusInput: (old: KubeObject | undefined, updated: KubeObject | undefined) => boolean = () => false,
  ): void {
    informer.addHandler({
      onAdd: (o, initialList) => {
        if (initialList) enqueue(o, 'low', false);
        else enqueue(o, 'normal', statusInput(undefined, o));
      },
      onUpdate: (old, o) => {
        if (old === o) {
          enqueue(o, 'low', false);
          return;
        }
        const forStatus = statusInput(old, o);
        enqueue(old, 'normal', forStatus);
        enqueue(o, 'normal', forStatus);
      },
      onDelete: (o) => {
        enqueue(o, 'normal', statusInput(o, undefined));
      },
    });
  }

  /** Starts the workers; they run until `stop`. */
  start(): void {
    this.prepareToLead();
    const workers = this.options.maxConcurrentReconciles ?? 1;
    this.log.info({ workers }, 'starting workers');
    this.running = Promise.all(Array.from({ length: workers }, () => this.worker())).then(() => undefined);
  }

  /**
   * What the informers queued before the workers start is a re-check, but for a resource that
   * still awaits its reconcile (see `awaitsReconcile`) or is gone: a warm standby queued its
   * children's every change while another replica led and reconciled them (at N = 10,000, as many
   * keys as resources). Demoted, a resource created or changed meanwhile goes first, as after a
   * fresh start's initial list.
   */
  prepareToLead(): void {
    const primary = this.primary;
    this.queue.demote((key) => {
      const o = primary?.get(key);
      return !o || awaitsReconcile(o);
    });
  }

  /** Stops taking work and waits for in-flight reconciles to finish. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.queue.shutDown();
    await this.running;
    this.log.info('all workers finished');
  }

  get activeReconciles(): number {
    return this.inFlight;
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcileKey(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async reconcileKey(key: string): Promise<void> {
    const { metrics, name } = this.options;
    const req = splitKey(key);
    const log = this.log.child({
      [req.namespace ? 'namespace' : 'cluster']: req.namespace ?? true,
      name: req.name,
      reconcileID: Math.random().toString(36).slice(2, 10),
    });
    const end = metrics.reconcileTime.startTimer({ controller: name });
    this.inFlight++;
    metrics.activeWorkers.set({ controller: name }, this.inFlight);
    try {
      const ctx = {
        client: this.options.client,
        recorder: this.options.recorder,
        logger: log,
        signal: this.stopping.signal,
      };
      const result = await inSpan(this.options.tracer, 'reconcile', () => this.options.reconciler(req, ctx), {
        controller: name,
        'k8s.namespace.name': req.namespace,
        'k8s.object.name': req.name,
      });
      this.queue.forget(key);
      if (result?.requeueAfterMs && result.requeueAfterMs > 0) {
        // A poll keeps the priority it came with: a resync's poll stays behind the events.
        this.queue.addAfter(key, result.requeueAfterMs, this.queue.priorityOf(key));
        metrics.reconcileTotal.inc({ controller: name, result: 'requeue_after' });
      } else {
        metrics.reconcileTotal.inc({ controller: name, result: 'success' });
      }
    } catch (err) {
      metrics.reconcileTotal.inc({ controller: name, result: 'error' });
      metrics.reconcileErrors.inc({ controller: name });
      if (isTerminal(err)) {
        // Retrying cannot fix it: the next change of the object (a watch event) tries again.
        metrics.terminalReconcileErrors.inc({ controller: name });
        this.queue.forget(key);
        log.error({ err, reason: err.reason }, 'terminal reconciler error; not retrying until the object changes');
      } else {
        log.error({ err, retries: this.queue.numRequeues(key) }, 'reconciler error; retrying with backoff');
        this.queue.addRateLimited(key, this.queue.priorityOf(key));
      }
    } finally {
      end();
      this.inFlight--;
      metrics.activeWorkers.set({ controller: name }, this.inFlight);
    }
  }
}

/**
 * Whether an object's status shows it still waits on a reconcile: it has none, its
 * `observedGeneration` (or a condition's) is older than its generation, or it is being deleted.
 * A status that says nothing of generations counts as reconciled.
 */
export function awaitsReconcile(o: KubeObject): boolean {
  if (o.metadata.deletionTimestamp) return true;
  if (!isJsonObject(o.status) || Object.keys(o.status).length === 0) return true;
  if (typeof o.status.observedGeneration === 'number') return observedGenerationLags(o);
  const generation = o.metadata.generation;
  const conditions = Array.isArray(o.status.conditions) ? o.status.conditions : [];
  return conditions.some(
    (c) =>
      generation !== undefined &&
      isJsonObject(c) &&
      typeof c.observedGeneration === 'number' &&
      c.observedGeneration < generation,
  );
}

/** Whether two versions of an object differ in nothing but status and bookkeeping. */
export function onlyStatusChanged(old: KubeObject, updated: KubeObject): boolean {
  return sameJson(withoutStatus(old), withoutStatus(updated));
}

function withoutStatus(o: KubeObject): unknown {
  const { status: _status, ...rest } = withoutBookkeeping(o);
  return rest;
}
