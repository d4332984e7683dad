/**
 * The checks that change the reconciler's world under it: `restart` (the reconciler itself stopped
 * and started again over settled resources), `watch-cut` (its every connection to the API server
 * reset) and `apiserver-restart` (its API server stopped and started again). Each of the last two
 * creates a copy of the first example, interrupts, and waits for it to become Ready; deletes it,
 * interrupts again, and waits for it to go with all it controlled.
 */
import { auditLength } from '../audit-log';
import type { SpareApiserver } from '../plane/spare-apiserver';
import type { VersionReconciler } from '../upgrade/reconciler-process';
import { withCutConnections } from './cut-connections';

/** What these checks need of a conformance run. */
export interface InterruptedRun {
  readonly kind: string;
  readonly auditLog: string;
  /** The restart check's problems: what a reconciler started again after `mark` wrote. */
  afterRestart(reconciler: VersionReconciler, mark: number): Promise<string[]>;
  createCopy(suffix: string): Promise<string | undefined>;
  remove(name: string): Promise<void>;
  untilReady(
    name: string,
    what: string,
    reconciler: VersionReconciler,
  ): Promise<{ waited: string[]; last: { metadata: { uid?: string } } | undefined }>;
  goneWithChildren(
    name: string,
    uid: string | undefined,
    reconciler: VersionReconciler,
    though: string,
  ): Promise<string[]>;
  alsoAudited(log: string | undefined): void;
}

export interface RestartsAndInterruptions {
  readonly restart: string[];
  readonly 'watch-cut': string[];
  /** Undefined: no spare API server to restart (a plane the test kit did not start). */
  readonly 'apiserver-restart': string[] | undefined;
}

/**
 * A spare API server of the run's own, started now beside the first checks; a failure kept for
 * when it is used (never an unhandled rejection meanwhile). Of its own: a restart of a spare shared
 * by several runs breaks all their reconcilers, whose retries back off as the restarts overlap.
 */
export function spareApiserverOf(plane: {
  readonly startSpareApiserver?: () => Promise<SpareApiserver>;
}): Promise<SpareApiserver | Error> | undefined {
  return plane.startSpareApiserver?.().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
}

/**
 * The restart, watch-cut and apiserver-restart checks in turn, from `reconciler` over the settled
 * examples. The last two share one reconciler (`start`, named with a suffix, through a kubeconfig)
 * behind a proxy to the run's spare API server (or to the plane's own where it has none): its
 * connections cut, then its API server restarted. None is left running.
 */
export async function restartsAndInterruptions(o: {
  readonly run: InterruptedRun;
  readonly reconciler: VersionReconciler;
  readonly kubeconfig: string;
  readonly workDir: string;
  readonly examples: number;
  readonly spare: SpareApiserver | Error | undefined;
  readonly start: (name: string, kubeconfig?: string) => Promise<VersionReconciler>;
}): Promise<RestartsAndInterruptions> {
  if (o.spare instanceof Error) throw o.spare;
  const spare = o.spare;
  const restarted = await restart(o.reconciler, () => o.start('-restarted'), o.run);
  o.run.alsoAudited(spare?.auditLog);
  let restarts: string[] | undefined;
  const cuts = await withCutConnections({
    reconciler: restarted.reconciler,
    ...{ kubeconfig: spare?.kubeconfig ?? o.kubeconfig, workDir: o.workDir, examples: o.examples },
    start: (through) => o.start('-interrupted', through),
    check: async (behind, cut) => {
      const problems = await acrossInterruptions(o.run, behind, {
        suffix: '-w',
        what: "its reconciler's connections were cut",
        // Its watches are open once it has settled: none to cut would mean it reached the API server otherwise.
        interrupt: () =>
          Promise.resolve(
            cut() === 0 ? 'the reconciler had no connection through the proxy to cut: nothing was checked' : undefined,
          ),
      });
      restarts =
        spare &&
        (await acrossInterruptions(o.run, behind, {
          suffix: '-r',
          what: 'the API server its reconciler uses was restarted',
          interrupt: async () => {
            await spare.restart();
            return undefined;
          },
        }));
      return problems;
    },
  });
  return { restart: restarted.problems, 'watch-cut': cuts, 'apiserver-restart': restarts };
}

/**
 * The reconciler stopped (it must exit 0) and started again over the settled examples, which
 * must see no write: the new reconciler, and the restart check's problems.
 */
async function restart(
  reconciler: VersionReconciler,
  startAgain: () => Promise<VersionReconciler>,
  run: InterruptedRun,
): Promise<{ reconciler: VersionReconciler; problems: string[] }> {
  const problems: string[] = [];
  const stopped = await reconciler.stop();
  if (stopped !== 0) problems.push(`the reconciler exited with ${String(stopped)} when stopped (SIGTERM)`);
  const mark = auditLength(run.auditLog);
  const again = await startAgain();
  problems.push(...(await run.afterRestart(again, mark)));
  return { reconciler: again, problems };
}

/**
 * A copy of the first example (named with `suffix`) created and `interrupt`ed at once must become
 * Ready; deleted and interrupted again, it must go with all it controlled. A reconcile lost to
 * the interruption (an event never seen again, nothing requeued; a watch refused with 410 Gone and
 * never listed again) leaves it waiting. `interrupt` resolves with why nothing was interrupted, if
 * nothing was.
 */
async function acrossInterruptions(
  run: InterruptedRun,
  reconciler: VersionReconciler,
  o: { suffix: string; what: string; interrupt: () => Promise<string | undefined> },
): Promise<string[]> {
  const name = await run.createCopy(o.suffix);
  if (name === undefined) return [];
  const nothing = await o.interrupt();
  if (nothing) return [nothing];
  const { waited, last } = await run.untilReady(
    name,
    `${run.kind} ${name} Ready though ${o.what} as it was created`,
    reconciler,
  );
  if (waited.length > 0) return waited;
  await run.remove(name);
  await o.interrupt();
  return run.goneWithChildren(name, last?.metadata.uid, reconciler, ` (${o.what} as it was deleted)`);
}
