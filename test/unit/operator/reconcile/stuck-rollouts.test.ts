/**
 * Which pods a StatefulSet's rollout is stuck behind: only OrderedReady pods of an older revision,
 * at or above the partition, not Ready and unable to run, once the StatefulSet controller has seen
 * the spec that fixes them.
 */
import type { Pod, StatefulSet } from '../../../../constructs/contract';
import { stuckPods } from '../../../../operator/runtime/plan';

const statefulSet = (spec: NonNullable<StatefulSet['spec']> = {}, status: NonNullable<StatefulSet['status']> = {}) =>
  ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns', uid: 's1', generation: 3 },
    spec: { replicas: 2, ...spec },
    status: { observedGeneration: 3, currentRevision: 'db-old', updateRevision: 'db-new', ...status },
  }) as StatefulSet;

const pullBackOff = {
  name: 'postgresql',
  state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "postgres:99"' } },
};

function pod(name: string, revision: string, state: 'stuck' | 'starting' | 'ready' = 'stuck'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `u-${name}`, labels: { 'controller-revision-hash': revision } },
    status: {
      phase: state === 'ready' ? 'Running' : 'Pending',
      conditions: [{ type: 'Ready', status: state === 'ready' ? 'True' : 'False' }],
      containerStatuses:
        state === 'stuck'
          ? [pullBackOff]
          : [{ name: 'postgresql', state: { waiting: { reason: 'ContainerCreating' } } }],
    },
  };
}

const names = (stuck: ReturnType<typeof stuckPods>) => stuck.map((s) => s.pod.metadata.name);

describe('the pods a StatefulSet rollout is stuck behind', () => {
  test('a pod of an older revision that cannot run, not Ready: stuck, with the reason it cannot run', () => {
    const stuck = stuckPods(statefulSet(), [pod('db-0', 'db-old'), pod('db-1', 'db-new')]);
    expect(names(stuck)).toEqual(['db-0']);
    expect(stuck[0]).toMatchObject({ revision: 'db-old' });
    expect(stuck[0]?.why).toContain('ImagePullBackOff');
  });

  test('never a pod of the update revision, a Ready one, or one still starting', () => {
    expect(stuckPods(statefulSet(), [pod('db-0', 'db-new')])).toEqual([]);
    expect(stuckPods(statefulSet(), [pod('db-0', 'db-old', 'ready')])).toEqual([]);
    expect(stuckPods(statefulSet(), [pod('db-0', 'db-old', 'starting')])).toEqual([]);
  });

  test('never below the partition: those pods are meant to keep their revision', () => {
    const sts = statefulSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } });
    expect(names(stuckPods(sts, [pod('db-0', 'db-old'), pod('db-1', 'db-old')]))).toEqual(['db-1']);
  });

  test('not for Parallel pods (rolled whatever their health), OnDelete, or a spec its controller has not seen yet', () => {
    const pods = [pod('db-0', 'db-old')];
    expect(stuckPods(statefulSet({ podManagementPolicy: 'Parallel' }), pods)).toEqual([]);
    expect(stuckPods(statefulSet({ updateStrategy: { type: 'OnDelete' } }), pods)).toEqual([]);
    expect(stuckPods(statefulSet({}, { observedGeneration: 2 }), pods)).toEqual([]);
    expect(stuckPods(statefulSet({}, { updateRevision: undefined }), pods)).toEqual([]);
  });
});
