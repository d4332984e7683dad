import type { CoreEvent, InvolvedObject, Problem } from '../../constructs/contract';
import { BuiltinTypes } from '../../constructs/contract';
import type { Controller, Request } from './controller';
import type { Informer } from './informer';
import type { Manager } from './manager';
import { compareText } from '../../constructs/core/compare';

/**
 * Warning Events by which Kubernetes' own controllers say they cannot make what a child asks
 * for: the StatefulSet, ReplicaSet and Job controllers' `FailedCreate` (a pod or claim the API
 * server or an admission plugin refused), the volume controller's `ProvisioningFailed` (a
 * claim no volume can be provisioned for), and the StatefulSet controller's
 * `RecreatingFailedPod` (a member pod failed; it is deleted and made again at once, so the
 * failed pod itself is seen only for a moment). They are only seen at run time: the child itself
 * was accepted.
 */
export const CHILD_FAILURE_REASONS = ['FailedCreate', 'ProvisioningFailed', 'RecreatingFailedPod'] as const;

/** Informers of the failure Events, one per reason (field selectors cannot say "or"). */
export class ChildFailures {
  private constructor(private readonly informers: Informer<CoreEvent>[]) {}

  /**
   * Caches the failure Warning Events and has `controller` reconcile what `map` says each one is
   * about (e.g. a StatefulSet or claim named after its custom resource).
   */
  static watch(
    mgr: Manager,
    controller: Controller,
    map: (involved: InvolvedObject) => Request | undefined,
  ): ChildFailures {
    const informers = CHILD_FAILURE_REASONS.map((reason) =>
      mgr.informer<CoreEvent>(BuiltinTypes.CoreEvent, { fieldSelector: `type=Warning,reason=${reason}` }),
    );
    for (const inf of informers) {
      controller.watches(inf, (e) => {
        const req = e.involvedObject ? map(e.involvedObject) : undefined;
        return req ? [req] : [];
      });
    }
    return new ChildFailures(informers);
  }

  /** The newest failure about a child in `namespace` that `isChild` recognises, if any. */
  find(namespace: string | undefined, isChild: (involved: InvolvedObject) => boolean): Problem | undefined {
    const found = this.informers
      .flatMap((inf) => inf.list(namespace))
      .filter((e) => e.involvedObject && isChild(e.involvedObject))
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
