/**
 * `cdk8s-operator-kit diff` against a real API server: what the reconciler would change, from
 * server-side apply dry runs, written nowhere.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCommand } from '../support/controllers-module';
import { eventually, kubectlOk, nodesRun } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';

jest.setTimeout(180_000);

let operator: OperatorUnderTest;

const memcached = (name: string, size: number) =>
  JSON.stringify({ apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name }, spec: { size } });

function diff(...args: string[]) {
  return runCommand(['diff', ...args]);
}

/**
 * The Deployment once its controller has finished writing its status for `replicas`: the
 * Deployment controller updates the status (so the resourceVersion) as pods are made and become
 * ready, and under load it does so well after the change that caused it. A test that compares
 * resourceVersions to show that `diff` wrote nothing must start after that.
 */
async function settledDeployment(name: string, replicas: number) {
  return eventually(`Deployment ${name} settled at ${replicas} replicas`, () => {
    const d = operator.get('deployment', name);
    const s = d?.status ?? {};
    const settled =
      s.observedGeneration === d?.metadata.generation &&
      s.replicas === replicas &&
      s.updatedReplicas === replicas &&
      (!nodesRun || s.availableReplicas === replicas);
    return settled ? d : undefined;
  });
}

function file(json: string): string {
  const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-diff-')), 'mc.yaml');
  fs.writeFileSync(f, json);
  return f;
}

beforeAll(async () => {
  operator = await startOperatorUnderTest({
    operator: 'memcached',
    controllers: 'memcached',
    crds: ['memcacheds.cache.example.com'],
  });
  kubectlOk(['apply', '-n', operator.ns, '-f', '-'], { input: memcached('mc', 2) });
  await eventually('its status', () => (operator.get('memcached', 'mc')?.status?.conditions ? true : undefined));
  await settledDeployment('mc', 2);
});

afterAll(async () => {
  await operator.reconciler.stop();
});

describe('diff', () => {
  test('a settled resource: every child unchanged, exit 0, nothing written', () => {
    const before = operator.get('deployment', 'mc').metadata.resourceVersion;
    const r = diff(`memcached/mc`, '-n', operator.ns);
    expect({ code: r.status, err: r.stderr }).toEqual({ code: 0, err: '' });
    expect(r.stdout).toContain(`unchanged Deployment ${operator.ns}/mc`);
    expect(operator.get('deployment', 'mc').metadata.resourceVersion).toBe(before);
  });

  test('a hand edit of a child: the change the reconciler would revert, as a unified diff, exit 1', async () => {
    // Stopped, so the edit stays for the diff to see.
    expect((await operator.reconciler.stop()).code).toBe(0);
    kubectlOk(['scale', 'deployment', 'mc', '-n', operator.ns, '--replicas=5']);
    const before = (await settledDeployment('mc', 5)).metadata.resourceVersion;
    const r = diff(`memcached/mc`, '-n', operator.ns);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`changed   Deployment ${operator.ns}/mc`);
    expect(r.stdout).toMatch(/^- {2}replicas: 5$/m);
    expect(r.stdout).toMatch(/^\+ {2}replicas: 2$/m);
    expect(operator.get('deployment', 'mc').metadata.resourceVersion).toBe(before);
  });

  test('a resource file: its spec against the live children, and a resource not yet there creates them', () => {
    const changed = diff(file(memcached('mc', 4)), '-n', operator.ns);
    expect(changed.status).toBe(1);
    expect(changed.stdout).toMatch(/^\+ {2}replicas: 4$/m);
    const fresh = diff(file(memcached('fresh', 1)), '-n', operator.ns);
    expect(fresh.status).toBe(1);
    expect(fresh.stdout).toContain(`created   Deployment ${operator.ns}/fresh`);
    expect(operator.get('memcached', 'fresh')).toBeUndefined();
    expect(operator.get('deployment', 'fresh')).toBeUndefined();
  });

  test('an error is exit 2, said in one line', () => {
    const r = diff('memcached/nope', '-n', operator.ns);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^cdk8s-operator-kit: diff: .*404/m);
  });
});
