/**
 * Operators scoped to the namespaces they serve (`watchNamespaces`), against the real API
 * server: what each kit operator's token may write outside its namespaces, cluster-wide against
 * scoped (`kubectl auth can-i` as its ServiceAccount; docs/security.md's blast-radius table), and
 * a scoped Memcached reconciler that lists, watches and reconciles in its namespaces only.
 */
import { Testing } from 'cdk8s';
import { MemcachedOperator, type OperatorOptions } from '../../constructs';
import { KIT_OPERATORS, type MakeOperator } from '../support/kit-operators';
import { createTestNamespace, eventually, exists, getJson, installDist, kubectl, kubectlOk } from '../support/kube';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';
import type { K8sObject } from '../support/synth';

jest.setTimeout(180_000);

const suffix = Math.random().toString(36).slice(2, 6);
/** What the API server stores that an operator might write: every namespaced kind, by resource. */
let namespacedResources: string[];
let served: string[];
let other: string;
const cleanup: string[][] = [];

/** The operator's RBAC and ServiceAccount, applied under a name of its own; its ServiceAccount user. */
function applyRbac(name: string, make: MakeOperator, options: OperatorOptions): string {
  const chart = Testing.chart();
  make(chart, name, options);
  const kinds = ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'];
  const objects = (Testing.synth(chart) as K8sObject[]).filter((o) => kinds.includes(o.kind));
  kubectlOk(['apply', '--server-side', '-f', '-'], { input: objects.map((o) => JSON.stringify(o)).join('\n') });
  for (const o of objects.filter((x) => !x.metadata.namespace))
    cleanup.push(['delete', o.kind.toLowerCase(), o.metadata.name, '--ignore-not-found', '--wait=false']);
  return `system:serviceaccount:${name}-system:${name}-operator`;
}

/**
 * The kinds `user` may create, update, patch or delete in `namespace`, as the API server's
 * authorizer lists its rules there (`kubectl auth can-i --list`), subresources by their kind.
 */
function writable(user: string, namespace: string): string[] {
  const lines = kubectlOk(['auth', 'can-i', '--list', '-n', namespace, `--as=${user}`])
    .split('\n')
    .slice(1);
  const kinds = new Set<string>();
  for (const line of lines) {
    const m = /^(\S+)\s+\[.*\]\s+\[.*\]\s+\[(.*)\]\s*$/.exec(line);
    if (!m) continue;
    const [, resource = '', verbs = ''] = m;
    const kind = resource.split('/')[0]!;
    if (!namespacedResources.includes(kind)) continue;
    if (verbs.split(' ').some((v) => ['create', 'update', 'patch', 'delete', '*'].includes(v))) kinds.add(kind);
  }
  return [...kinds].sort();
}

beforeAll(() => {
  // The kit's CRDs, so that their kinds count among what an operator may write.
  installDist();
  served = [createTestNamespace('served'), createTestNamespace('served')];
  other = createTestNamespace('other');
  namespacedResources = kubectlOk(['api-resources', '--namespaced=true', '--verbs=create', '-o', 'name'])
    .split('\n')
    .map((r) => r.trim())
    .filter(Boolean)
    // Reviews are questions asked of the API server, not objects it stores.
    .filter((r) => !r.includes('review'));
});

afterAll(() => {
  for (const args of cleanup) kubectl(args);
});

describe.each(KIT_OPERATORS)('the %s operator', (kit, make) => {
  test('scoped: its token can write nothing outside its namespaces; cluster-wide: everywhere', () => {
    const scoped = applyRbac(`${kit}-scoped-${suffix}`, make, { watchNamespaces: served });
    const wide = applyRbac(`${kit}-wide-${suffix}`, make, {});
    const inServed = writable(scoped, served[0]!);
    expect(inServed.length).toBeGreaterThan(0);
    expect(writable(scoped, served[1]!)).toEqual(inServed);
    // Outside: only what it needs in its own namespace (the leader Lease, Events of it).
    expect({ other: writable(scoped, other), kubeSystem: writable(scoped, 'kube-system') }).toEqual({
      other: [],
      kubeSystem: [],
    });
    // The same operator unscoped may write the same kinds in kube-system.
    const wideInKubeSystem = writable(wide, 'kube-system');
    expect(wideInKubeSystem).toEqual(expect.arrayContaining(inServed));
    process.stdout.write(
      `[blast radius] ${kit}: cluster-wide may write ${wideInKubeSystem.length} kinds in kube-system (${wideInKubeSystem.join(', ')}); scoped to ${served.length} namespaces, 0 outside them\n`,
    );
  });
});

describe('a scoped Memcached reconciler', () => {
  let reconciler: ReconcilerProcess;
  const name = `memcached-scoped-${suffix}`;

  beforeAll(async () => {
    applyRbac(name, (s, id, o) => new MemcachedOperator(s, id, o), { watchNamespaces: served });
    reconciler = await ReconcilerProcess.start({
      kubeconfig: serviceAccountKubeconfig({ namespace: `${name}-system`, serviceAccount: `${name}-operator` }),
      args: ['--controllers=memcached', `--namespaces=${served.join(',')}`],
      name: 'scoped',
    });
    for (const ns of [...served, other]) {
      kubectlOk(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'cache.example.com/v1',
          kind: 'Memcached',
          metadata: { name: 'm' },
          spec: { size: 1 },
        }),
      });
    }
  });

  afterAll(async () => {
    expect((await reconciler?.stop())?.code).toBe(0);
  });

  test('it became ready with rights in its namespaces alone, and reconciles in each', async () => {
    for (const ns of served) {
      await eventually(`the Memcached in ${ns} to get its Deployment and status`, () => {
        const status = getJson(['get', 'memcached', 'm', '-n', ns, '-o', 'json']).status;
        const deployment = exists(['get', 'deployment', 'm', '-n', ns]);
        return status?.observedGeneration && deployment ? true : undefined;
      });
    }
  });

  test('it leaves the Memcached of a namespace it does not serve alone, and never asked for it', async () => {
    // Both served resources are done; the reconciler has had every event the other one made.
    // As created: the CRD's default status (observedGeneration 0), nothing the reconciler wrote.
    expect(getJson(['get', 'memcached', 'm', '-n', other, '-o', 'json']).status).toEqual({ observedGeneration: 0 });
    expect(exists(['get', 'deployment', 'm', '-n', other])).toBe(false);
    // The time is left out: a timestamp's milliseconds (…:36.403Z) once read as a 403.
    const denied = (line: string) => /forbidden|\b403\b/i.test(line.replace(/"time":"[^"]*"/, ''));
    expect(reconciler.logs.filter(denied)).toEqual([]);
    expect(await reconciler.metric('opkit_watch_restarts_total', { reason: 'error' })).toBe(0);
  });
});
