/**
 * `cdk8s-operator-kit plan` against a real API server: what a new version of the controllers
 * would do to every Memcached, with no writes.
 */
import { auditMark, writesByAgent } from '../support/audit';
import { memcachedVersionPatching, runCommand } from '../support/controllers-module';
import { eventually, getJson, kubectlOk } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';

const N = 5;

jest.setTimeout(180_000);

let operator: OperatorUnderTest;

function plan(...args: string[]) {
  const r = runCommand(['plan', '--kind', 'Memcached', '-n', operator.ns, '-o', 'json', ...args]);
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
      children: { unchanged: N, changed: 0, created: 0, held: 0, pruned: 0, refused: 0 },
      fieldChanges: [],
      requests: { dryRuns: 0 },
    });
    expect(versions()).toEqual(before);
  });

  test('a construct change (a label): exactly that field, on every Deployment; nothing written', () => {
    const before = versions();
    const mark = auditMark();
    const r = plan(
      '--controllers',
      memcachedVersionPatching("JsonPatch.add('/spec/template/metadata/labels/team', 'a')"),
    );
    expect(r.code).toBe(1);
    expect(r.plan.children).toEqual({ unchanged: 0, changed: N, created: 0, held: 0, pruned: 0, refused: 0 });
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
    const r = plan('--controllers', memcachedVersionPatching("JsonPatch.replace('/spec/replicas', -1)"));
    expect(r.code).toBe(1);
    expect(r.plan.children.refused).toBe(N);
    expect(r.plan.refused[0].message).toContain('spec.replicas');
    expect(versions()).toEqual(before);
  });
});
