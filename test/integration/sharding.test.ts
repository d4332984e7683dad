/**
 * Sharded reconcilers (`--shards`) against the real API server: each replica takes a shard Lease
 * and reconciles only the namespaces whose hash falls in its range; a standby takes a killed
 * shard's range over; a change of shard count hands ranges on with no resource written by two
 * replicas. The tier's control plane serves sharded list and watch (ShardedListAndWatch on); a
 * control plane of this file's own, without the gate, shows the client-side fallback.
 */
import * as path from 'node:path';
import { startControlPlane, type ControlPlane } from '../../testing/control-plane';
import { namespaceInRange, shardRange } from '../../operator/runtime/cache/sharding';
import { auditMark, writesBy } from '../support/audit';
import { eventually, exists, getJson, kubectl, kubectlOk, testKubeconfig } from '../support/kube';
import { ReconcilerProcess, shardHeldIn } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');

jest.setTimeout(240_000);

const suffix = Math.random().toString(36).slice(2, 6);
/** Short leases, so that a takeover is seconds (the defaults are 15 s, 10 s and 2 s). */
const LEASE_FLAGS = [
  '--leader-election-lease-duration=4s',
  '--leader-election-renew-deadline=3s',
  '--leader-election-retry-period=500ms',
];

/**
 * `perShard` new namespace names in each shard of `count`, e.g. two in each half: random names,
 * kept by where they hash.
 */
function namespacesPerShard(count: number, perShard: number): string[][] {
  const shards: string[][] = Array.from({ length: count }, () => []);
  while (shards.some((s) => s.length < perShard)) {
    const name = `shard-${suffix}-${Math.random().toString(36).slice(2, 8)}`;
    const index = shards.findIndex((_, i) => namespaceInRange(name, shardRange(i, count)));
    if (shards[index]!.length < perShard) shards[index]!.push(name);
  }
  return shards;
}

function memcached(namespace: string, name: string): string {
  return JSON.stringify({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name, namespace },
    spec: { size: 1 },
  });
}

/** Resolves once the Memcached has its Deployment and a status for its generation. */
async function reconciled(namespace: string, name: string, kubeconfig?: string): Promise<void> {
  await eventually(`${namespace}/${name} reconciled`, () => {
    const status = getJson(['get', 'memcached', name, '-n', namespace, '-o', 'json'], { kubeconfig }).status;
    const deployment = exists(['get', 'deployment', name, '-n', namespace], { kubeconfig });
    return status?.observedGeneration && deployment ? true : undefined;
  });
}

/** The shard index each process holds (from its `opkit_shard` series), undefined for a standby. */
async function heldShard(p: ReconcilerProcess): Promise<number | undefined> {
  return shardHeldIn(await p.scrape());
}

/** Which processes wrote each Memcached (its status or its Deployment) after `mark`: namespace/name → identities. */
function writersOf(processes: readonly ReconcilerProcess[], mark: number): Map<string, Set<string>> {
  const writers = new Map<string, Set<string>>();
  for (const w of writesBy(processes, mark)) {
    const m = /\/namespaces\/([^/]+)\/(memcacheds|deployments)\/([^/?]+)/.exec(w.requestURI);
    if (!m) continue;
    const key = `${m[1]}/${m[3]}`;
    const identity = /\(([^)]+)\)$/.exec(w.userAgent)?.[1] ?? w.userAgent;
    if (!writers.has(key)) writers.set(key, new Set());
    writers.get(key)!.add(identity);
  }
  return writers;
}

describe('sharded Memcached reconcilers, with the API server serving sharded list and watch', () => {
  const leaseNamespace = `shard-leases-${suffix}`;
  const leaseId = `memcached-shards-${suffix}`;
  const [low = [], high = []] = namespacesPerShard(2, 2);
  const all = [...low, ...high];
  const processes: ReconcilerProcess[] = [];
  const start = (shards: number, name: string) =>
    ReconcilerProcess.start({
      kubeconfig: testKubeconfig(),
      // Within this file's namespaces: the tier's other suites reconcile Memcacheds of their own.
      args: [
        '--controllers=memcached',
        `--namespaces=${all.join(',')}`,
        `--shards=${shards}`,
        '--leader-elect',
        `--leader-election-namespace=${leaseNamespace}`,
        `--leader-election-id=${leaseId}`,
        ...LEASE_FLAGS,
      ],
      name,
    }).then((p) => {
      processes.push(p);
      return p;
    });

  beforeAll(() => {
    kubectlOk([
      'apply',
      '--server-side',
      '--force-conflicts',
      '-f',
      path.join(ROOT, 'dist', '0000-memcached-cluster.k8s.yaml'),
    ]);
    for (const ns of [leaseNamespace, ...all]) kubectlOk(['create', 'namespace', ns]);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    for (const ns of [leaseNamespace, ...all]) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  let shardOf: Map<ReconcilerProcess, number | undefined>;

  test('two shards and a standby: each resource is reconciled by the holder of its range alone, from a sharded watch', async () => {
    const mark = auditMark();
    const started = await Promise.all([start(2, 'shard-a'), start(2, 'shard-b'), start(2, 'shard-c')]);
    await eventually('two processes to hold a shard each', async () => {
      const held = await Promise.all(started.map(heldShard));
      return held.filter((h) => h !== undefined).length === 2 ? held : undefined;
    });
    shardOf = new Map(await Promise.all(started.map(async (p) => [p, await heldShard(p)] as const)));
    expect([...shardOf.values()].sort()).toEqual([0, 1, undefined]);

    for (const ns of all) kubectlOk(['apply', '-f', '-'], { input: memcached(ns, 'm') });
    for (const ns of all) await reconciled(ns, 'm');

    const writers = writersOf(started, mark);
    for (const [shard, namespaces] of [low, high].entries()) {
      const holder = [...shardOf].find(([, s]) => s === shard)![0];
      for (const ns of namespaces)
        expect([`${ns}/m`, [...writers.get(`${ns}/m`)!]]).toEqual([`${ns}/m`, [holder.identity]]);
    }
    for (const [p, shard] of shardOf) {
      if (shard === undefined) continue;
      // Custom resources and Deployments alike come sharded from the server.
      expect(await p.metric('opkit_shard_filter', { resource: 'memcacheds', by: 'server' })).toBe(1);
      expect(await p.metric('opkit_shard_filter', { resource: 'deployments', by: 'server' })).toBe(1);
      // Its cache holds its range only: condition series for its namespaces, none for the others.
      const cached = (await p.scrape()).split('\n').filter((l) => l.startsWith('opkit_resource_condition{'));
      const mine = shard === 0 ? low : high;
      const theirs = shard === 0 ? high : low;
      for (const ns of mine) expect(cached.some((l) => l.includes(`namespace="${ns}"`))).toBe(true);
      for (const ns of theirs) expect(cached.some((l) => l.includes(`namespace="${ns}"`))).toBe(false);
    }
  });

  test("a killed shard's range is taken over by the standby", async () => {
    const victim = [...shardOf].find(([, s]) => s === 0)![0];
    const standby = [...shardOf].find(([, s]) => s === undefined)![0];
    const mark = auditMark();
    const killedAt = Date.now();
    await victim.stop('SIGKILL');
    for (const ns of low) kubectlOk(['apply', '-f', '-'], { input: memcached(ns, 'after-kill') });
    for (const ns of low) await reconciled(ns, 'after-kill');
    process.stdout.write(
      `[sharding] range reconciled again ${((Date.now() - killedAt) / 1000).toFixed(1)}s after SIGKILL (lease 4s, retry 0.5s)\n`,
    );
    expect(await heldShard(standby)).toBe(0);
    const writers = writersOf(processes, mark);
    for (const ns of low) expect([...writers.get(`${ns}/after-kill`)!]).toEqual([standby.identity]);
  });

  test('2 → 4 shards: the new replicas wait for the old holders (one stopped while waiting gives its shard back), then take over with no resource written by two', async () => {
    const old = processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    expect(old).toHaveLength(2);
    const mark = auditMark();
    const fresh = await Promise.all([0, 1, 2, 3].map((i) => start(4, `shard4-${i}`)));
    await eventually('the four new processes to hold a shard of 4 each', async () => {
      const held = await Promise.all(fresh.map(heldShard));
      return held.every((h) => h !== undefined) ? held : undefined;
    });
    // While the old holders live, they alone reconcile.
    for (const ns of all) kubectlOk(['apply', '-f', '-'], { input: memcached(ns, 'during') });
    for (const ns of all) await reconciled(ns, 'during');
    const during = writersOf(processes, mark);
    const oldIds = old.map((p) => p.identity);
    for (const ns of all) expect(oldIds).toEqual(expect.arrayContaining([...during.get(`${ns}/during`)!]));
    // Each new replica overlaps a live old holder, so each says it waits. It says so after it
    // holds its shard (the series above) and asks for the other Leases, which on a busy machine
    // can come after the old holders have reconciled the above: wait for the line, do not expect it.
    await eventually('each new replica to say it waits for the previous holders', () =>
      fresh.every((p) => p.logs.some((l) => l.includes('waiting for the previous holders'))) ? true : undefined,
    );

    // One stopped while it waits gives its shard back at once, and a new replica takes it.
    const quitter = fresh.pop()!;
    const quitShard = (await heldShard(quitter))!;
    expect((await quitter.stop('SIGTERM')).code).toBe(0);
    const lease = getJson(['get', 'lease', `${leaseId}-shard-${quitShard}-of-4`, '-n', leaseNamespace, '-o', 'json']);
    expect(lease.spec.holderIdentity).toBe('');
    const replacement = await start(4, 'shard4-replacement');
    fresh.push(replacement);
    await eventually('the replacement to take the shard given back', async () =>
      (await heldShard(replacement)) === quitShard ? true : undefined,
    );

    // A rolling update's end: the old replicas stop gracefully and release their Leases.
    const handover = auditMark();
    for (const p of old) expect((await p.stop('SIGTERM')).code).toBe(0);
    for (const ns of all) kubectlOk(['apply', '-f', '-'], { input: memcached(ns, 'after') });
    for (const ns of all) await reconciled(ns, 'after');
    const after = writersOf(processes, handover);
    const freshIds = fresh.map((p) => p.identity);
    for (const ns of all) {
      const ids = [...after.get(`${ns}/after`)!];
      expect(ids).toHaveLength(1);
      expect(freshIds).toContain(ids[0]);
    }
    // And over the whole change, no resource was written by two processes.
    for (const [key, ids] of writersOf(processes, mark)) expect([key, ids.size]).toEqual([key, 1]);
  });
});

describe('sharded reconcilers on an API server without sharded list and watch', () => {
  let cp: ControlPlane;
  const reconcilers: ReconcilerProcess[] = [];
  const [low = [], high = []] = namespacesPerShard(2, 1);

  beforeAll(async () => {
    cp = await startControlPlane({ own: true, verbose: false });
    kubectlOk(['apply', '--server-side', '-f', path.join(ROOT, 'dist', '0000-memcached-cluster.k8s.yaml')], {
      kubeconfig: cp.kubeconfig,
    });
    for (const ns of [...low, ...high]) kubectlOk(['create', 'namespace', ns], { kubeconfig: cp.kubeconfig });
    for (const name of ['fallback-a', 'fallback-b'])
      reconcilers.push(
        await ReconcilerProcess.start({
          kubeconfig: cp.kubeconfig,
          args: [
            '--controllers=memcached',
            '--shards=2',
            '--leader-elect',
            '--leader-election-namespace=default',
            ...LEASE_FLAGS,
          ],
          name,
        }),
      );
  });

  afterAll(async () => {
    await Promise.all(reconcilers.map((p) => p.stop('SIGKILL')));
    await cp?.stop();
  });

  test('each filters its range itself, and says so in its log and a metric', async () => {
    for (const ns of [...low, ...high])
      kubectlOk(['apply', '-f', '-'], { input: memcached(ns, 'm'), kubeconfig: cp.kubeconfig });
    for (const ns of [...low, ...high]) await reconciled(ns, 'm', cp.kubeconfig);
    for (const p of reconcilers) {
      const shard = await heldShard(p);
      expect(shard).toBeDefined();
      expect(await p.metric('opkit_shard_filter', { resource: 'memcacheds', by: 'client' })).toBe(1);
      expect(await p.metric('opkit_shard_filter', { resource: 'memcacheds', by: 'server' })).toBe(0);
      expect(p.logs.some((l) => l.includes('ignored shardSelector'))).toBe(true);
      // Never claimed otherwise, not even before anything out of its range had arrived.
      expect(p.logs.some((l) => l.includes('the API server sends only this shard'))).toBe(false);
      const cached = (await p.scrape()).split('\n').filter((l) => l.startsWith('opkit_resource_condition{'));
      const [mine, theirs] = shard === 0 ? [low, high] : [high, low];
      expect(cached.some((l) => l.includes(`namespace="${mine[0]}"`))).toBe(true);
      expect(cached.some((l) => l.includes(`namespace="${theirs[0]}"`))).toBe(false);
    }
  });
});
