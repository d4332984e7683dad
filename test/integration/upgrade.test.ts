/**
 * Upgrade tests (`upgradeTest` of cdk8s-operator-kit/testing) on a control plane of their own:
 * the CRDs of a first release are installed over the shared plane's kinds nowhere else. The old
 * controllers run over seeded resources, `plan` previews the new ones before their CRD exists,
 * the new version replaces the old, and what it writes is compared with what the plan said.
 */
import * as path from 'node:path';
import { HttpKubeClient } from '../../operator/runtime/client';
import { loadKubeConfig } from '../../operator/runtime/kubeconfig';
import { type ControlPlane, startControlPlane, upgradeTest } from '../../testing';
import { applyCrd } from '../../testing/upgrade/steps';
import { currentMemcached, releasedMemcached } from '../fixtures/upgrade/memcached-versions';
import { runCommand } from '../support/controllers-module';
import { kubectlOk } from '../support/kube';

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
