/**
 * `cdk8s-operator-kit plan` against a real API server: what a new version of the controllers
 * would do to every Memcached, with no writes.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { auditMark, writesByAgent } from '../support/audit';
import { eventually, getJson, kubectlOk, testKubeconfig } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';

const ROOT = path.resolve(__dirname, '..', '..');
const N = 5;

jest.setTimeout(180_000);

let operator: OperatorUnderTest;

/** A new version of the Memcached controller: its Deployments patched as `patch` says. */
function newVersion(patch: string): string {
  // Inside the project, so that it resolves cdk8s as a user's module in their project does.
  fs.mkdirSync(path.join(ROOT, 'build'), { recursive: true });
  const file = path.join(fs.mkdtempSync(path.join(ROOT, 'build', 'plan-')), 'controllers.ts');
  fs.writeFileSync(
    file,
    `import { ApiObject, JsonPatch } from 'cdk8s';
import { memcachedController } from ${JSON.stringify(path.join(ROOT, 'constructs'))};
export const controllers = [{
  ...memcachedController,
  render: (scope: any, mc: any, context: any) => {
    memcachedController.render!(scope, mc, context);
    for (const o of scope.node.findAll()) if (o instanceof ApiObject && o.kind === 'Deployment') o.addJsonPatch(${patch});
  },
}];
`,
  );
  return file;
}

function plan(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'operator', 'cli.ts'),
      'plan',
      '--kind',
      'Memcached',
      '-n',
      operator.ns,
      '-o',
      'json',
      ...args,
    ],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, KUBECONFIG: testKubeconfig() }, timeout: 120_000 },
  );
  return { code: r.status, stderr: r.stderr, plan: r.stdout ? JSON.parse(r.stdout) : undefined };
}

/** Every Deployment's resourceVersion: what a write would change. */
const versions = () =>
  getJson(['get', 'deployments', '-n', operator.ns]).items.map(
    (d: any) => `${d.metadata.name}@${d.metadata.resourceVersion}`,
  );

beforeAll(async () => {
  operator = await startOperatorUnderTest({
    operator: 'memcached',
    controllers: 'memcached',
    crds: ['memcacheds.cache.example.com'],
  });
  for (let i = 0; i < N; i++)
    kubectlOk(['apply', '-n', operator.ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: `mc-${i}` },
        spec: { size: 1 },
      }),
    });
  await eventually(
    'every Memcached settled',
    () =>
      getJson(['get', 'memcached', '-n', operator.ns]).items.every((m: any) => m.status?.conditions) ? true : undefined,
    60_000,
  );
  // The old version stops; the plan is of the new one.
  expect((await operator.reconciler.stop()).code).toBe(0);
});

describe('plan', () => {
  test('the same version: every child unchanged, no dry run at all, exit 0, nothing written', () => {
    const before = versions();
    const r = plan();
    expect(r.code).toBe(0);
    expect(r.plan).toMatchObject({
      kind: 'Memcached',
      resources: N,
      children: { unchanged: N, changed: 0, created: 0, pruned: 0, refused: 0 },
      fieldChanges: [],
      requests: { dryRuns: 0 },
    });
    expect(versions()).toEqual(before);
  });

  test('a construct change (a label): exactly that field, on every Deployment; nothing written', () => {
    const before = versions();
    const mark = auditMark();
    const r = plan('--controllers', newVersion("JsonPatch.add('/spec/template/metadata/labels/team', 'a')"));
    expect(r.code).toBe(1);
    expect(r.plan.children).toEqual({ unchanged: 0, changed: N, created: 0, pruned: 0, refused: 0 });
    expect(r.plan.fieldChanges).toEqual([
      { kind: 'Deployment', field: 'spec.template.metadata.labels.team', change: 'added', count: N },
    ]);
    expect(r.plan.requests).toEqual({ lists: 2, dryRuns: N });
    expect(versions()).toEqual(before);
    // The audit log: its only write requests are the N dry runs.
    const writes = writesByAgent('(plan)', mark);
    expect(writes).toHaveLength(N);
    expect(writes.filter((w) => !w.requestURI.includes('dryRun=All'))).toEqual([]);
  });

  test('a change the API server would refuse is reported as refused, not applied', () => {
    const before = versions();
    const r = plan('--controllers', newVersion("JsonPatch.replace('/spec/replicas', -1)"));
    expect(r.code).toBe(1);
    expect(r.plan.children.refused).toBe(N);
    expect(r.plan.refused[0].message).toContain('spec.replicas');
    expect(versions()).toEqual(before);
  });
});
