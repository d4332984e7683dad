/**
 * A kind's external step, previewed for `plan` and `diff`: run as the reconciler runs it — its
 * reads of the outside system made, its cache reads over the objects the command listed, its
 * kept objects read by name — but its first write to the outside system recorded and not made.
 * The step stops there: what it does after a write depends on the write's answer, and a step
 * makes one change per reconcile (a member added, a defragmentation) before it looks again.
 * Writes nothing.
 */
import {
  type ControllerDeclaration,
  type CustomResourceObject,
  type ExternalContext,
  type ExternalWrite,
  isOfType,
  type KubeObject,
  type PodLabels,
  type PodRestart,
  type ResourceType,
} from '../../../constructs/contract';
import { getMadeFor, getOwn, type KeptBy } from '../children';
import type { KubeClient } from '../client';
import { cachedChildren } from './planned-child';
import type { PreviewReads } from './preview';

/** What the external step would do now. */
export interface ExternalPreview {
  /** The write it would make to its outside system now, if any (none made). */
  readonly writes: readonly ExternalWrite[];
  /** The pods it would restart (in the plan as RestartPod actions). */
  readonly restartPods: readonly PodRestart[];
  /** The labels it would ask on pods (in the plan as LabelPod actions where they differ). */
  readonly labelPods: readonly PodLabels[];
  /** Why its writes could not be previewed from here: its outside system out of reach, or an error. */
  readonly unavailable?: string;
}

/** Thrown by the preview's write gate: the step's first write ends its preview. */
class PreviewedWrite extends Error {
  constructor(readonly what: ExternalWrite) {
    super(`previewed: ${what.system} ${what.action} ${what.target}`);
  }
}

/** The external step of `decl` for `resource`, previewed (undefined: the kind has none). */
export async function previewExternal(
  decl: ControllerDeclaration,
  client: KubeClient,
  resource: CustomResourceObject,
  reads: PreviewReads,
): Promise<ExternalPreview | undefined> {
  if (!decl.external) return undefined;
  const { uid = '', namespace } = resource.metadata;
  const keptBy: KeptBy = { uid, namespace, keeps: decl.keeps ?? [] };
  // The first write stops the step as the gate stops a reconcile told to stop: a step that
  // handles its write's error looks at the signal, and gives up.
  const stop = new AbortController();
  const previewed = () => (stop.signal.reason instanceof PreviewedWrite ? stop.signal.reason.what : undefined);
  const context: ExternalContext = {
    signal: stop.signal,
    write: (what) => {
      const written = new PreviewedWrite(what);
      if (!stop.signal.aborted) stop.abort(written);
      return Promise.reject(written);
    },
    getOwn: (type, name) => getOwn(client, type, name, keptBy),
    getMadeFor: (type, name, madeFor) => getMadeFor(client, type, name, madeFor, keptBy),
    read: <T extends KubeObject>(
      type: ResourceType<T>,
      labels?: Record<string, string>,
      options?: { readonly allNamespaces?: boolean },
    ): T[] => {
      const listed = reads.reads?.get(`${type.group}/${type.kind}`);
      if (!listed) throw new Error(`controller ${decl.name} reads ${type.kind} but does not declare it in reads`);
      return listed
        .list(options?.allNamespaces ? undefined : namespace, labels)
        .filter((o): o is T => isOfType(type, o));
    },
  };
  try {
    const step = await decl.external(resource, cachedChildren({ owned: reads.children }, uid), context);
    const write = previewed();
    if (write) return { writes: [write], restartPods: [], labelPods: [] };
    return {
      writes: [],
      restartPods: step.restartPods ?? [],
      labelPods: step.labelPods ?? [],
      ...(step.outOfReach ? { unavailable: step.outOfReach } : {}),
    };
  } catch (err) {
    const write = previewed();
    if (write) return { writes: [write], restartPods: [], labelPods: [] };
    return {
      writes: [],
      restartPods: [],
      labelPods: [],
      unavailable: err instanceof Error ? err.message : String(err),
    };
  }
}
