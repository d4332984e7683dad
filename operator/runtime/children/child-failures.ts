import type { CoreEvent, InvolvedObject, Problem } from '../../../constructs/contract';
import { BuiltinTypes } from '../../../constructs/contract';
import type { Controller, Request, Manager } from '../controller';
import type { Informer } from '../cache';
import { compareText } from '../../../constructs/contract/compare';

/**
 * Warning Events by which Kubernetes' own controllers say they cannot make what a child asks
 * for: the StatefulSet, ReplicaSet and Job controllers' `FailedCreate` (a pod or claim the API
 * server or an admission plugin refused), the volume controller's `ProvisioningFailed` (a
 * claim no volume can be provisioned for), and the StatefulSet controller's
 * `RecreatingFailedPod` (a member pod failed and is made again; recorded only before Kubernetes
 * 1.30, kubernetes/kubernetes#123809 — since then the failed pod is the only sign, seen for a
 * moment, and a kind's status keeps its failure standing: `ConditionList.reported`). They are
 * only seen at run time: the child itself was accepted.
 */
export const CHILD_FAILURE_REASONS = ['FailedCreate', 'ProvisioningFailed', 'RecreatingFailedPod'] as const;

/** Informers of the failure Events, one per reason (field selectors cannot say "or"). */
export class ChildFailures {
  private constructor(
    private readonly informers: Informer<CoreEvent>[],
    private readonly ownerOf: (involved: InvolvedObject) => string | undefined,
  ) {}

  /**
   * Caches the failure Warning Events; `enqueueOwners` then has a controller reconcile the resource `ownerOf` says
   * each one is about (by name, in the Event's namespace), e.g. the owner of a StatefulSet.
   */
  static cache(mgr: Manager, ownerOf: (involved: InvolvedObject) => string | undefined): ChildFailures {
    const informers = CHILD_FAILURE_REASONS.map((reason) =>
      mgr.informer<CoreEvent>(BuiltinTypes.CoreEvent, { fieldSelector: `type=Warning,reason=${reason}` }),
    );
    return new ChildFailures(informers, ownerOf);
  }

  /** Has `controller` reconcile the resource a failure Event's child belongs to. */
  enqueueOwners(controller: Controller): void {
    for (const inf of this.informers) {
      controller.watches(inf, (e: CoreEvent): Request[] => {
        const involved = e.involvedObject;
        const name = involved ? this.ownerOf(involved) : undefined;
        return involved && name ? [{ namespace: involved.namespace, name }] : [];
      });
    }
  }

  /** The newest failure about a child of resource `name` in `namespace`, if any. */
  find(namespace: string | undefined, name: string): Problem | undefined {
    const found = this.informers
      .flatMap((inf) => inf.list(namespace))
      .filter((e) => e.involvedObject && this.ownerOf(e.involvedObject) === name)
      .sort((a, b) => compareText(lastSeen(b), lastSeen(a)));
    const newest = found[0];
    return newest
      ? {
          reason: newest.reason ?? 'FailedCreate',
          message: `${newest.involvedObject?.kind} ${newest.involvedObject?.name}: ${newest.message ?? ''}`.slice(
            0,
            1024,
          ),
        }
      : undefined;
  }
}

function lastSeen(e: CoreEvent): string {
  return e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '';
}
