/**
 * A busy API server for a test: the objects that put one ServiceAccount's requests under a
 * priority level of its own in API Priority and Fairness — a small share of the server's
 * concurrency, no borrowing, a short queue — so that a reconciler under test meets the
 * `429 Too Many Requests` (with `Retry-After`) a busy real cluster answers, not a server all its own.
 */
import type { KubeObject } from '../constructs/contract';

export interface TightPriorityLevelOptions {
  /** The reconciler's ServiceAccount: whose requests are squeezed. */
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  /** The PriorityLevelConfiguration and FlowSchema's name. @default 'opkit-tight' */
  readonly name?: string;
  /**
   * Its share of the server's concurrency, against the built-in levels' (which add up to a few
   * hundred): 1 is a seat or two at the server's default concurrency, one at
   * `--max-requests-inflight=20 --max-mutating-requests-inflight=10`. @default 1
   */
  readonly shares?: number;
  /** Requests that may wait for a seat; past them, 429. @default 1 */
  readonly queueLength?: number;
}

/**
 * A PriorityLevelConfiguration (limited, lending and borrowing nothing, one queue) and a
 * FlowSchema sending every request of the ServiceAccount to it, ahead of the built-in schemas for
 * service accounts. Apply them (cluster-scoped) before the reconciler starts.
 */
export function tightPriorityLevel(options: TightPriorityLevelOptions): KubeObject[] {
  const name = options.name ?? 'opkit-tight';
  const apiVersion = 'flowcontrol.apiserver.k8s.io/v1';
  return [
    {
      apiVersion,
      kind: 'PriorityLevelConfiguration',
      metadata: { name },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: options.shares ?? 1,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: {
            type: 'Queue',
            queuing: { queues: 1, handSize: 1, queueLengthLimit: options.queueLength ?? 1 },
          },
        },
      },
    },
    {
      apiVersion,
      kind: 'FlowSchema',
      metadata: { name },
      spec: {
        priorityLevelConfiguration: { name },
        // Ahead of the built-in service-accounts schema (9000) and workload ones; after the exempt and leader-election ones.
        matchingPrecedence: 500,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'ServiceAccount', serviceAccount: options.serviceAccount }],
            resourceRules: [
              { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true },
            ],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          },
        ],
      },
    },
  ];
}
