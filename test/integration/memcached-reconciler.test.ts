import { auditMark, writesBy } from '../support/audit';
import {
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  installDist,
  kubectl,
  kubectlOk,
  testWithNodes,
} from '../support/kube';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;

function memcached(name: string, size: number) {
  return JSON.stringify({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name, namespace: ns },
    spec: { size },
  });
}

function deployment(name: string): any {
  return getJsonIfExists(['get', 'deployment', name, '-n', ns, '--show-managed-fields']);
}

/**
 * Names of a Memcached's live pods: not terminating and not finished. A pod that failed stays
 * until someone deletes it (a ReplicaSet scaling down leaves it), and the chaos test's cleanup can
 * miss one that fails after it; it is not one of the Memcached's current pods.
 */
function podNames(name: string): string[] {
  return getJson(['get', 'pods', '-n', ns, '-l', `app.kubernetes.io/instance=${name},app.kubernetes.io/name=memcached`])
    .items.filter(
      (p: any) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
    )
    .map((p: any) => p.metadata.name)
    .sort();
}

beforeAll(async () => {
  installDist();
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/memcacheds.cache.example.com']);
  ns = createTestNamespace('memcached-rec');
  // The reconciler runs as the operator's ServiceAccount: the RBAC in dist/ must be enough.
  reconciler = await ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig(),
    args: ['--controllers=memcached', `--namespace=${ns}`, '--sync-period=3s', '--max-concurrent-reconciles=2'],
    name: 'reconciler-main',
  });
});

afterAll(async () => {
  const exit = await reconciler?.stop();
  expect(exit?.code).toBe(0);
});

describe('the Memcached controller against a real API server', () => {
  test('a new Memcached gets a Deployment with its size, labels and a controller owner reference', async () => {
    kubectlOk(['apply', '-f', '-'], { input: memcached('alpha', 2) });
    const mc = getJson(['get', 'memcached', 'alpha', '-n', ns]);
    const dep = await eventually('the Deployment', () => deployment('alpha'));
    expect(dep.spec.replicas).toBe(2);
    expect(dep.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'memcached',
      'app.kubernetes.io/instance': 'alpha',
      'app.kubernetes.io/managed-by': 'memcached-operator',
    });
    expect(dep.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        name: 'alpha',
        uid: mc.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(dep.spec.template.spec.containers[0]).toMatchObject({
      image: 'memcached:1.6',
      ports: [{ containerPort: 11211, name: 'memcached', protocol: 'TCP' }],
    });
    // Server-side apply under one field manager.
    expect(dep.metadata.managedFields.map((f: any) => `${f.manager}/${f.operation}`)).toContain(
      'cdk8s-operator-kit/Apply',
    );
  });

  test('changing size, and kubectl scale on the Memcached, change the replicas', async () => {
    kubectlOk(['patch', 'memcached', 'alpha', '-n', ns, '--type=merge', '-p', '{"spec":{"size":4}}']);
    await eventually('replicas 4', () => (deployment('alpha')?.spec.replicas === 4 ? true : undefined));
    kubectlOk(['scale', 'memcached', 'alpha', '-n', ns, '--replicas=1']);
    await eventually('replicas 1', () => (deployment('alpha')?.spec.replicas === 1 ? true : undefined));
  });

  /** The Running pods of a Memcached, by name. */
  function runningPods(name: string): string[] {
    return getJson([
      'get',
      'pods',
      '-n',
      ns,
      '-l',
      `app.kubernetes.io/instance=${name},app.kubernetes.io/name=memcached`,
    ])
      .items.filter((p: any) => !p.metadata.deletionTimestamp && p.status?.phase === 'Running')
      .map((p: any) => p.metadata.name)
      .sort();
  }

  /** Waits until the Memcached reports `size` ready pods, status.nodes equal to the Running pods. */
  async function readyAt(name: string, size: number): Promise<any> {
    return eventually(
      `${name} ready at size ${size}`,
      () => {
        const mc = getJson(['get', 'memcached', name, '-n', ns]);
        const running = runningPods(name);
        const ok =
          running.length === size &&
          JSON.stringify(mc.status?.nodes) === JSON.stringify(running) &&
          mc.status?.readyReplicas === size &&
          mc.status?.observedGeneration === mc.metadata.generation;
        return ok ? mc : undefined;
      },
      60_000,
    );
  }

  const conditionsOf = (mc: any) => Object.fromEntries(mc.status.conditions.map((c: any) => [c.type, c]));

  testWithNodes(
    'status.nodes equals the Running pods after scale up and scale down (seed 004), and readyReplicas follows',
    async () => {
      for (const size of [3, 1, 2]) {
        kubectlOk(['scale', 'memcached', 'alpha', '-n', ns, `--replicas=${size}`]);
        const mc = await readyAt('alpha', size);
        const cond = conditionsOf(mc);
        expect(cond.Available).toMatchObject({
          status: 'True',
          reason: 'PodsReady',
          observedGeneration: mc.metadata.generation,
        });
        expect(cond.Progressing).toMatchObject({ status: 'False', reason: 'Complete' });
        expect(cond.Degraded).toMatchObject({ status: 'False', reason: 'AsExpected' });
      }
    },
  );

  testWithNodes('a deleted pod leaves status.nodes, and its replacement joins it', async () => {
    const before = (await readyAt('alpha', 2)).status.nodes as string[];
    kubectlOk(['delete', 'pod', before[0]!, '-n', ns, '--wait=false']);
    const mc = await eventually(
      'the replacement in status.nodes',
      () => {
        const m = getJson(['get', 'memcached', 'alpha', '-n', ns]);
        const running = runningPods('alpha');
        return !running.includes(before[0]!) &&
          running.length === 2 &&
          JSON.stringify(m.status?.nodes) === JSON.stringify(running)
          ? m
          : undefined;
      },
      60_000,
    );
    expect(mc.status.nodes).not.toContain(before[0]);
    expect(mc.status.nodes).toContain(before[1]);
  });

  testWithNodes(
    "pods whose containers fail make it Degraded with the pod's reason and one Warning Event; healthy pods clear it",
    async () => {
      // A label another manager adds to the pod template is not ours to revert: every new pod
      // carries kwok's "container fails while running" chaos label.
      const chaos = 'pod-container-running-failed.stage.kwok.x-k8s.io';
      // The container fails as soon as it runs (kwok's default is after 1–2 s), as a crash loop
      // does: a pod that was Ready between failures made Degraded come and go with each
      // replacement, and under load the test could miss it.
      const failAtOnce = { [`${chaos}/delay`]: '0s', [`${chaos}/jitter-delay`]: '0s' };
      kubectlOk([
        'patch',
        'deployment',
        'alpha',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { template: { metadata: { labels: { [chaos]: 'true' }, annotations: failAtOnce } } } }),
      ]);
      const degraded = await eventually(
        'Degraded=True PodFailing',
        () => {
          const m = getJson(['get', 'memcached', 'alpha', '-n', ns]);
          const d = conditionsOf(m).Degraded;
          return d?.status === 'True' && d.reason === 'PodFailing' ? d : undefined;
        },
        60_000,
      );
      expect(degraded.message).toMatch(/exited with code 1/);
      const warnings = await eventually('a Warning Event', () => {
        const list = getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
          (e: any) =>
            e.regarding?.name === 'alpha' &&
            e.regarding?.kind === 'Memcached' &&
            e.type === 'Warning' &&
            e.reason === 'PodFailing',
        );
        return list.length ? list : undefined;
      });
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      kubectlOk([
        'patch',
        'deployment',
        'alpha',
        '-n',
        ns,
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'remove', path: `/spec/template/metadata/labels/${chaos.replace(/\//g, '~1')}` }]),
      ]);
      await readyAt('alpha', 2);
      // Read once the rollout is complete (the Deployment's status too): ready pods while the
      // Deployment still counted a failing pod of the old ReplicaSet are a rollout in progress,
      // and under load the test once read Degraded from that moment.
      const mc = await eventually('the rollout complete', () => {
        const m = getJson(['get', 'memcached', 'alpha', '-n', ns]);
        return conditionsOf(m).Progressing?.reason === 'Complete' ? m : undefined;
      });
      expect(conditionsOf(mc).Degraded).toMatchObject({ status: 'False', reason: 'AsExpected' });
      kubectl(['delete', 'pods', '-n', ns, '--field-selector=status.phase=Failed', '--wait=false']);
    },
  );

  test('status.nodes lists exactly the current pods after scale up and after scale down', async () => {
    for (const size of [3, 1]) {
      kubectlOk(['scale', 'memcached', 'alpha', '-n', ns, `--replicas=${size}`]);
      await eventually(
        `status for size ${size}`,
        () => {
          const mc = getJson(['get', 'memcached', 'alpha', '-n', ns]);
          const pods = podNames('alpha');
          const ok =
            pods.length === size &&
            JSON.stringify(mc.status?.nodes) === JSON.stringify(pods) &&
            mc.status?.observedGeneration === mc.metadata.generation;
          return ok ? mc : undefined;
        },
        60_000,
      );
    }
  });

  test('a deleted Deployment is recreated; replicas edited by hand are reverted', async () => {
    const before = deployment('alpha');
    kubectlOk(['delete', 'deployment', 'alpha', '-n', ns, '--wait=false']);
    const recreated = await eventually('the Deployment to be recreated', () => {
      const d = deployment('alpha');
      return d && d.metadata.uid !== before.metadata.uid ? d : undefined;
    });
    expect(recreated.spec.replicas).toBe(1);
    kubectlOk(['scale', 'deployment', 'alpha', '-n', ns, '--replicas=7']);
    await eventually('the replicas to be reverted', () =>
      deployment('alpha')?.spec.replicas === 1 ? true : undefined,
    );
  });

  test('Events tell what the controller did', async () => {
    const events = await eventually('events', () => {
      const list = getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
        (e: any) => e.regarding?.kind === 'Memcached' && e.regarding?.name === 'alpha',
      );
      const reasons = new Set(list.map((e: any) => e.reason));
      return reasons.has('Created') && reasons.has('Scaled') ? list : undefined;
    });
    const scaled = events.find((e: any) => e.reason === 'Scaled');
    expect(scaled).toMatchObject({
      type: 'Normal',
      reportingController: 'cdk8s-operator-kit/memcached',
      note: expect.stringMatching(/Scaled Deployment alpha from \d+ to \d+ replicas/),
    });
  });

  test('a resync of many settled objects writes nothing', async () => {
    const count = 20;
    const items = Array.from({ length: count }, (_, i) => JSON.parse(memcached(`quiet-${i}`, 1 + (i % 3))));
    kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
    await eventually(
      'every status to settle',
      () => {
        const items = getJson(['get', 'memcacheds', '-n', ns]).items.filter((m: any) =>
          m.metadata.name.startsWith('quiet-'),
        );
        return items.length === count &&
          items.every(
            (m: any) =>
              m.status?.nodes?.length === m.spec.size && m.status.observedGeneration === m.metadata.generation,
          )
          ? true
          : undefined;
      },
      90_000,
    );
    // Let the last writes (status after the final pod events) land, then watch a quiet window.
    await eventually(
      'no writes for 4s',
      async () => {
        const start = auditMark();
        await new Promise((r) => setTimeout(r, 4000));
        return writesBy([reconciler], start).length === 0 ? true : undefined;
      },
      60_000,
      0,
    );
    const mark = auditMark();
    const reconciles = () => reconciler.metric('controller_runtime_reconcile_total', { controller: 'memcached' });
    const reconcilesBefore = await reconciles();
    // The resyncs really run (--sync-period=3s): every object reconciled again, at least twice —
    // waited for, not timed (a busy machine runs them late)...
    await eventually(
      'every object reconciled twice more by resyncs',
      async () => ((await reconciles()) - reconcilesBefore >= 2 * count ? true : undefined),
      60_000,
    );
    const writes = writesBy([reconciler], mark).map((w) => `${w.verb} ${w.requestURI}`);
    // ...and wrote nothing: no apply, no status, no Event.
    expect(writes).toEqual([]);
  });

  test('deleting a Memcached garbage-collects its Deployment and pods, leaving nothing behind', async () => {
    kubectlOk(['apply', '-f', '-'], { input: memcached('doomed', 2) });
    await eventually('the Deployment', () => deployment('doomed'));
    await eventually('its pods', () => (podNames('doomed').length === 2 ? true : undefined));
    kubectlOk(['delete', 'memcached', 'doomed', '-n', ns]);
    await eventually('the Deployment to be collected', () => (deployment('doomed') ? undefined : true), 60_000);
    await eventually('the pods to be collected', () => (podNames('doomed').length === 0 ? true : undefined), 60_000);
    expect(getJson(['get', 'replicasets', '-n', ns, '-l', 'app.kubernetes.io/instance=doomed']).items).toEqual([]);
  });

  test('the reconciler serves health, readiness and Prometheus metrics', async () => {
    expect(
      await reconciler.metric('controller_runtime_reconcile_total', { controller: 'memcached', result: 'success' }),
    ).toBeGreaterThan(0);
    expect(await reconciler.metric('workqueue_adds_total', { name: 'memcached' })).toBeGreaterThan(0);
    expect(await reconciler.metric('rest_client_requests_total', { method: 'PATCH' })).toBeGreaterThan(0);
    // No reconcile failed; when one did, its logged error says why.
    const failed = reconciler.logs.filter((l) => l.includes('"level":"error"'));
    expect({ errors: await reconciler.metric('controller_runtime_reconcile_errors_total'), failed }).toEqual({
      errors: 0,
      failed: [],
    });
  });

  test('its logs are JSON, one object per line', () => {
    const parsed = reconciler.logs.slice(0, 20).map((l) => JSON.parse(l));
    expect(parsed[0]).toMatchObject({ level: 'info', msg: 'starting manager' });
    expect(parsed.every((p) => typeof p.time === 'string' && typeof p.msg === 'string')).toBe(true);
  });
});
