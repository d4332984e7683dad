/**
 * One reconcile of a declared controller: the steps in their order, written once, and the one
 * policy for terminal errors. A deleted resource holding the kind's finalizer is finalized
 * (finalizer.ts); any other goes through
 *
 *   observe → keep the finalizer → external → render → claim → plan → apply → prune → recover
 *   stuck rollouts → blockers → prepare → status → events → write
 *
 * each step a function of the outputs before it, returning its own (steps.ts, child-steps.ts,
 * status-steps.ts), and each a span of the reconcile's trace when tracing is on (`step`). The steps
 * up to `plan` write nothing: `plan` decides every write of the reconcile as a typed action
 * (plan.ts, planner.ts), and apply, prune and recover are the phases of its one execution,
 * through the gate every write goes through (executor.ts).
 */
import type { ExternalStep } from '../../../constructs/contract';
import { type ReconcileContext, type Request, type Result, asTerminal, type TerminalError } from '../controller';
import { type ControllerParts, type Target, targetOf } from './controller-parts';
import { deletingWithFinalizer, finalizeResource, keepFinalizer } from './finalizer';
import { ChildWrites, claimChildren, currentChildren, recordBlockers, refusedTerminal } from './child-steps';
import { writeStatus } from './status-pacing';
import { computeStatus, recordEvents } from './status-steps';
import { PlanExecution } from './executor';
import { type NotOwned, planReconcile } from '../plan';
import { knownTerminal, observe, recordTerminal, renderDesired, runExternal, runPrepare } from './steps';
import { objectKey } from '../client';
import { inSpan } from '../observability';

/** A step of the reconcile, in a span named after it when tracing is on; a plain call when off. */
function step<T>(parts: ControllerParts, name: string, fn: () => T): T {
  return inSpan(parts.tracer, name, fn);
}

/** A step's output, or the terminal error that stopped it. */
type Stopped<T> =
  | { readonly value: T; readonly terminal?: undefined }
  | { readonly value?: undefined; readonly terminal: TerminalError };

/**
 * The one terminal-error policy: a `TerminalError` from a step (or a child the API server refuses
 * as invalid) is recorded and reported in status, not retried; `remember` keeps it until the
 * resource's generation changes — not for the external step, whose outside system may change by
 * itself. Any other error is thrown, and the work queue retries it with backoff.
 */
function recordedTerminal(parts: ControllerParts, t: Target, err: unknown, remember: boolean): TerminalError {
  const terminal = asTerminal(err);
  if (!terminal) throw err;
  recordTerminal(parts, t, terminal, remember);
  return terminal;
}

/** A step's output, or the terminal error that stopped it (see `recordedTerminal`). */
async function unlessTerminal<T>(
  parts: ControllerParts,
  t: Target,
  remember: boolean,
  step: () => Promise<T>,
): Promise<Stopped<T>> {
  try {
    return { value: await step() };
  } catch (err) {
    return { terminal: recordedTerminal(parts, t, err, remember) };
  }
}

/** What writing the children came to: the writes, the names taken by others, and what stopped them. */
interface ChildrenOutcome {
  readonly writes: ChildWrites;
  readonly notOwned: readonly NotOwned[];
  readonly error?: unknown;
}

/**
 * Render, claim, plan, and the plan's execution (apply, prune, recover stuck rollouts): the
 * reconcile's writes, or the names taken by others (then nothing is planned, nor written).
 */
async function writeChildren(
  parts: ControllerParts,
  t: Target,
  external: ExternalStep | undefined,
): Promise<ChildrenOutcome> {
  const desired = step(parts, 'render', () => renderDesired(parts, t, external?.facts));
  const claim = step(parts, 'claim', () => claimChildren(parts, t, desired));
  const planned = claim.planned;
  if (!planned) return { writes: new ChildWrites(), notOwned: claim.notOwned };
  const plan = await step(parts, 'plan', () => planReconcile(parts, t, planned, external));
  const execution = new PlanExecution(parts, t, plan);
  await step(parts, 'apply', () => execution.children());
  // An execution stopped by an error prunes nothing: what it did not reach may still be wanted.
  await step(parts, 'prune', () => execution.prune());
  await step(parts, 'recover', () => execution.podWrites());
  const { applied, pruned } = execution.result();
  return { writes: new ChildWrites(applied, pruned), notOwned: [], error: pruned.error };
}

/**
 * Where a reconcile's terminal error can come from. When several could, the first of these, in
 * this order, stands (`terminalOutcome`, the one place that decides):
 */
interface TerminalSources {
  /** 1. The external step's: its outside system cannot do what the spec asks; no child is written. */
  readonly external?: TerminalError;
  /** 2. The one already reported for this generation: the children are not written again. */
  readonly known?: TerminalError;
  /** 3. A step's while rendering, claiming, planning or executing the plan (thrown, or the execution's error). */
  readonly step?: TerminalError;
  /** 4. A child the API server refused, asked last (it records what it finds): the others were applied. */
  readonly refusedChild?: () => TerminalError | undefined;
}

/** The terminal error that stands, by the order of `TerminalSources`. */
function terminalOutcome(sources: TerminalSources): TerminalError | undefined {
  return sources.external ?? sources.known ?? sources.step ?? sources.refusedChild?.();
}

/** The children written, the names taken, and the terminal error that stands (none: every child taken). */
async function childrenStep(
  parts: ControllerParts,
  t: Target,
  external: Stopped<ExternalStep | undefined>,
): Promise<{ writes: ChildWrites; notOwned: readonly NotOwned[]; terminal?: TerminalError }> {
  const known = knownTerminal(parts, t);
  if (external.terminal || known)
    return {
      writes: new ChildWrites(),
      notOwned: [],
      terminal: terminalOutcome({ external: external.terminal, known }),
    };
  const children = await unlessTerminal(parts, t, true, () => writeChildren(parts, t, external.value));
  if (!children.value)
    return { writes: new ChildWrites(), notOwned: [], terminal: terminalOutcome({ step: children.terminal }) };
  const { writes, notOwned, error } = children.value;
  // What the apply or prune did before an error stays in `writes`, for the status and Events.
  const stopped = error === undefined ? undefined : recordedTerminal(parts, t, error, true);
  // A refused child is not remembered for the whole resource: the others, and a refused child
  // deleted since, are applied at every reconcile.
  return {
    writes,
    notOwned,
    terminal: terminalOutcome({ step: stopped, refusedChild: () => refusedTerminal(parts, t, writes) }),
  };
}

/** The sooner of two requeue times, either unset. */
function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** One reconcile: the steps in order, terminal errors recorded rather than retried. */
export async function reconcile(
  parts: ControllerParts,
  req: Request,
  ctx: ReconcileContext,
): Promise<Result | undefined> {
  const key = objectKey(req);
  const deleting = deletingWithFinalizer(parts, req);
  if (deleting) return step(parts, 'finalize', () => finalizeResource(parts, targetOf(key, deleting, ctx)));
  const resource = step(parts, 'observe', () => observe(parts, req));
  if (!resource) return undefined;
  const t = targetOf(key, resource, ctx);
  await step(parts, 'finalizer', () => keepFinalizer(parts, t));

  const external = await unlessTerminal(parts, t, false, () => step(parts, 'external', () => runExternal(parts, t)));
  const { writes, notOwned, terminal } = await childrenStep(parts, t, external);
  step(parts, 'blockers', () => {
    recordBlockers(parts, t, notOwned);
  });

  const children = currentChildren(parts, t, writes);
  const applied = !terminal && notOwned.length === 0;
  const prepared = await step(parts, 'prepare', () => runPrepare(parts, t, children, applied, external.value?.facts));
  const { observed, status } = step(parts, 'status', () =>
    computeStatus(parts, t, { writes, children, external: external.value, terminal, notOwned, prepared }),
  );
  const paced = parts.pacer.begin(key);
  await step(parts, 'events', () => recordEvents(parts, t, { observed, status, external: external.value, paced }));
  const result = await step(parts, 'write', () =>
    writeStatus(parts, t, {
      status,
      childrenChanged: writes.actions.length > 0,
      requeueAfterMs: earliest(external.value?.requeueAfterMs, writes.recheckAfterMs),
      paced,
    }),
  );
  paced.end();
  // The reconcile's writes together, as `plan -o json` lists them before they are made (the
  // external step's, to its outside system, beside them: plan lists the first it would make).
  const externalWrites = external.value?.written ?? [];
  if (writes.actions.length > 0 || externalWrites.length > 0)
    ctx.logger.debug(
      { writes: writes.actions, ...(externalWrites.length ? { externalWrites } : {}) },
      "the reconcile's writes",
    );
  return result;
}
