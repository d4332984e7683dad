/**
 * Every kind's status as the ecosystem's readiness standard reads it: the real kstatus library
 * (sigs.k8s.io/cli-utils, what Helm 4's --wait, Flux, kpt and Config Sync use) over the status a
 * kind computes, with the runtime's Ready/Reconciling/Stalled, and over a resource as created.
 */
import { constructStatus, type Observed } from '../../../constructs';
import { cronTabKind } from '../../../constructs/crontab/api';
import { databaseKind } from '../../../constructs/database/api';
import { etcdClusterKind } from '../../../constructs/etcd/api';
import { memcachedKind } from '../../../constructs/memcached/api';
import { applicationKind, webAppKind } from '../../../constructs/webapp/api';
import { withSummaryConditions } from '../../../constructs/contract/kstatus';
import { assessChildren, type KubeObject } from '../../../constructs/contract';
import type { Condition } from '../../../constructs/contract/conditions';
import { withSchemaDefaults } from '../../../constructs/core/defaults';
import { desiredStatus } from '../../../constructs/memcached/controller';
import { blogSiteKind } from '../../../examples/blog-site/blog-site';
import { kstatus } from '../../support/kstatus';

const NOW = new Date('2026-11-27T00:00:00Z');

/** The object as the API server would return it once the runtime wrote this status. */
function judged(kind: string, status: { conditions: Condition[] } & Record<string, unknown>, generation = 2) {
  const conditions = withSummaryConditions(status.conditions, generation, NOW);
  const object = {
    apiVersion: 'example.com/v1',
    kind,
    metadata: { name: 'x', namespace: 'ns', generation },
    status: { ...status, observedGeneration: generation, conditions },
  };
  const [verdict] = kstatus(object);
  return { verdict: verdict?.status, conditions };
}

const memcached = (size: number) =>
  ({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name: 'mc', namespace: 'ns', generation: 2 },
    spec: { size },
  }) as never;

const deployment = (replicas: number, ready: number): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'mc', namespace: 'ns', generation: 1 },
  spec: { replicas },
  status: {
    observedGeneration: 1,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: ready,
    availableReplicas: ready,
    conditions: [{ type: 'Available', status: ready ? 'True' : 'False' }],
  },
});

describe('kstatus over the kit kinds and a user kind', () => {
  test('a Memcached waiting for its pods is InProgress, with Reconciling naming why and Ready False', () => {
    const status = desiredStatus(memcached(3), { deployment: deployment(3, 1), podNames: ['a'], now: NOW });
    const { verdict, conditions } = judged('Memcached', status as never);
    expect(verdict).toBe('InProgress');
    expect(conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Reconciling', status: 'True', reason: 'WaitingForPods' }),
        expect.objectContaining({ type: 'Ready', status: 'False' }),
        expect.objectContaining({ type: 'Stalled', status: 'False' }),
      ]),
    );
  });

  test('a Memcached whose pod cannot run is Failed (Stalled, with the reason); a healthy one is Current and Ready', () => {
    const failing = desiredStatus(memcached(2), {
      deployment: deployment(2, 0),
      podNames: ['a', 'b'],
      podFailed: { reason: 'PodFailing', message: 'pod a: container memcached is waiting: ImagePullBackOff' },
      now: NOW,
    });
    const broken = judged('Memcached', failing as never);
    expect(broken.verdict).toBe('Failed');
    expect(broken.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'PodFailing' })]),
    );
    const healthy = desiredStatus(memcached(2), {
      deployment: deployment(2, 2),
      podNames: ['a', 'b'],
      now: NOW,
    });
    const ok = judged('Memcached', healthy as never);
    expect(ok.verdict).toBe('Current');
    expect(ok.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]));
  });

  test('a construct kind: waiting InProgress, a child that cannot be scheduled InProgress, a failed Job Failed, all ready Current', () => {
    const site = {
      apiVersion: 'blogs.example.com/v1alpha1',
      kind: 'BlogSite',
      metadata: { name: 'b', namespace: 'ns', generation: 2 },
      spec: {},
    } as never;
    const observe = (children: KubeObject[], failureEvent?: { reason: string; message: string }) =>
      ({ health: assessChildren({ children, failureEvent }), now: NOW }) as unknown as Observed;
    const job = (condition: string): KubeObject => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', namespace: 'ns' },
      status: { conditions: [{ type: condition, status: 'True', reason: 'BackoffLimitExceeded', message: 'x' }] },
    });
    const waiting = constructStatus(site, observe([deployment(2, 1)]));
    expect(judged('BlogSite', waiting as never).verdict).toBe('InProgress');
    const unscheduled = constructStatus(
      site,
      observe([deployment(2, 0)], { reason: 'PodUnschedulable', message: 'no node fits it' }),
    );
    expect(judged('BlogSite', unscheduled as never).verdict).toBe('InProgress');
    expect(judged('BlogSite', constructStatus(site, observe([job('Failed')])) as never).verdict).toBe('Failed');
    expect(
      judged('BlogSite', constructStatus(site, observe([deployment(2, 2), job('Complete')])) as never).verdict,
    ).toBe('Current');
  });

  test('a resource no reconcile has seen yet is InProgress: every kind is created with status.observedGeneration 0', () => {
    for (const kind of [
      memcachedKind,
      etcdClusterKind,
      cronTabKind,
      applicationKind,
      webAppKind,
      databaseKind,
      blogSiteKind,
    ]) {
      const schema = kind.openApiSchema();
      // What the API server stores for a new resource: no status of the client's (the status
      // subresource drops it), the schema's defaults applied.
      const stored = withSchemaDefaults(schema, {
        apiVersion: `${kind.group}/${kind.storageVersion}`,
        kind: kind.kind,
        metadata: { name: 'new', namespace: 'ns', generation: 1 },
      }) as object;
      expect({ kind: kind.kind, status: (stored as { status?: unknown }).status }).toEqual({
        kind: kind.kind,
        status: { observedGeneration: 0 },
      });
      expect(kstatus(stored)[0]?.status).toBe('InProgress');
    }
  });
});
