/**
 * The containerized reconciler against the bare process, in the same run on one control plane:
 * image size, cold start to ready, and resident memory idle and at N Memcacheds (default 100).
 * Both run the Memcached operator Deployment's own args and NODE_OPTIONS; the container as
 * test/support/container.ts runs it (podman, read-only root, in-cluster configuration).
 *   npm run bench:image            (IMAGE_N=100)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildImage } from '../command/image/build';
import { NODE_RUNTIME } from '../command/image/definition';
import { describeProject } from '../command/image/project';
import { freePort } from '../testing/control-plane';
import { deploymentIn, missingContainerTools, ReconcilerContainer } from '../test/support/container';
import { httpGet, serviceAccountKubeconfig } from '../test/support/reconciler';
import { withBenchCluster } from './cluster';
import { kubectl, rssBytes } from './measure';
import { nodeBinary } from './node-runtimes';

const ROOT = path.resolve(__dirname, '..');
const N = Number(process.env.IMAGE_N ?? 100);
const MiB = 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Figures {
  readyS: number;
  idleMiB: number;
  loadedMiB: number;
}

/** Creates N Memcacheds in `ns` and waits until every status describes its generation. */
async function loadAndSettle(admin: string, ns: string): Promise<void> {
  const items = Array.from({ length: N }, (_, i) => ({
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
    metadata: { name: `m-${i}`, namespace: ns },
    spec: { size: 1 },
  }));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-image-')), 'list.json');
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  kubectl(admin, ['apply', '--server-side', '-f', file]);
  const deadline = Date.now() + 300_000;
  for (;;) {
    const list = JSON.parse(kubectl(admin, ['get', 'memcacheds', '-n', ns, '-o', 'json'])).items as any[];
    if (list.filter((m) => m.status?.observedGeneration === m.metadata.generation).length === N) return;
    if (Date.now() > deadline) throw new Error(`${N} Memcacheds did not settle in 300 s`);
    await sleep(500);
  }
}

async function measure(admin: string, ns: string, pid: number, readyS: number): Promise<Figures> {
  await sleep(5000);
  const idle = rssBytes(pid);
  await loadAndSettle(admin, ns);
  await sleep(5000);
  return { readyS, idleMiB: idle / MiB, loadedMiB: rssBytes(pid) / MiB };
}

async function bare(admin: string, deployment: any, ns: string): Promise<Figures> {
  const container = deployment.spec.template.spec.containers[0];
  const [health, metrics] = [await freePort(), await freePort()];
  const args = (container.args as string[]).filter((a) => !/^--(health-probe|metrics)-bind-address=/.test(a));
  const env = Object.fromEntries((container.env as any[]).filter((e) => 'value' in e).map((e) => [e.name, e.value]));
  const started = Date.now();
  const child: ChildProcess = spawn(
    // The image's Node, so the two differ by the container alone.
    nodeBinary(NODE_RUNTIME),
    [
      path.join(ROOT, 'build', 'reconciler', 'main.js'),
      ...args,
      `--kubeconfig=${serviceAccountKubeconfig({ kubeconfig: admin })}`,
      `--namespace=${ns}`,
      `--health-probe-bind-address=127.0.0.1:${health}`,
      `--metrics-bind-address=127.0.0.1:${metrics}`,
    ],
    { env: { ...process.env, ...env, POD_NAMESPACE: deployment.metadata.namespace }, stdio: 'ignore' },
  );
  try {
    while ((await httpGet(`http://127.0.0.1:${health}/readyz`)).status !== 200) {
      if (child.exitCode !== null || Date.now() - started > 60_000)
        throw new Error('the bare reconciler never got ready');
      await sleep(50);
    }
    return await measure(admin, ns, child.pid!, (Date.now() - started) / 1000);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

async function main(): Promise<void> {
  const missing = missingContainerTools();
  if (missing) throw new Error(`bench:image needs ${missing}`);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-image-'));
  const project = describeProject(ROOT);
  const image = await buildImage({
    entry: 'reconciler.ts',
    reference: project.reference,
    description: project.description,
    outDir: out,
    cwd: ROOT,
    load: false,
  });
  const archiveMiB = fs.statSync(image.archive).size / MiB;
  const deployment = deploymentIn(path.join(ROOT, 'dist', '0001-memcached.k8s.yaml'));
  await withBenchCluster(async (ctx) => {
    // The container helpers work against the test cluster's kubeconfig.
    process.env.OPKIT_TEST_KUBECONFIG = ctx.admin;
    // Leader election is in the Deployment's args: one reconciler at a time holds the lease.
    const nsBare = `bench-bare-${Math.random().toString(36).slice(2, 7)}`;
    kubectl(ctx.admin, ['create', 'namespace', nsBare]);
    const b = await bare(ctx.admin, deployment, nsBare);
    await sleep(2000); // the lease is released on SIGTERM
    const nsImage = `bench-image-${Math.random().toString(36).slice(2, 7)}`;
    kubectl(ctx.admin, ['create', 'namespace', nsImage]);
    const started = Date.now();
    const c = await ReconcilerContainer.start({ archive: image.archive, deployment, namespace: nsImage });
    let ci: Figures;
    try {
      ci = await measure(ctx.admin, nsImage, c.pid(), (Date.now() - started) / 1000);
    } finally {
      await c.stop();
    }
    const row = (what: string, x: number, y: number, unit: string) =>
      `| ${what} | ${x.toFixed(1)} ${unit} | ${y.toFixed(1)} ${unit} | ${(y / x).toFixed(2)}× |`;
    const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    process.stdout.write(
      [
        `Image ${image.reference} ${image.digest}: archive ${archiveMiB.toFixed(1)} MiB; layers ${image.layers.map((l) => mib(l.size)).join(' + ')} compressed; holds base system ${mib(image.contents.baseSystem)}, node ${mib(image.contents.node)}, bundle ${mib(image.contents.bundle)}.`,
        '',
        `| figure, N = ${N} | bare process | container | container / bare |`,
        '| --- | --- | --- | --- |',
        row('start to ready', b.readyS, ci.readyS, 's'),
        row('RSS idle', b.idleMiB, ci.idleMiB, 'MiB'),
        row(`RSS with ${N} Memcacheds settled`, b.loadedMiB, ci.loadedMiB, 'MiB'),
        '',
      ].join('\n'),
    );
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
