/**
 * The readiness and failure rules every kind's children are judged by (constructs/contract/health.ts):
 * one verdict per child type, pods traced to the workload that made them, and the first failure
 * named with the child.
 */
import { k8s } from 'cdk8s-plus-27';
import {
  assessChildren,
  childHealth,
  type KubeObject,
  type Pod,
  podProblem,
  podWorkloads,
  waitsFor,
} from '../../../constructs/contract';
import { renderWithWaits } from '../../../constructs/contract/render';

const meta = (name: string, generation = 1) => ({ name, namespace: 'ns', uid: `uid-${name}`, generation });

function deployment(status: object, spec: object = { replicas: 2 }): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('web'), spec, status };
}

const verdict = (o: KubeObject) => {
  const { readiness, reason } = childHealth(o);
  return `${readiness}/${reason}`;
};

describe('childHealth: a rule per type', () => {
  test('Deployment: its controller must have seen the spec; then every pod updated, no old ones, all available', () => {
    const done = { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 };
    expect(verdict(deployment(done))).toBe('Current/Current');
    expect(verdict(deployment({ ...done, observedGeneration: 0 }))).toBe('InProgress/RolloutPending');
    expect(verdict(deployment({ ...done, updatedReplicas: 1 }))).toBe('InProgress/RollingOut');
    // A stuck rollout: the new pod does not come up while the old ones still serve.
    expect(verdict(deployment({ ...done, replicas: 3 }))).toBe('InProgress/RollingOut');
    expect(verdict(deployment({ ...done, availableReplicas: 1 }))).toBe('InProgress/WaitingForPods');
    const deadline = {
      ...done,
      availableReplicas: 1,
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' }],
    };
    expect(childHealth(deployment(deadline))).toMatchObject({
      readiness: 'Failed',
      reason: 'ProgressDeadlineExceeded',
      message: 'too slow',
    });
    // Pods it cannot create are said by the ReplicaSet's Event; the condition alone waits.
    const quota = { ...done, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate' }] };
    expect(verdict(deployment(quota))).toBe('InProgress/FailedCreate');
    expect(verdict(deployment({}, { replicas: 0 }))).toBe('Current/Current');
  });

  test('StatefulSet: every pod ready and on the update revision (above a partition); OnDelete waits for readiness only', () => {
    const sts = (spec: object, status: object): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta('db'),
      spec: { replicas: 3, ...spec },
      status: { observedGeneration: 1, replicas: 3, ...status },
    });
    const ready = { readyReplicas: 3, updatedReplicas: 3, currentRevision: 'r2', updateRevision: 'r2' };
    expect(verdict(sts({}, ready))).toBe('Current/Current');
    expect(verdict(sts({}, { ...ready, readyReplicas: 2 }))).toBe('InProgress/WaitingForPods');
    expect(verdict(sts({}, { ...ready, currentRevision: 'r1', updatedReplicas: 1 }))).toBe('InProgress/RollingOut');
    expect(verdict(sts({}, { ...ready, replicas: 4 }))).toBe('InProgress/ScalingDown');
    const partitioned = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } };
    expect(verdict(sts(partitioned, { ...ready, currentRevision: 'r1', updatedReplicas: 1 }))).toBe('Current/Current');
    expect(verdict(sts(partitioned, { ...ready, currentRevision: 'r1', updatedReplicas: 0 }))).toBe(
      'InProgress/RollingOut',
    );
    expect(verdict(sts({ updateStrategy: { type: 'OnDelete' } }, { ...ready, currentRevision: 'r1' }))).toBe(
      'Current/Current',
    );
  });

  test('DaemonSet and ReplicaSet: updated and available on every node, or every replica', () => {
    const ds = (status: object): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: meta('agent'),
      status,
    });
    expect(verdict(ds({ desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberAvailable: 2 }))).toBe(
      'Current/Current',
    );
    expect(verdict(ds({ desiredNumberScheduled: 2, updatedNumberScheduled: 1, numberAvailable: 2 }))).toBe(
      'InProgress/RollingOut',
    );
    expect(verdict(ds({ desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberAvailable: 1 }))).toBe(
      'InProgress/WaitingForPods',
    );
    const rs = (status: object): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: meta('rs'),
      spec: { replicas: 2 },
      status,
    });
    expect(verdict(rs({ availableReplicas: 2 }))).toBe('Current/Current');
    expect(verdict(rs({ availableReplicas: 1 }))).toBe('InProgress/WaitingForPods');
  });

  test('Job: Complete is ready, Failed is a failure with its reason, else running; CronJob is ready once it exists', () => {
    const job = (status: object, spec: object = {}): KubeObject => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: meta('migrate'),
      spec,
      status,
    });
    expect(verdict(job({ conditions: [{ type: 'Complete', status: 'True' }] }))).toBe('Current/Current');
    expect(
      childHealth(
        job({ conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'too many' }] }),
      ),
    ).toMatchObject({ readiness: 'Failed', reason: 'JobFailed', message: 'BackoffLimitExceeded: too many' });
    expect(childHealth(job({ active: 1 }))).toMatchObject({
      readiness: 'InProgress',
      reason: 'Running',
      message: '1 running, 0 succeeded, 0 failed',
    });
    expect(verdict(job({}, { suspend: true }))).toBe('InProgress/Suspended');
    expect(verdict({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('backup'), status: {} })).toBe(
      'Current/Current',
    );
  });

  test('claims are ready when bound and failed when lost; Services of type LoadBalancer and Ingresses when they have an address', () => {
    const claim = (phase?: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta('data'),
      status: phase ? { phase } : {},
    });
    expect(verdict(claim('Bound'))).toBe('Current/Current');
    expect(verdict(claim('Pending'))).toBe('InProgress/ClaimPending');
    expect(verdict(claim())).toBe('InProgress/ClaimPending');
    expect(verdict(claim('Lost'))).toBe('Failed/ClaimLost');
    const service = (type: string, status: object = {}): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('svc'),
      spec: { type },
      status,
    });
    expect(verdict(service('ClusterIP'))).toBe('Current/Current');
    expect(verdict(service('LoadBalancer'))).toBe('InProgress/WaitingForAddress');
    expect(verdict(service('LoadBalancer', { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } }))).toBe(
      'Current/Current',
    );
    const ingress = (status: object): KubeObject => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: meta('web'),
      status,
    });
    expect(verdict(ingress({}))).toBe('InProgress/WaitingForAddress');
    expect(verdict(ingress({ loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } }))).toBe('Current/Current');
  });

  test('any other object by its conditions: Stalled or Degraded fails, Ready (else Available) decides, a lagging observedGeneration waits', () => {
    const custom = (status: object): KubeObject => ({
      apiVersion: 'example.com/v1',
      kind: 'Cache',
      metadata: meta('c', 2),
      status,
    });
    const ready = { type: 'Ready', status: 'True', reason: 'Ok', message: 'serving' };
    expect(verdict(custom({ observedGeneration: 2, conditions: [ready] }))).toBe('Current/Current');
    expect(verdict(custom({ observedGeneration: 1, conditions: [ready] }))).toBe('InProgress/RolloutPending');
    expect(verdict(custom({ conditions: [{ ...ready, status: 'False', reason: 'Starting' }] }))).toBe(
      'InProgress/Starting',
    );
    expect(verdict(custom({ conditions: [{ type: 'Available', status: 'False' }] }))).toBe('InProgress/NotAvailable');
    expect(
      verdict(
        custom({ conditions: [ready, { type: 'Degraded', status: 'True', reason: 'PodFailing', message: 'x' }] }),
      ),
    ).toBe('Failed/PodFailing');
    expect(verdict(custom({ conditions: [{ type: 'Stalled', status: 'True', reason: 'NoQuota' }] }))).toBe(
      'Failed/NoQuota',
    );
    expect(verdict(custom({}))).toBe('Current/Current');
    // A ConfigMap has nothing to wait for; anything being deleted is on its way.
    expect(verdict({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm') })).toBe('Current/Current');
    expect(verdict({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...meta('cm'), deletionTimestamp: 't' } })).toBe(
      'InProgress/Terminating',
    );
  });
});

/** A pending pod the scheduler placed nowhere, with the scheduler's message. */
function unschedulable(message: string): NonNullable<Pod['status']> {
  return {
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
  };
}

function pod(name: string, status: NonNullable<Pod['status']>, owner = { kind: 'ReplicaSet', name: 'web-5d8f' }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      labels: { 'pod-template-hash': '5d8f' },
      ownerReferences: [{ apiVersion: 'apps/v1', ...owner, uid: 'x', controller: true }],
    },
    status,
  };
}

const crashLooping: NonNullable<Pod['status']> = {
  phase: 'Running',
  containerStatuses: [
    {
      name: 'app',
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
      lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } },
    },
  ],
};

describe('pods', () => {
  test('podProblem: back-offs (with the last exit), image pulls, init containers, exits of failed pods, no node; not a starting or deleted pod', () => {
    expect(podProblem(pod('a', crashLooping))).toEqual({
      reason: 'PodFailing',
      message: 'pod a: container app exited with code 137 (OOMKilled) and is waiting: CrashLoopBackOff: back-off 10s',
    });
    const pull = {
      phase: 'Pending',
      containerStatuses: [{ name: 'app', state: { waiting: { reason: 'ImagePullBackOff' } } }],
    };
    expect(podProblem(pod('b', pull))?.message).toBe('pod b: container app is waiting: ImagePullBackOff');
    const init = {
      phase: 'Pending',
      initContainerStatuses: [
        { name: 'setup', state: { waiting: { reason: 'CreateContainerConfigError', message: 'no secret' } } },
      ],
      containerStatuses: [{ name: 'app', state: { waiting: { reason: 'PodInitializing' } } }],
    };
    expect(podProblem(pod('c', init))?.message).toBe(
      'pod c: container setup is waiting: CreateContainerConfigError: no secret',
    );
    const failed = { phase: 'Failed', containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 2 } } }] };
    expect(podProblem(pod('d', failed))?.message).toBe('pod d: container app exited with code 2');
    expect(podProblem(pod('e', unschedulable('0/2 nodes are available')))).toEqual({
      reason: 'PodUnschedulable',
      message: 'pod e cannot be scheduled: 0/2 nodes are available',
    });
    // A pod waits so for every new volume: whether its claim cannot be bound is the claim's to say.
    const waitingForClaims = unschedulable(
      '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found',
    );
    expect(podProblem(pod('e', waitingForClaims))).toBeUndefined();
    // The other words the scheduler has for a volume being bound, seen on the test cluster.
    for (const message of [
      '0/2 nodes are available: persistentvolumeclaim "data-kv-0" bound to non-existent persistentvolume "". not found',
      '0/2 nodes are available: persistentvolumeclaim "data-kv-0" not found.',
    ]) {
      expect(podProblem(pod('e', unschedulable(message)))).toBeUndefined();
    }
    // A bound volume on the wrong node names no claim: no node takes the pod.
    const conflict = unschedulable('0/2 nodes are available: 2 node(s) had volume node affinity conflict.');
    expect(podProblem(pod('e', conflict))?.reason).toBe('PodUnschedulable');
    const starting = {
      phase: 'Pending',
      containerStatuses: [{ name: 'app', state: { waiting: { reason: 'ContainerCreating' } } }],
    };
    expect(podProblem(pod('f', starting))).toBeUndefined();
    const deleted = {
      ...pod('g', crashLooping),
      metadata: { ...pod('g', crashLooping).metadata, deletionTimestamp: 't' },
    };
    expect(podProblem(deleted)).toBeUndefined();
  });

  test('podWorkloads: the controller owner, and a ReplicaSet named for its pod-template-hash as its Deployment too', () => {
    expect(podWorkloads(pod('a', {}))).toEqual([
      { kind: 'ReplicaSet', name: 'web-5d8f' },
      { kind: 'Deployment', name: 'web' },
    ]);
    expect(podWorkloads(pod('a', {}, { kind: 'ReplicaSet', name: 'standalone' }))).toEqual([
      { kind: 'ReplicaSet', name: 'standalone' },
    ]);
    expect(podWorkloads(pod('db-0', {}, { kind: 'StatefulSet', name: 'db' }))).toEqual([
      { kind: 'StatefulSet', name: 'db' },
    ]);
    expect(podWorkloads({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare' } })).toEqual([]);
  });
});

describe('assessChildren', () => {
  const rollingOut = deployment({ observedGeneration: 1, replicas: 3, updatedReplicas: 1, availableReplicas: 2 });
  const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: meta('web'), spec: { type: 'ClusterIP' } };

  test('ready when every child is; not, listing those that are not', () => {
    const done = deployment({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    expect(assessChildren({ children: [done, service] })).toMatchObject({
      ready: true,
      notReady: [],
      failure: undefined,
    });
    const h = assessChildren({ children: [service, rollingOut] });
    expect(h.ready).toBe(false);
    expect(h.notReady.map((c) => `${c.kind} ${c.name}: ${c.message}`)).toEqual(['Deployment web: 1/2 pods updated']);
    expect(h.children.map((c) => c.kind)).toEqual(['Deployment', 'Service']);
  });

  test('a pod that cannot run is the failure while its workload is not ready, naming the workload; once it is, that is history', () => {
    const h = assessChildren({
      children: [rollingOut, service],
      podsOf: (c) => (c.kind === 'Deployment' ? [pod('web-5d8f-x', crashLooping)] : []),
    });
    expect(h.failure).toEqual({
      reason: 'PodFailing',
      message:
        'Deployment web: pod web-5d8f-x: container app exited with code 137 (OOMKilled) and is waiting: CrashLoopBackOff: back-off 10s',
      // Which child it is, typed: no one reads it back out of the message.
      object: { kind: 'Deployment', name: 'web' },
    });
    const done = deployment({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    expect(
      assessChildren({ children: [done], podsOf: () => [pod('web-5d8f-x', crashLooping)] }).failure,
    ).toBeUndefined();
  });

  test("a StatefulSet's pods of an older revision (being replaced), or of a spec its controller has not seen, are not its failure", () => {
    const sts = (generation: number, status: object, spec: object = {}): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta('db', generation),
      spec: { replicas: 1, ...spec },
      status: { replicas: 1, readyReplicas: 0, updatedReplicas: 0, ...status },
    });
    const stuckOn = (revision: string) => {
      const p = pod('db-0', crashLooping, { kind: 'StatefulSet', name: 'db' });
      return { ...p, metadata: { ...p.metadata, labels: { 'controller-revision-hash': revision } } };
    };
    const failureOf = (workload: KubeObject, revision: string) =>
      assessChildren({ children: [workload], podsOf: () => [stuckOn(revision)] }).failure;
    const rolled = { observedGeneration: 3, currentRevision: 'db-old', updateRevision: 'db-new' };
    // Fixed: its controller has not seen the new spec yet, then the stuck pod is of the old revision.
    expect(failureOf(sts(3, { ...rolled, observedGeneration: 2 }), 'db-old')).toBeUndefined();
    expect(failureOf(sts(3, rolled), 'db-old')).toBeUndefined();
    // The new revision's pod failing is the StatefulSet's failure; so is any pod of an OnDelete one.
    expect(failureOf(sts(3, rolled), 'db-new')?.reason).toBe('PodFailing');
    expect(failureOf(sts(3, rolled, { updateStrategy: { type: 'OnDelete' } }), 'db-old')?.reason).toBe('PodFailing');
  });

  test('then a failure Event while a child is not ready, then a failed child', () => {
    const event = { reason: 'FailedCreate', message: 'ReplicaSet web-5d8f: exceeded quota' };
    expect(assessChildren({ children: [rollingOut], failureEvent: event }).failure).toEqual(event);
    expect(assessChildren({ children: [service], failureEvent: event }).failure).toBeUndefined();
    const failedJob: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: meta('migrate'),
      status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'gave up' }] },
    };
    expect(assessChildren({ children: [failedJob, service] }).failure).toEqual({
      reason: 'JobFailed',
      message: 'Job migrate: BackoffLimitExceeded: gave up',
      object: { kind: 'Job', name: 'migrate' },
    });
    expect(assessChildren({ children: [failedJob], failureEvent: event }).failure).toEqual(event);
  });

  test('a pod no node takes, which the pods show now, comes before an Event, which may be history', () => {
    const pending = unschedulable('no node has disk=ssd');
    const sts: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta('kv'),
      spec: { replicas: 1 },
      status: { observedGeneration: 1, replicas: 1, readyReplicas: 0 },
    };
    const podsOf = () => [pod('kv-0', pending, { kind: 'StatefulSet', name: 'kv' })];
    expect(assessChildren({ children: [sts], podsOf }).failure).toEqual({
      reason: 'PodUnschedulable',
      message: 'StatefulSet kv: pod kv-0 cannot be scheduled: no node has disk=ssd',
      object: { kind: 'StatefulSet', name: 'kv' },
    });
    // A provisioning conflict a retry got past: the Event stays for an hour.
    const event = {
      reason: 'ProvisioningFailed',
      message: 'PersistentVolumeClaim data-kv-0: the object has been modified',
    };
    expect(assessChildren({ children: [sts], podsOf, failureEvent: event }).failure?.reason).toBe('PodUnschedulable');
    // A pod only waiting for its claims says nothing: the Event about the claim is why.
    const waitingForClaims = unschedulable(
      '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.',
    );
    const claimless = () => [pod('kv-0', waitingForClaims, { kind: 'StatefulSet', name: 'kv' })];
    expect(assessChildren({ children: [sts], podsOf: claimless, failureEvent: event }).failure).toEqual(event);
  });

  test('a ProvisioningFailed Event counts only while a claim waits: an owned claim not bound, or a pod waiting for its claims', () => {
    const sts: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta('kv'),
      spec: { replicas: 1 },
      status: { observedGeneration: 1, replicas: 1, readyReplicas: 0 },
    };
    const event = {
      reason: 'ProvisioningFailed',
      message: 'PersistentVolumeClaim data-kv-0: the object has been modified',
    };
    const starting = pod('kv-0', { phase: 'Pending' }, { kind: 'StatefulSet', name: 'kv' });
    // Its pod is scheduled and starting: the claim was bound after all, the Event is history.
    expect(assessChildren({ children: [sts], podsOf: () => [starting], failureEvent: event }).failure).toBeUndefined();
    const waiting = pod('kv-0', unschedulable('pod has unbound immediate PersistentVolumeClaims'), {
      kind: 'StatefulSet',
      name: 'kv',
    });
    expect(assessChildren({ children: [sts], podsOf: () => [waiting], failureEvent: event }).failure).toEqual(event);
    const claim: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta('data'),
      status: { phase: 'Pending' },
    };
    expect(assessChildren({ children: [claim], failureEvent: event }).failure).toEqual(event);
    // Other Events are read while a child is not ready.
    const quota = { reason: 'FailedCreate', message: 'StatefulSet kv: exceeded quota' };
    expect(assessChildren({ children: [sts], podsOf: () => [], failureEvent: quota }).failure).toEqual(quota);
  });

  test('a held child is not ready, in place of what exists under its name', () => {
    const done = deployment({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    const held = {
      kind: 'Deployment',
      name: 'web',
      readiness: 'InProgress' as const,
      reason: 'Waiting',
      message: 'waits for Job migrate',
    };
    const h = assessChildren({ children: [done, service], held: [held] });
    expect(h.ready).toBe(false);
    expect(h.children).toEqual([held, expect.objectContaining({ kind: 'Service', readiness: 'Current' })]);
  });
});

describe('waitsFor', () => {
  test('the objects of a construct wait for every object of the constructs it names; others wait for nothing', () => {
    const { objects, waits } = renderWithWaits((scope) => {
      // Made first, listed last.
      const web = new k8s.KubeDeployment(scope, 'web', {
        metadata: { name: 'web' },
        spec: { selector: {}, template: { spec: { containers: [{ name: 'w', image: 'x' }] } } },
      });
      const job = new k8s.KubeJob(scope, 'migrate', {
        metadata: { name: 'migrate' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'x' }] } } },
      });
      const claim = new k8s.KubePersistentVolumeClaim(scope, 'data', { metadata: { name: 'data' }, spec: {} });
      new k8s.KubeService(scope, 'svc', { metadata: { name: 'web' }, spec: {} });
      waitsFor(web, job, claim);
    });
    expect(Object.fromEntries(waits)).toEqual({ 'Deployment/web': ['Job/migrate', 'PersistentVolumeClaim/data'] });
    // A static chart lists a child after what it waits for.
    const order = objects.map((o) => o.kind);
    expect(order.indexOf('Deployment')).toBeGreaterThan(order.indexOf('Job'));
    expect(order.indexOf('Deployment')).toBeGreaterThan(order.indexOf('PersistentVolumeClaim'));
  });
});
