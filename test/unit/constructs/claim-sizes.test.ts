/**
 * A StatefulSet's claims against what its templates ask (constructs/contract/claim-sizes.ts): the
 * templates grown or shrunk, the claims it made by name, and a StatefulSet never Current while a
 * claim of its pods is smaller than asked.
 */
import {
  assessChildren,
  claimSizeVerdict,
  claimsOfStatefulSet,
  claimTemplateChanges,
  type KubeObject,
  type PersistentVolumeClaim,
} from '../../../constructs/contract';

function statefulSet(sizes: Record<string, string>, replicas = 2, name = 'kv'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: 'ns', generation: 1 },
    spec: {
      replicas,
      volumeClaimTemplates: Object.entries(sizes).map(([template, storage]) => ({
        metadata: { name: template },
        spec: { resources: { requests: { storage } } },
      })),
    },
    // As its controller reports a StatefulSet with every pod updated and ready.
    status: {
      observedGeneration: 1,
      replicas,
      readyReplicas: replicas,
      updatedReplicas: replicas,
      availableReplicas: replicas,
    },
  };
}

function claim(
  name: string,
  has: string,
  extra: NonNullable<PersistentVolumeClaim['status']> = {},
): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'ns' },
    spec: { resources: { requests: { storage: has } } },
    status: { phase: 'Bound', capacity: { storage: has }, ...extra },
  };
}

describe('claimTemplateChanges', () => {
  test('grown and shrunk templates, by value: 2048Mi is 2Gi; a template only one side has is no size change', () => {
    const current = statefulSet({ data: '2Gi', logs: '1Gi', wal: '4Gi' });
    expect(
      claimTemplateChanges(current, statefulSet({ data: '5Gi', logs: '512Mi', wal: '4096Mi', extra: '1Gi' })),
    ).toEqual({
      grown: [{ template: 'data', from: '2Gi', to: '5Gi' }],
      shrunk: [{ template: 'logs', from: '1Gi', to: '512Mi' }],
    });
    expect(claimTemplateChanges(current, current)).toEqual({ grown: [], shrunk: [] });
  });
});

describe('claimsOfStatefulSet', () => {
  test('the claims named <template>-<statefulset>-<ordinal>, not those of a StatefulSet whose name starts the same', () => {
    const claims = [
      claim('data-kv-0', '1Gi'),
      claim('data-kv-12', '1Gi'),
      claim('data-kv-web-0', '1Gi'),
      claim('data-kv-x', '1Gi'),
    ];
    expect(claimsOfStatefulSet(statefulSet({ data: '1Gi' }), claims).map((c) => `${c.template}/${c.ordinal}`)).toEqual([
      'data/0',
      'data/12',
    ]);
  });
});

describe('claimSizeVerdict and assessChildren', () => {
  const sts = statefulSet({ data: '5Gi' });

  test('a claim of a pod smaller than asked: Resizing, naming the first and counting the others', () => {
    const verdict = claimSizeVerdict(sts, [claim('data-kv-0', '2Gi'), claim('data-kv-1', '2Gi')]);
    expect(verdict).toEqual({
      readiness: 'InProgress',
      reason: 'Resizing',
      message: 'claim data-kv-0 has 2Gi of the 5Gi asked (and 1 more): its volume is being expanded',
    });
  });

  test('a file system to grow when the pod starts again says so; a resize its driver refused is a failure', () => {
    const pending = claim('data-kv-1', '2Gi', { conditions: [{ type: 'FileSystemResizePending', status: 'True' }] });
    expect(claimSizeVerdict(sts, [claim('data-kv-0', '5Gi'), pending])?.message).toBe(
      'claim data-kv-1 has 2Gi of the 5Gi asked: its file system grows when its pod next starts',
    );
    const infeasible = claim('data-kv-0', '2Gi', {
      allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' },
    });
    expect(claimSizeVerdict(sts, [infeasible])).toMatchObject({ readiness: 'Failed', reason: 'ResizeInfeasible' });
  });

  test('nothing to say when every claim is as large (or larger), of a pod it no longer keeps, or not bound yet', () => {
    expect(claimSizeVerdict(sts, [claim('data-kv-0', '5Gi'), claim('data-kv-1', '10Gi')])).toBeUndefined();
    expect(claimSizeVerdict(sts, [claim('data-kv-2', '1Gi')])).toBeUndefined();
    expect(claimSizeVerdict(sts, [{ ...claim('data-kv-0', '1Gi'), status: { phase: 'Pending' } }])).toBeUndefined();
  });

  test('assessChildren: a StatefulSet otherwise Current is not ready while a claim is smaller; without claims, as before', () => {
    const small = [claim('data-kv-0', '2Gi'), claim('data-kv-1', '5Gi')];
    const health = assessChildren({ children: [sts], claimsOf: () => small });
    expect(health.ready).toBe(false);
    expect(health.notReady).toEqual([
      {
        kind: 'StatefulSet',
        name: 'kv',
        readiness: 'InProgress',
        reason: 'Resizing',
        message: 'claim data-kv-0 has 2Gi of the 5Gi asked: its volume is being expanded',
      },
    ]);
    expect(assessChildren({ children: [sts] }).ready).toBe(true);
    expect(assessChildren({ children: [sts], claimsOf: () => [claim('data-kv-0', '5Gi')] }).ready).toBe(true);
  });
});
