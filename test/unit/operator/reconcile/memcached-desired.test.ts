import pino from 'pino';
import type { KubeClient } from '../../../../operator/runtime/client/client';
import { EventRecorder } from '../../../../operator/runtime/observability/events';
import type { Memcached } from '../../../../constructs';
import { desiredStatus, memcachedController } from '../../../../constructs/memcached/controller';
import { renderChildren } from '../../../../operator/runtime/children/render';

const desiredDeployment = (m: Memcached) => renderChildren(memcachedController, m)[0];
import { setCondition } from '../../../../constructs/contract/conditions';
import { sameJson } from '../../../../operator/runtime/client/managed-fields';
import { parseDuration, parseFlags, usage } from '../../../../operator/flags';
import { validateBuiltin } from '../../../support/builtin-validator';

const mc = (size: number, status?: Memcached['status']): Memcached => ({
  apiVersion: 'cache.example.com/v1',
  kind: 'Memcached',
  metadata: { name: 'cache', namespace: 'team', uid: 'u-1', generation: 4 },
  spec: { size, image: 'memcached:1.6.21', containerPort: 11311, memory: '64Mi' },
  status,
});

describe('desired Deployment of a Memcached', () => {
  const d = desiredDeployment(mc(3)) as any;

  test('replicas, image, port, owner reference and labels follow the resource', () => {
    expect(d).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'cache', namespace: 'team' },
    });
    expect(d.spec.replicas).toBe(3);
    const c = d.spec.template.spec.containers[0];
    expect(c.image).toBe('memcached:1.6.21');
    expect(c.ports).toEqual([{ name: 'memcached', containerPort: 11311, protocol: 'TCP' }]);
    expect(c.livenessProbe.tcpSocket.port).toBe('memcached');
    expect(c.readinessProbe.tcpSocket.port).toBe('memcached');
    expect(c.resources.requests).toEqual({ cpu: '50m', memory: '64Mi' });
    expect(d.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        name: 'cache',
        uid: 'u-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(d.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'memcached',
      'app.kubernetes.io/instance': 'cache',
      'app.kubernetes.io/managed-by': 'memcached-operator',
    });
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
  });

  test('memcached is told to listen on the port the probes and the Service use (it listens on 11211 unless told)', () => {
    // Found on a real node: with containerPort 11212 (a seed's example) memcached listened on
    // 11211, its probes were refused and the pod was never Ready; kwok's pods had hidden it.
    const args: string[] = d.spec.template.spec.containers[0].args;
    expect(args[args.indexOf('-p') + 1]).toBe('11311');
    expect(args.indexOf('-p')).toBeGreaterThanOrEqual(0);
  });

  test('meets the restricted Pod Security Standard and validates as a Deployment', () => {
    const pod = d.spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 11211,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers[0].securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
    });
    expect(() => {
      validateBuiltin(d);
    }).not.toThrow();
  });
});

describe('Memcached status', () => {
  const deployment = (replicas: number, ready: number, extra: object = {}) => ({
    metadata: { name: 'cache', generation: 2 },
    status: { observedGeneration: 2, replicas, readyReplicas: ready, updatedReplicas: replicas, ...extra },
  });
  const byType = (s: any) => Object.fromEntries(s.conditions.map((c: any) => [c.type, `${c.status}/${c.reason}`]));

  test('pods pending: not Available, Progressing, not Degraded; observedGeneration tracks generation', () => {
    const s = desiredStatus(mc(3), { deployment: deployment(3, 0), podNames: ['p1', 'p2', 'p3'] });
    expect(byType(s)).toEqual({
      Available: 'False/NoPodsReady',
      Progressing: 'True/WaitingForPods',
      Degraded: 'False/AsExpected',
    });
    expect(s).toMatchObject({ nodes: ['p1', 'p2', 'p3'], replicas: 3, readyReplicas: 0, observedGeneration: 4 });
    expect(s.conditions!.every((c) => c.observedGeneration === 4)).toBe(true);
  });

  test('all ready: Available and no longer Progressing', () => {
    expect(byType(desiredStatus(mc(3), { deployment: deployment(3, 3), podNames: [] }))).toEqual({
      Available: 'True/PodsReady',
      Progressing: 'False/Complete',
      Degraded: 'False/AsExpected',
    });
  });

  test('scaling down and up are named', () => {
    expect(byType(desiredStatus(mc(2), { deployment: deployment(4, 4), podNames: [] })).Progressing).toBe(
      'True/ScalingDown',
    );
    expect(byType(desiredStatus(mc(5), { deployment: deployment(3, 3), podNames: [] })).Progressing).toBe(
      'True/ScalingUp',
    );
  });

  test('a rejected Deployment or a ReplicaFailure makes it Degraded with the reason', () => {
    expect(byType(desiredStatus(mc(3), { podNames: [], applyError: 'PATCH ...: 422 Invalid' })).Degraded).toBe(
      'True/InvalidDeployment',
    );
    const failing = deployment(0, 0, {
      conditions: [
        { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "x" is forbidden' },
      ],
    });
    const s = desiredStatus(mc(3), { deployment: failing, podNames: [] });
    expect(byType(s).Degraded).toBe('True/FailedCreate');
    expect(s.conditions!.find((c) => c.type === 'Degraded')!.message).toContain('forbidden');
  });

  test('an unchanged situation yields an identical status (so nothing is written)', () => {
    const first = desiredStatus(mc(3), {
      deployment: deployment(3, 1),
      podNames: ['a'],
      now: new Date('2026-01-01T00:00:00Z'),
    });
    const again = desiredStatus(mc(3, first), {
      deployment: deployment(3, 1),
      podNames: ['a'],
      now: new Date('2026-06-01T00:00:00Z'),
    });
    expect(sameJson(first, again)).toBe(true);
  });
});

describe('helpers', () => {
  test('setCondition keeps lastTransitionTime unless the status changes', () => {
    const t0 = new Date('2026-01-01T00:00:00.123Z');
    const t1 = new Date('2026-01-02T00:00:00Z');
    const a = setCondition([], { type: 'Available', status: 'False', reason: 'X', message: 'm' }, t0);
    expect(a[0]!.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    const b = setCondition(a, { type: 'Available', status: 'False', reason: 'Y', message: 'n' }, t1);
    expect(b[0]).toMatchObject({ lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Y' });
    const c = setCondition(b, { type: 'Available', status: 'True', reason: 'Z', message: 'o' }, t1);
    expect(c[0]!.lastTransitionTime).toBe('2026-01-02T00:00:00Z');
  });

  test('sameJson: key order does not count, values and list order do', () => {
    expect(sameJson({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(sameJson({ a: 1, b: [1, 2] }, { a: 1, b: [2, 1] })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  });

  test('flags: controller-runtime names, durations, validation', () => {
    const f = parseFlags(
      [
        '--controllers=memcached',
        '--leader-elect',
        '--leader-election-lease-duration=4s',
        '--leader-election-renew-deadline=3s',
        '--leader-election-retry-period=500ms',
        '--namespace=team',
      ],
      ['memcached'],
    );
    expect(f).toMatchObject({
      controllers: ['memcached'],
      leaderElect: true,
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
      namespaces: ['team'],
      metricsBindAddress: ':8080',
    });
    expect(parseFlags([], ['memcached']).controllers).toEqual(['memcached']);
    expect(() => parseFlags(['--controllers=nope'], ['memcached'])).toThrow(/unknown controller\(s\) nope/);
    expect(() => parseFlags(['--bogus'], ['memcached'])).toThrow();
    expect(() => parseFlags(['--leader-election-renew-deadline=20s'], ['memcached'])).toThrow(
      /shorter than the lease duration/,
    );
    expect(() => parseFlags(['--max-concurrent-reconciles=0'], ['memcached'])).toThrow(/at least 1/);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    // A standby is warm unless told otherwise.
    expect(f.warmStandby).toBe(true);
    expect(parseFlags(['--warm-standby=false'], ['memcached']).warmStandby).toBe(false);
    expect(() => parseFlags(['--warm-standby=cold'], ['memcached'])).toThrow(/--warm-standby must be true or false/);
  });

  test('flags: the namespaces watched, one or several, each once; none is every namespace', () => {
    const watched = (args: string[]) => parseFlags(args, ['memcached']).namespaces;
    expect(watched([])).toBeUndefined();
    expect(watched(['--namespace='])).toBeUndefined();
    expect(watched(['--namespaces=apps, web,apps'])).toEqual(['apps', 'web']);
    expect(() => watched(['--namespace=a', '--namespaces=b,c'])).toThrow(/--namespace or --namespaces, not both/);
    expect(() => watched(['--namespaces=apps,Web_1'])).toThrow(/"Web_1" is not a namespace name/);
    expect(() => parseDuration('10 seconds')).toThrow(/invalid duration/);
  });

  test('flags: --shards, 1 (unsharded) unless given, and only with leader election (each shard is a Lease)', () => {
    const shards = (args: string[]) => parseFlags(args, ['memcached']).shards;
    expect(shards([])).toBe(1);
    expect(shards(['--shards=4', '--leader-elect'])).toBe(4);
    expect(() => shards(['--shards=4'])).toThrow(/--shards needs --leader-elect/);
    expect(() => shards(['--shards=0', '--leader-elect'])).toThrow(/--shards must be a whole number of at least 1/);
  });
});

describe('EventRecorder', () => {
  test('insists on a reportingController the API server accepts', () => {
    // The constructor refuses the name before it ever uses the client.
    const client = {} as KubeClient;
    expect(
      () => new EventRecorder(client, 'cdk8s-operator-kit/memcached', 'pod_1', pino({ level: 'silent' })),
    ).not.toThrow();
    expect(
      () => new EventRecorder(client, 'cdk8s-operator-kit/application,webapp', 'pod_1', pino({ level: 'silent' })),
    ).toThrow(/not a qualified name/);
  });
});

test('a failing pod makes the status Degraded while pods are missing, not once replacements are ready', () => {
  const failed = { reason: 'PodFailing', message: 'pod x: container memcached exited with code 1' };
  const degradedOf = (s: { conditions?: { type: string; status: string; reason: string }[] }) =>
    s.conditions!.find((c) => c.type === 'Degraded');
  const short = desiredStatus(mc(3), {
    deployment: {
      metadata: { name: 'cache', generation: 1 },
      spec: { replicas: 3 },
      status: { replicas: 3, readyReplicas: 2, updatedReplicas: 3, observedGeneration: 1 },
    },
    podNames: ['a', 'b'],
    podFailed: failed,
  });
  expect(degradedOf(short)).toMatchObject({ status: 'True', reason: 'PodFailing' });
  const whole = desiredStatus(mc(3), {
    deployment: {
      metadata: { name: 'cache', generation: 1 },
      spec: { replicas: 3 },
      status: { replicas: 3, readyReplicas: 3, updatedReplicas: 3, observedGeneration: 1 },
    },
    podNames: ['a', 'b', 'c'],
    podFailed: failed,
  });
  expect(degradedOf(whole)).toMatchObject({ status: 'False', reason: 'AsExpected' });
  // A rollout whose new pod crash-loops: the old pods still serve, so none is missing, but the
  // spec's pods do not run (a Deployment waits for them until its progress deadline, 10 minutes).
  const stalled = desiredStatus(mc(3), {
    deployment: {
      metadata: { name: 'cache', generation: 2 },
      spec: { replicas: 3 },
      status: { replicas: 4, readyReplicas: 3, updatedReplicas: 1, observedGeneration: 2 },
    },
    podNames: ['a', 'b', 'c', 'd'],
    podFailed: failed,
  });
  expect(degradedOf(stalled)).toMatchObject({ status: 'True', reason: 'PodFailing' });
});

test("--help lists the controllers of the image it runs in, not the kit's", () => {
  const kit = usage(['memcached', 'etcdcluster', 'crontab', 'application', 'webapp', 'database']);
  expect(kit).toMatch(/memcached, etcdcluster, crontab, application, webapp, database/);
  const own = usage(['staticsite']);
  expect(own).toMatch(/--controllers=a,b .*\n\s+staticsite\n/);
  expect(own).not.toContain('memcached');
  // Long lists wrap without a line over 100 characters.
  const many = usage(Array.from({ length: 20 }, (_, i) => `controller-${i}`));
  expect(
    Math.max(
      ...many
        .split('\n')
        .filter((l) => l.includes('controller-'))
        .map((l) => l.length),
    ),
  ).toBeLessThanOrEqual(100);
  expect(many).toContain('controller-19');
});
