/**
 * `shards` on the Operator construct: one reconciler pod per shard (more stand by), each told the
 * count, leader election with the right to list the shard Leases, refused where sharding cannot
 * hold; and its Helm chart renders the same. That the pods share the work out is the integration
 * test's (test/integration/sharding.test.ts).
 */
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { MemcachedOperator, memcachedController, type OperatorOptions, writeHelmChart } from '../../../constructs';
import { helmBinary, helmOk } from '../../support/helm';
import { find, type K8sObject, one, parseYaml } from '../../support/synth';
import { tempDir } from '../../support/temp-dir';

function memcached(options: OperatorOptions): K8sObject[] {
  const chart = Testing.chart();
  new MemcachedOperator(chart, 'memcached', options);
  return Testing.synth(chart) as K8sObject[];
}

const deployment = (objects: K8sObject[]) => one(objects, 'Deployment', 'memcached-operator');
const argsOf = (objects: K8sObject[]) => deployment(objects).spec.template.spec.containers[0].args as string[];
const leaseVerbs = (objects: K8sObject[]) =>
  (find(objects, 'Role', 'memcached-leader-election-role')[0]!.rules as { resources: string[]; verbs: string[] }[])
    .filter((r) => r.resources.includes('leases'))
    .flatMap((r) => r.verbs);

describe('shards', () => {
  test('a pod per shard, each told the count, with leader election; the shard Leases listable', () => {
    const objects = memcached({ shards: 4 });
    expect(deployment(objects).spec.replicas).toBe(4);
    expect(argsOf(objects)).toEqual(expect.arrayContaining(['--shards=4', '--leader-elect']));
    expect(leaseVerbs(objects)).toEqual(['get', 'list', 'create', 'update']);
  });

  test('more replicas than shards stand by; without shards nothing changes (no flag, no list right)', () => {
    expect(deployment(memcached({ shards: 2, replicas: 3 })).spec.replicas).toBe(3);
    const plain = memcached({});
    expect(argsOf(plain).some((a) => a.startsWith('--shards'))).toBe(false);
    expect(leaseVerbs(plain)).toEqual(['get', 'create', 'update']);
    expect(memcached({ shards: 1 })).toEqual(plain);
  });

  test('goes with watchNamespaces: the reconciler shares out the namespaces it serves', () => {
    expect(argsOf(memcached({ shards: 2, watchNamespaces: ['a', 'b'] }))).toEqual(
      expect.arrayContaining(['--shards=2', '--namespaces=a,b']),
    );
  });

  test.each([
    [{ shards: 0 }, /shards must be a whole number of at least 1, got 0/],
    [{ shards: 2.5 }, /shards must be a whole number/],
    [{ shards: 3, replicas: 2 }, /replicas \(2\) is fewer than shards \(3\)/],
    [{ shards: 2, leaderElection: false }, /2 replicas without leader election|shards need leader election/],
    [{ shards: 2, admissionWebhooks: true }, /shards and admissionWebhooks do not go together/],
  ])('refused, saying why: %j', (options, message) => {
    expect(() => memcached(options as OperatorOptions)).toThrow(message);
  });
});

const { missing } = helmBinary();
(missing ? describe.skip : describe)('the Helm chart of a sharded operator', () => {
  test('renders a pod per shard and the flag; replicaCount adds standbys; without leader election, one unsharded pod', () => {
    const chart = path.join(tempDir('opkit-chart-'), 'memcached-operator');
    writeHelmChart(chart, { operator: { name: 'memcached', controllers: [memcachedController], shards: 2 } });
    const render = (set: string[]) =>
      parseYaml(helmOk(['template', 'r', chart, '-n', 'ops', ...set.flatMap((s) => ['--set', s])]));
    const sharded = render([]);
    expect(deployment(sharded).spec.replicas).toBe(2);
    expect(argsOf(sharded)).toContain('--shards=2');
    expect(deployment(render(['replicaCount=3'])).spec.replicas).toBe(3);
    // Fewer pods than shards would leave a range unreconciled: the values schema refuses it.
    expect(() => render(['replicaCount=1'])).toThrow(/replicaCount.*minimum/s);
    // The chart's schema holds an unelected operator to one replica, as the construct does.
    const single = render(['leaderElection.enabled=false', 'replicaCount=1']);
    expect(deployment(single).spec.replicas).toBe(1);
    expect(argsOf(single).some((a) => a.startsWith('--shards') || a === '--leader-elect')).toBe(false);
  });
});
