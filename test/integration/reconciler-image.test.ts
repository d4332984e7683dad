/**
 * The kit's reconciler image, built by `cdk8s-operator-kit image` (no daemon, no registry) and run
 * with podman exactly as the synthesized Memcached operator Deployment runs it, against the real
 * API server.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG, NON_ROOT_UID } from '../../constructs';
import { buildImage, deploymentIn, missingContainerTools, ReconcilerContainer } from '../support/container';
import {
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  installDist,
  kubectl,
  kubectlOk,
} from '../support/kube';
import { bindMetricsReader, scrapeMetrics } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const missing = missingContainerTools();

jest.setTimeout(300_000);

/** The image's config blob, read from its OCI archive. */
function imageConfig(archive: string): any {
  const read = (member: string) => spawnSync('tar', ['-xOf', archive, member], { encoding: 'utf8' }).stdout;
  const index = JSON.parse(read('index.json'));
  const manifest = JSON.parse(read(`blobs/${index.manifests[0].digest.replace(':', '/')}`));
  return JSON.parse(read(`blobs/${manifest.config.digest.replace(':', '/')}`));
}

if (missing) test.todo(`the reconciler image is built and run as its Deployment runs it — skipped: ${missing}`);

(missing ? describe.skip : describe)('the reconciler image', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-image-'));
  const tag = `${DEFAULT_IMAGE}:${DEFAULT_IMAGE_TAG}`;
  let image: ReturnType<typeof buildImage>;
  /** The commit the sources were at when the image was built (a commit made meanwhile is not its). */
  let builtAt: string;
  let ns: string;
  let container: ReconcilerContainer | undefined;
  const deployment = deploymentIn(path.join(DIST, '0001-memcached.k8s.yaml'));

  beforeAll(async () => {
    builtAt = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    image = buildImage({ entry: 'reconciler.ts', tag, outDir: path.join(out, 'first') });
    installDist();
    kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/memcacheds.cache.example.com']);
    ns = createTestNamespace('image');
    container = await ReconcilerContainer.start({ archive: image.archive, deployment, namespace: ns });
  });

  afterAll(async () => {
    kubectl(['delete', 'clusterrolebinding', `metrics-reader-${ns}`, '--ignore-not-found']);
    if (container) await container.stop();
  });

  test('a second build of the same sources gives the same digest', () => {
    const again = buildImage({ entry: 'reconciler.ts', tag, outDir: path.join(out, 'second') });
    expect(image.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(again.digest).toBe(image.digest);
  });

  test('two layers (base system with node, then the bundle), a non-root user, the bundle as entry point, OCI labels', () => {
    expect(image.layers).toHaveLength(2);
    const config = imageConfig(image.archive);
    expect(config.config.User).toBe(`${NON_ROOT_UID}:${NON_ROOT_UID}`);
    // The bundle, run by the image's Node with V8's optimizing compiler on the main thread (RECONCILER_NODE_FLAGS).
    expect(config.config.Entrypoint).toEqual(['/usr/local/bin/node', '--no-concurrent-recompilation', '/app/main.js']);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(config.config.Labels).toMatchObject({
      'org.opencontainers.image.title': 'cdk8s-operator-kit',
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.licenses': pkg.license,
      'org.opencontainers.image.source': expect.stringMatching(/^https:\/\//),
      'org.opencontainers.image.revision': expect.stringMatching(new RegExp(`^${builtAt}(-dirty)?$`)),
    });
    // The constructs name this very image by default.
    expect(tag).toBe(`cdk8s-operator-kit/reconciler:${pkg.version}`);
  });

  test('runs as its Deployment runs it: ready, and a Memcached reconciled into its Deployment and status', async () => {
    expect(container!.logs.join('\n')).toContain('"starting manager"');
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: 'boxed' },
        spec: { size: 2 },
      }),
    });
    const child = await eventually('the Deployment of the Memcached', () =>
      getJsonIfExists(['get', 'deployment', 'boxed', '-n', ns]),
    );
    expect(child.spec.replicas).toBe(2);
    expect(child.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Memcached', name: 'boxed', controller: true }),
    ]);
    const mc = await eventually('the status of the current generation', () => {
      const m = getJson(['get', 'memcached', 'boxed', '-n', ns]);
      return m.status?.observedGeneration === m.metadata.generation ? m : undefined;
    });
    expect(mc.status.conditions.map((c: any) => c.type)).toEqual(
      expect.arrayContaining(['Available', 'Progressing', 'Degraded']),
    );
  });

  test('serves /metrics over HTTPS: 401 without a token, 200 to a token with the metrics-reader role', async () => {
    expect((await scrapeMetrics(container!.metricsPort)).status).toBe(401);
    bindMetricsReader(ns, 'prometheus');
    const token = kubectlOk(['create', 'token', 'prometheus', '-n', ns]).trim();
    const scraped = await eventually('an authorized scrape', async () => {
      const s = await scrapeMetrics(container!.metricsPort, token);
      return s.status === 200 ? s : undefined;
    });
    expect(scraped.body).toContain('controller_runtime_reconcile_total');
  });

  test('stops on SIGTERM within the grace period, exit code 0, its leader lease released', async () => {
    const lease = () => getJson(['get', 'lease', 'memcached-operator-leader', '-n', 'memcached-system']).spec;
    expect(lease().holderIdentity).toBe(container!.identity);
    const stopped = await container!.stop();
    container = undefined;
    expect(stopped.code).toBe(0);
    expect(stopped.seconds).toBeLessThan(deployment.spec.template.spec.terminationGracePeriodSeconds);
    expect(lease().holderIdentity ?? '').toBe('');
  });
});
