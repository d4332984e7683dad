/**
 * When a resource's status is written, in one place: why a reconcile's status write waits, and
 * the write itself. Three things delay it, all here or wired from here:
 *
 * - the coalescing window (`ControllerSetupOptions.statusCoalesceMs`, the pacer's `coalesceMs`):
 *   a resource's status writes are at least that far apart, and come that long after its children
 *   changed, so a burst of child events (a new Deployment's status, then its pods) becomes one
 *   write;
 * - a reconcile that finds its write must wait requeues itself for when it may come
 *   (`writeStatus`'s `requeueAfterMs`), and the Events it computes meanwhile are recorded once;
 * - a change to something only its status reads (a Pod, a declared read) is queued no sooner than
 *   that write may come: the builder hands the controller `StatusPacer.writeWaitMs` as its
 *   `statusWriteWaitMs`, which the controller applies when it enqueues such a change.
 */
import type { KubeObject, ResourceType } from '../../../constructs/contract';
import { apiVersionOf, isNotFound, type KubeClient, sameJson } from '../client';
import type { Result } from '../controller';
import { type Clock, realClock } from '../queue';
import type { ControllerParts, Target } from './controller-parts';

/**
 * When a resource's status may be written (the coalescing window above), and which Events a
 * reconcile still has to record: while a write waits, the next reconciles compute the same
 * transition Events again; each is recorded once (a Warning once per reason, whatever its message).
 */
export class StatusPacer {
  /**
   * By resource key: when its status was last written (or its children changed), the Events
   * recorded since, and the reason of the `Degraded` Warning last recorded while it stays True.
   */
  private readonly clocks = new Map<string, { at: number; recorded: Set<string>; degraded?: string }>();

  constructor(
    private readonly coalesceMs: number,
    private readonly clock: Pick<Clock, 'now'> = realClock,
  ) {}

  /** Drops what is remembered of a resource (deleted). */
  forget(key: string): void {
    this.clocks.delete(key);
  }

  /**
   * How long until the status of `key` may be written: 0 when it may be now, or when nothing is
   * remembered of the resource. A reconcile sooner could compute the status but not write it.
   */
  writeWaitMs(key: string): number {
    const clock = this.clocks.get(key);
    if (!clock || this.coalesceMs <= 0) return 0;
    return Math.max(0, clock.at + this.coalesceMs - this.clock.now());
  }

  /** One reconcile's view of a resource's pacing; `end()` it when the reconcile is done. */
  begin(key: string): PacedReconcile {
    const clock = this.clocks.get(key) ?? { at: -Infinity, recorded: new Set<string>() };
    let waiting = false;
    return {
      isNewEvent: (e) => {
        // A Warning is about a state (Degraded turning True for a reason), whose words may change
        // between reconciles (a restart count, the scheduler's tally): one per reason.
        const id = e.type === 'Warning' ? `${e.type}|${e.reason}` : `${e.type}|${e.reason}|${e.message}`;
        if (clock.recorded.has(id)) return false;
        clock.recorded.add(id);
        return true;
      },
      waitBeforeWrite: (childrenChanged) => {
        const now = this.clock.now();
        if (childrenChanged) clock.at = now;
        const wait = this.coalesceMs > 0 ? clock.at + this.coalesceMs - now : 0;
        waiting = wait > 0;
        return waiting ? wait : 0;
      },
      written: () => {
        clock.at = this.clock.now();
      },
      degradedWarned: () => clock.degraded,
      setDegradedWarned: (reason) => {
        clock.degraded = reason;
      },
      end: () => {
        // Events are held back from repeating only while a status write waits.
        if (!waiting) clock.recorded.clear();
        this.clocks.set(key, clock);
      },
    };
  }
}

export interface PacedReconcile {
  /** Whether an Event is new since the last status write (and marks it recorded). */
  isNewEvent(e: { readonly type: string; readonly reason: string; readonly message: string }): boolean;
  /** How long the status write must wait (0: write now); children that changed restart the wait. */
  waitBeforeWrite(childrenChanged: boolean): number;
  /** The status was just written. */
  written(): void;
  /**
   * The reason `Degraded` was True for when its Warning was recorded, while it has stayed True
   * since (this process's memory: the cached resource may not show the status written yet).
   */
  degradedWarned(): string | undefined;
  setDegradedWarned(reason: string | undefined): void;
  end(): void;
}

/**
 * Write: the status through the status subresource when it changed — or, while children just
 * changed (their own status follows in a moment), a requeue for when that burst has passed.
 */
export async function writeStatus(
  parts: Pick<ControllerParts, 'type'>,
  t: Target,
  written: { status: object | undefined; childrenChanged: boolean; requeueAfterMs?: number; paced: PacedReconcile },
): Promise<Result | undefined> {
  const { status, paced } = written;
  let requeueAfterMs = written.requeueAfterMs;
  if (status && !sameJson(status, t.resource.status ?? {})) {
    const wait = paced.waitBeforeWrite(written.childrenChanged);
    if (wait > 0) {
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, wait);
    } else {
      // Through the gate as every write: none once the reconcile must stop (leadership lost).
      t.ctx.signal.throwIfAborted();
      try {
        await applyStatus(t.ctx.client, parts.type, t.resource, status);
      } catch (err) {
        // Deleted while it was reconciled: no status to write, and its deletion's event forgets it.
        if (!isNotFound(err)) throw err;
        t.ctx.logger.debug({ err }, 'resource deleted during its reconcile; its status was not written');
        return undefined;
      }
      paced.written();
    }
  }
  return requeueAfterMs ? { requeueAfterMs } : undefined;
}

/** Writes `status` through the status subresource (`writeStatus` decides when it has changed and may be written). */
export async function applyStatus(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject & { status?: unknown },
  status: object,
): Promise<void> {
  await client.apply(
    type,
    {
      apiVersion: obj.apiVersion ?? apiVersionOf(type),
      kind: obj.kind ?? type.kind,
      metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
      status,
    },
    { subresource: 'status' },
  );
}
