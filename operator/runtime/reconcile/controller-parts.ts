/**
 * What every reconcile of one declared controller shares (its declaration, caches and memory),
 * the resource one reconcile is about, and the helpers both the reconcile steps and the finalize
 * step read the cluster through.
 */
import type { WrittenChildren, ChildFailures, RenderCache } from '../children';
import { controlledBy, getMadeFor, getOwn, type KeptBy, keptType } from '../children';

export { getMadeFor, getOwn, type KeptBy };
import type {
  CacheReads,
  ControllerDeclaration,
  CustomResourceObject,
  KubeObject,
  PersistentVolumeClaim,
  Pod,
  PrepareApi,
  ResourceType,
} from '../../../constructs/contract';
import { isOfType } from '../../../constructs/contract';
import type { Blockers } from './blockers';
import { isConflict, type KubeClient } from '../client';
import type { Condition } from '../../../constructs/contract/conditions';
import type { ReconcileContext, TerminalError } from '../controller';
import type { Informer } from '../cache';
import type { Metrics, Tracer } from '../observability';
import type { RenderedChildren } from '../../../constructs/contract/render';
import type { StatusPacer } from './status-pacing';
import type { Clock } from '../queue';

/** A type the controller owns, with its informer. */
export interface OwnedType {
  readonly type: ResourceType;
  readonly informer: Informer;
}

/** A custom resource as the steps read it. */
export type Resource = CustomResourceObject<unknown, { conditions?: Condition[] }>;

/** What every reconcile of one controller shares: its declaration, caches and memory. */
export interface ControllerParts {
  readonly decl: ControllerDeclaration<Resource>;
  readonly type: ResourceType<Resource>;
  readonly resources: Informer<Resource>;
  /** By kind. */
  readonly owned: ReadonlyMap<string, OwnedType>;
  /** By `group/kind`. */
  readonly reads: ReadonlyMap<string, Informer>;
  readonly deletable: readonly OwnedType[];
  readonly failures?: ChildFailures;
  /** The Pods of the workloads it owns, to trace to them (see `healthReads`). */
  readonly pods?: Informer<Pod>;
  /** The claims of the StatefulSets it owns, to grow them and judge their sizes (see `healthReads`). */
  readonly claims?: Informer<PersistentVolumeClaim>;
  readonly renders: RenderCache<RenderedChildren>;
  /** Terminal errors of the apply phase, by resource key: not retried until the generation changes. */
  readonly refused: Map<string, { readonly uid: string; readonly generation: number; readonly error: TerminalError }>;
  /**
   * The children the API server refused, by resource key: at that generation, a refused child is
   * not sent again while it stays as it was (see `applyChildren`); the others still are applied.
   */
  readonly refusedChildren: Map<string, RefusedChildren>;
  /** Children written that the cache has not shown yet, which stand for its stale copies. */
  readonly written: WrittenChildren;
  readonly pacer: StatusPacer;
  /** The time conditions are stamped with (and the pacer's): a virtual one in unit tests. */
  readonly clock: Pick<Clock, 'now'>;
  readonly blockers: Blockers;
  readonly metrics: Metrics;
  /** Spans for the steps of each reconcile, when tracing is on. */
  readonly tracer?: Tracer;
}

/** What the API server refused of one resource's children at one generation. */
export interface RefusedChildren {
  readonly uid: string;
  readonly generation: number;
  /** By `Kind/name`: the refusal, and the child's resourceVersion then (none: it did not exist). */
  readonly children: Map<string, { readonly resourceVersion?: string; readonly error: TerminalError }>;
}

/** The resource one reconcile is about, and that reconcile's context. Read only. */
export interface Target {
  /** `namespace/name`. */
  readonly key: string;
  readonly resource: Resource;
  readonly ctx: ReconcileContext;
  /** The API server gives every stored object a uid. */
  readonly uid: string;
  readonly generation: number;
  readonly namespace: string | undefined;
}

export function targetOf(key: string, resource: Resource, ctx: ReconcileContext): Target {
  const { uid = '', generation = 0, namespace } = resource.metadata;
  return { key, resource, ctx, uid, generation, namespace };
}

/** Forgets what was remembered of a resource that is gone or going. */
export function forget(
  parts: Pick<ControllerParts, 'blockers' | 'pacer' | 'refused' | 'refusedChildren' | 'renders' | 'written'>,
  key: string,
): void {
  parts.refused.delete(key);
  parts.refusedChildren.delete(key);
  parts.written.forget(key);
  parts.pacer.forget(key);
  parts.renders.delete(key);
  parts.blockers.set(key, []);
}

/**
 * The writes a `prepare` or `finalize` step may make, through the same gate as every other write:
 * none once `signal` says stop (shutdown, or leadership lost). Reads and replacements of `keeps`
 * objects reach only those the resource controls.
 */
export function prepareApi(client: KubeClient, signal: AbortSignal, keptBy?: KeptBy): PrepareApi {
  return {
    createIfAbsent: (t, o) => {
      signal.throwIfAborted();
      return createIfAbsent(client, t, o);
    },
    getOwn: (type, name) => getOwn(client, type, name, keptBy),
    getMadeFor: (type, name, madeFor) => getMadeFor(client, type, name, madeFor, keptBy),
    replaceOwn: async (type, object) => {
      const by = keptType(type, keptBy);
      if (!controlledBy(object, by.uid) || object.metadata.namespace !== by.namespace)
        throw new Error(`${type.kind} ${object.metadata.name} is not the resource's own: not replaced`);
      signal.throwIfAborted();
      return client.update(type, object);
    },
  };
}

/** Reads of the caches of the declaration's `reads` types, in the target's namespace (or all). */
export function cacheReads(parts: Pick<ControllerParts, 'decl' | 'reads'>, t: Pick<Target, 'namespace'>): CacheReads {
  return {
    read: <T extends KubeObject>(
      type: ResourceType<T>,
      labels?: Record<string, string>,
      options?: { readonly allNamespaces?: boolean },
    ): T[] => {
      const inf = parts.reads.get(`${type.group}/${type.kind}`);
      if (!inf) throw new Error(`controller ${parts.decl.name} reads ${type.kind} but does not declare it in reads`);
      return inf
        .list(options?.allNamespaces ? undefined : t.namespace, labels)
        .filter((o): o is T => isOfType(type, o));
    },
  };
}

/** The `keeps` reach of a reconcile's target. */
export function keptByTarget(parts: Pick<ControllerParts, 'decl'>, t: Target): KeptBy {
  return { uid: t.uid, namespace: t.namespace, keeps: parts.decl.keeps ?? [] };
}

/** Creates an object unless one of its name exists (see PrepareApi). */
async function createIfAbsent(client: KubeClient, type: ResourceType, object: KubeObject): Promise<boolean> {
  try {
    await client.create(type, object, object.metadata.namespace);
    return true;
  } catch (err) {
    if (isConflict(err)) return false;
    throw err;
  }
}
