/**
 * The steps of a declared controller's reconcile. Each is a function of the controller's parts,
 * the resource it is about (`Target`) and the outputs of the steps before it, returning its own;
 * the order, and the one policy for terminal errors, are written once, in pipeline.ts.
 */
import { type ExternalStep, type ExternalWrite, type ChildMap } from '../../../constructs/contract';
import { NOTHING_RENDERED, renderDeclaration } from '../children';
import { objectKey, withoutBookkeeping } from '../client';
import { cachedChildren, isChildRefusal } from '../plan';
import { type Request, type TerminalError } from '../controller';
import {
  cacheReads,
  type ControllerParts,
  forget,
  getMadeFor,
  getOwn,
  keptByTarget,
  prepareApi,
  type Resource,
  type Target,
} from './controller-parts';
import type { RenderedChildren } from '../../../constructs/contract/render';
import type { Informer } from '../cache';

/**
 * Observe: the resource to reconcile, or undefined when it is gone or being deleted — owner
 * references let the garbage collector remove its children, and what is remembered of it goes.
 * (A deleted resource holding the kind's finalizer is finalized instead: see finalizer.ts.)
 */
export function observe(
  parts: Pick<ControllerParts, 'blockers' | 'pacer' | 'refused' | 'refusedChildren' | 'renders' | 'written'> & {
    readonly resources: Pick<Informer<Resource>, 'get'>;
  },
  req: Request,
): Resource | undefined {
  const key = objectKey(req);
  const resource = parts.resources.get(key);
  if (resource && !resource.metadata.deletionTimestamp) return resource;
  forget(parts, key);
  return undefined;
}

/** External: the declaration's work on a system outside Kubernetes, before rendering. */
export async function runExternal(
  parts: Pick<ControllerParts, 'decl' | 'owned' | 'metrics' | 'reads'>,
  t: Target,
): Promise<RanExternal | undefined> {
  const { decl } = parts;
  if (!decl.external) return undefined;
  const written: ExternalWrite[] = [];
  const { signal } = t.ctx;
  const write = async <T>(what: ExternalWrite, run: () => Promise<T>): Promise<T> => {
    signal.throwIfAborted();
    const out = await run();
    written.push(what);
    parts.metrics.reconcileWrites.inc({ controller: decl.name, action: `External:${what.system}:${what.action}` });
    return out;
  };
  const keptBy = keptByTarget(parts, t);
  const ran = await decl.external(t.resource, cachedChildren(parts, t.uid), {
    ...cacheReads(parts, t),
    signal,
    write,
    getOwn: (type, name) => getOwn(t.ctx.client, type, name, keptBy),
    getMadeFor: (type, name, madeFor) => getMadeFor(t.ctx.client, type, name, madeFor, keptBy),
  });
  return { ...ran, written };
}

/** The external step's result, with the writes it made through the gate. */
export type RanExternal = ExternalStep & { readonly written: readonly ExternalWrite[] };

/**
 * The terminal error already reported for this very generation, if any: a query, changing
 * nothing. One remembered for an older generation (or an earlier object of the name) no longer
 * stands; the next one recorded replaces it, and `forget` drops it with the resource.
 */
export function knownTerminal(parts: Pick<ControllerParts, 'refused'>, t: Target): TerminalError | undefined {
  const known = parts.refused.get(t.key);
  return known?.uid === t.uid && known.generation === t.generation ? known.error : undefined;
}

/** Records a terminal error of this reconcile; `remember` keeps it until the generation changes. */
export function recordTerminal(
  parts: Pick<ControllerParts, 'decl' | 'metrics' | 'refused'>,
  t: Target,
  error: TerminalError,
  remember: boolean,
): void {
  if (remember) parts.refused.set(t.key, { uid: t.uid, generation: t.generation, error });
  parts.metrics.terminalReconcileErrors.inc({ controller: parts.decl.name });
  // The words alone: as `err`, its cause (the same refusal) would be said again, with both stacks.
  t.ctx.logger.warn(
    { reason: error.reason, refusal: error.message },
    isChildRefusal(error.cause)
      ? 'the API server refused a desired child; not retrying until the spec changes'
      : 'the spec cannot be satisfied; not retrying until it changes',
  );
}

/**
 * Render: the desired children, from the construct, with the waits between them (the last
 * render is reused while its input is the same).
 */
export function renderDesired(
  parts: Pick<ControllerParts, 'decl' | 'renders'>,
  t: Pick<Target, 'key' | 'resource'>,
  facts: object | undefined,
): RenderedChildren {
  const { decl } = parts;
  if (!decl.render) return NOTHING_RENDERED;
  const { status, ...rest } = withoutBookkeeping(t.resource);
  return parts.renders.get(
    t.key,
    JSON.stringify([rest, facts ?? null]),
    (readStatus) => renderDeclaration(decl, t.resource, facts, readStatus),
    status,
  );
}

/**
 * Prepare: the declaration's writes after the children (e.g. a generated Secret), when they were
 * applied, with the facts the external step found.
 */
export async function runPrepare(
  parts: Pick<ControllerParts, 'decl'>,
  t: Target,
  children: ChildMap,
  applied: boolean,
  facts: object | undefined,
): Promise<object | undefined> {
  if (!parts.decl.prepare || !applied) return undefined;
  const api = prepareApi(t.ctx.client, t.ctx.signal, keptByTarget(parts, t));
  return parts.decl.prepare(api, t.resource, children, facts);
}
