/**
 * Upgrade tests (`upgradeTest` of cdk8s-operator-kit/testing) on a control plane of their own:
 * the CRDs of a first release are installed over the shared plane's kinds nowhere else. The old
 * controllers run over seeded resources, `plan` previews the new ones before their CRD exists,
 * the new version replaces the old, and what it writes is compared with what the plan said.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { memcachedController, writeHelmChart } from '../../constructs';
import { HttpKubeClient } from '../../operator/runtime/client/client';
import { loadKubeConfig } from '../../operator/runtime/client/kubeconfig';
import { type ControlPlane, startControlPlane, upgradeTest } from '../../testing';
import { applyCrd } from '../../testing/upgrade/steps';
import { currentMemcached, releasedMemcached } from '../fixtures/upgrade/memcached-versions';
import { runCommand } from '../support/controllers-module';
import { helm, helmBinary, helmOk } from '../support/helm';
import { eventually, getJson, kubectl, kubectlOk } from '../support/kube';
import { tempDir } from '../support/temp-dir';
import { commandArgs } from '../support/command';

jest.setTimeout(600_000);

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'upgrade');
let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ audit: true, own: true, verbose: false });
});

afterAll(async () => {
  await cp?.stop();
});

const memcached = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'cache.example.com/v1alpha1',
  kind: 'Memcached',
  metadata: { name },
  spec,
});

test('plan and diff preview v1 before its CRD is applied, and while no operator serves its conversion', async () => {
  // A group of its own: the CRD this test bumps to v1 can never serve v1alpha1 alone again.
  const group = 'preview.example.com';
  const on = ['--kubeconfig', cp.kubeconfig];
  const client = new HttpKubeClient(loadKubeConfig({ path: cp.kubeconfig }), { fieldManager: 'preview-test' });
  const ns = 'preview';
  try {
    kubectlOk(['create', 'namespace', ns], { kubeconfig: cp.kubeconfig });
    await applyCrd(client, releasedMemcached(group)[0]!, ns);
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ ...memcached('small', { size: 1, maxMemoryMB: 64 }), apiVersion: `${group}/v1alpha1` }),
      kubeconfig: cp.kubeconfig,
    });
    const v1 = path.join(FIXTURES, 'preview-v1.ts');
    const plan = () => {
      const r = runCommand(['plan', '--kind', 'Memcached', '-n', ns, '--controllers', v1, '-o', 'json', ...on]);
      expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 1, stderr: '' });
      return JSON.parse(r.stdout);
    };
    // The cluster serves v1alpha1 alone: read there, converted by the new code.
    const before = plan();
    expect(before).toMatchObject({ read: 'v1alpha1', resources: 1, children: { created: 1 } });
    expect(before.crd).toMatchObject({ versionsAdded: ['v1'], storageVersion: { from: 'v1alpha1', to: 'v1' } });
    const diff = runCommand(['diff', 'memcached/small', '-n', ns, '--controllers', v1, ...on]);
    expect(diff.status).toBe(1);
    expect(diff.stdout).toContain(
      `# CRD memcacheds.${group}:\n#   versions added: v1\n#   storage version: v1alpha1 → v1`,
    );
    expect(diff.stdout).toMatch(/^created\s+Deployment preview\/small$/m);
    // The new CRD applied; its conversion webhook is served by nobody (refused at once by the
    // control plane's egress). Objects are still stored as v1alpha1: read there, no conversion.
    await applyCrd(client, currentMemcached(group)[0]!, ns);
    const after = plan();
    expect(after).toMatchObject({ read: 'v1alpha1', children: { created: 1 } });
    expect(after.crd).toMatchObject({ versionsAdded: [], storageVersion: { from: 'v1', to: 'v1' }, schemaChanges: [] });
    // A context the kubeconfig does not have: one line, exit 2.
    const wrong = runCommand([
      'plan',
      '--kind',
      'Memcached',
      '-n',
      ns,
      '--controllers',
      v1,
      ...on,
      '--context',
      'nowhere',
    ]);
    expect({ code: wrong.status, stderr: wrong.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('no context named "nowhere"'),
    });
  } finally {
    client.close();
  }
});

test('Memcached v1alpha1 → v1: the plan names every write, conversion loses nothing, storedVersions is trimmed', async () => {
  const report = await upgradeTest({
    controlPlane: cp,
    kind: 'Memcached',
    from: path.join(FIXTURES, 'memcached-v1alpha1.ts'),
    to: path.join(FIXTURES, 'memcached-v1.ts'),
    resources: [
      memcached('small', { size: 1, maxMemoryMB: 64 }),
      memcached('large', { size: 2, maxMemoryMB: 1024, image: 'memcached:1.6.38' }),
    ],
  });
  expect(report.problems).toEqual([]);
  expect(report.plan.crd).toMatchObject({
    versionsAdded: ['v1'],
    versionsRemoved: [],
    storageVersion: { from: 'v1alpha1', to: 'v1' },
    conversion: { from: 'None', to: 'Webhook' },
  });
  // The one change the new version makes to the children: their owner is named in its new version.
  expect(report.plan.changes).toEqual(
    ['large', 'small'].map((name) =>
      expect.objectContaining({
        child: `Deployment/${name}`,
        verb: 'changed',
        fields: [{ field: 'metadata.ownerReferences[0].apiVersion', change: 'changed' }],
      }),
    ),
  );
  expect(report.written).toEqual(['Deployment/large', 'Deployment/small']);
  expect(report.storedVersions).toEqual(['v1']);
});

const ROOT = path.join(__dirname, '..', '..');
const MEMCACHED_CRD = 'crd/memcacheds.cache.example.com';

/** The package's command as a user starts it, here, against this test's control plane. */
function startCommand(args: string[]): { output: () => string; stop: () => Promise<number | null> } {
  const child = spawn(process.execPath, [...commandArgs(), ...args], {
    cwd: ROOT,
    env: { ...process.env, KUBECONFIG: cp.kubeconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  return {
    output: () => output,
    stop: () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

const helmTest = helmBinary().missing ? test.skip : test;

helmTest(
  'the chart in a namespace of its own: it adopts a CRD applied before, once labelled as docs/helm.md says; its conversion Service is the release namespace’s; helm uninstall keeps it',
  () => {
    const on = { kubeconfig: cp.kubeconfig };
    const chart = path.join(tempDir('opkit-chart-'), 'memcached-operator');
    writeHelmChart(chart, { operator: { name: 'memcached', controllers: [memcachedController] } });
    const install = ['install', 'cache', chart, '-n', 'cache-ops', '--create-namespace'];
    // The upgrade above left the CRD, applied by another tool: Helm refuses it, naming why.
    const refused = helm(install, on);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('invalid ownership metadata');
    // docs/helm.md: hand what kubectl applied to the release, then install.
    kubectlOk([`label`, MEMCACHED_CRD, 'app.kubernetes.io/managed-by=Helm', '--overwrite'], on);
    kubectlOk(
      [
        'annotate',
        MEMCACHED_CRD,
        'meta.helm.sh/release-name=cache',
        'meta.helm.sh/release-namespace=cache-ops',
        '--overwrite',
      ],
      on,
    );
    // Helm 4 applies server-side: the CRD's conversion Service moves to this release's namespace,
    // a field the earlier applier set otherwise, so the install takes it over (docs/helm.md).
    helmOk([...install, '--force-conflicts'], on);
    const crd = getJson(['get', MEMCACHED_CRD], on);
    expect(crd.spec.conversion.webhook.clientConfig.service).toMatchObject({
      name: 'memcached-webhook',
      namespace: 'cache-ops',
    });
    expect(crd.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    expect(getJson(['get', 'service', 'memcached-webhook', '-n', 'cache-ops'], on).spec.ports[0].port).toBe(443);
    helmOk(['uninstall', 'cache', '-n', 'cache-ops'], on);
    expect(kubectl(['get', 'deployment', 'memcached-operator', '-n', 'cache-ops'], on).code).not.toBe(0);
    expect(kubectl(['get', MEMCACHED_CRD], on).code).toBe(0);
  },
);

test('after a local run (cdk8s-operator-kit run, its webhooks on loopback), kubectl apply --server-side -f dist/ applies the CRD again as it is', async () => {
  const on = { kubeconfig: cp.kubeconfig };
  const dist = (file: string) => path.join(ROOT, 'dist', file);
  // The operator installed as the README installs it (taking the CRD over from the test above).
  kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', dist('0000-memcached-cluster.k8s.yaml')], on);
  const run = startCommand(['run', '--entry', 'reconciler.ts', '--', '--controllers=memcached', '--log-format=text']);
  try {
    await eventually('the webhook Service routed to the local reconciler', () =>
      run.output().includes('webhook Service routed to this process') ? true : undefined,
    );
    // Conversion goes through the Service the CRD names, routed to the local reconciler — once
    // the API server has read the caBundle the run set (it rebuilds a CRD's webhook client when
    // it sees the CRD change: a moment on an idle machine, longer on a busy one).
    kubectlOk(['create', 'namespace', 'local-run'], on);
    const input = JSON.stringify(memcached('old', { size: 1, maxMemoryMB: 128 }));
    await eventually(
      'a v1alpha1 Memcached created through the routed conversion webhook',
      () => (kubectl(['apply', '-n', 'local-run', '-f', '-'], { ...on, input }).code === 0 ? true : undefined),
      120_000,
    );
    expect(getJson(['get', 'memcacheds.v1.cache.example.com', 'old', '-n', 'local-run'], on).spec.memory).toBe('128Mi');
  } finally {
    expect(await run.stop()).toBe(0);
  }
  const crd = getJson(['get', MEMCACHED_CRD], on);
  expect(crd.spec.conversion.webhook.clientConfig).toEqual({
    service: { name: 'memcached-webhook', namespace: 'memcached-system', path: '/convert', port: 443 },
    caBundle: expect.any(String),
  });
  // The reproduction: this failed with "exactly one of url or service is required".
  kubectlOk(['apply', '--server-side', '-f', dist('0000-memcached-cluster.k8s.yaml')], on);
});
