import { App } from 'cdk8s';
import {
  BuiltinTypes,
  CronTabOperator,
  conditionsSchema,
  CustomResourceKind,
  EtcdClusterOperator,
  memcachedController,
  MemcachedOperator,
  Operator,
  type OperatorProps,
  t,
} from '../../../constructs';
import { englishPlural } from '../../../constructs/core/kind';
import { parseImageReference } from '../../../constructs/core/image-reference';
import { metricsAuthRules } from '../../../constructs/core/rbac';

function operatorWith(props: Partial<OperatorProps>, name = 'memcached') {
  return () => new Operator(new App(), name, { controllers: [memcachedController], ...props });
}

describe('Operator props are validated at synth, with a message saying how to fix them', () => {
  const cases: [string, () => unknown, RegExp][] = [
    ['an upper-case name', operatorWith({ name: 'Memcached' }), /name must be a lower-case DNS label/],
    ['a name too long for its suffixes', operatorWith({ name: 'a'.repeat(41) }), /at most 40 characters/],
    [
      'a namespace with underscores',
      operatorWith({ namespace: 'my_ns' }),
      /namespace "my_ns" must be a lower-case DNS label/,
    ],
    ['a bad watchNamespace', operatorWith({ watchNamespace: 'Team A' }), /watchNamespace "Team A"/],
    ['zero replicas', operatorWith({ replicas: 0 }), /replicas must be a whole number of at least 1/],
    [
      'two replicas without leader election',
      operatorWith({ replicas: 2, leaderElection: false }),
      /set leaderElection: true or replicas: 1/,
    ],
    [
      'zero concurrent reconciles',
      operatorWith({ maxConcurrentReconciles: 0 }),
      /maxConcurrentReconciles must be a whole number from 1 to 100/,
    ],
    ['a privileged port', operatorWith({ metricsPort: 80 }), /metricsPort must be a whole number from 1024 to 65535/],
    ['the same port twice', operatorWith({ metricsPort: 9000, healthPort: 9000 }), /give them different ports/],
    ['an upper-case repository', operatorWith({ image: 'Reconciler' }), /"Reconciler" is not an image reference/],
    ['a tag twice', operatorWith({ image: 'repo/img:1.0', imageTag: '0.1.0' }), /already names a tag; drop imageTag/],
    ['a malformed digest', operatorWith({ image: 'repo/img@sha256:abc' }), /is not an image reference/],
    ['a bad image tag', operatorWith({ image: 'repo/img', imageTag: 'v1/beta' }), /imageTag "v1\/beta" is not a tag/],
    [
      "a controller the kit's image does not contain",
      operatorWith({ controllers: [{ ...memcachedController, name: 'redis', image: undefined }] }),
      /the kit's image runs only its own controllers .* not redis; build an image/,
    ],
    [
      'a bad quantity',
      operatorWith({ resources: { memoryLimit: '256MB' } }),
      /resources.memoryLimit "256MB" is not a Kubernetes quantity/,
    ],
    [
      'an unknown log level',
      operatorWith({ logLevel: 'verbose' as never }),
      /logLevel must be one of debug, info, warn, error/,
    ],
    ['no controllers', operatorWith({ controllers: [] }), /give at least one controller/],
    ['a controller twice', operatorWith({ controllers: [memcachedController, memcachedController] }), /listed twice/],
    [
      'deleting what it does not own',
      operatorWith({ controllers: [{ ...memcachedController, deletes: [BuiltinTypes.Secret] }] }),
      /add Secret to owns/,
    ],
  ];
  test.each(cases)('rejects %s', (_what, build, message) => {
    expect(build).toThrow(message);
  });

  test("image references: a tag or digest in image is used as given; otherwise imageTag (or the kit's) is added", () => {
    const imageOf = (props: Partial<OperatorProps>) => {
      const app = new App();
      new Operator(app, 'memcached', { controllers: [memcachedController], ...props });
      return app.charts.flatMap((c) => c.toJson()).find((d) => d.kind === 'Deployment').spec.template.spec.containers[0]
        .image;
    };
    expect(imageOf({ image: 'repo/img:1.0' })).toBe('repo/img:1.0');
    expect(imageOf({ image: 'registry.example.com:5000/team/img', imageTag: '2.1' })).toBe(
      'registry.example.com:5000/team/img:2.1',
    );
    const digest = `ghcr.io/acme/op@sha256:${'a'.repeat(64)}`;
    expect(imageOf({ image: digest })).toBe(digest);
    expect(imageOf({})).toBe('cdk8s-operator-kit/reconciler:0.1.0');
    expect(parseImageReference('localhost:5000/op:dev')).toEqual({
      registry: 'localhost:5000',
      repository: 'op',
      tag: 'dev',
      digest: undefined,
    });
    expect(parseImageReference('library/nginx')).toEqual({
      registry: undefined,
      repository: 'library/nginx',
      tag: undefined,
      digest: undefined,
    });
  });

  test('two operators of one name, or two of one kind, are refused', () => {
    const app = new App();
    new MemcachedOperator(app, 'cache');
    expect(() => new EtcdClusterOperator(app, 'etcd', { name: 'cache' })).toThrow(
      /another operator \(cache\/cache\) already has this name/,
    );
    expect(() => new MemcachedOperator(app, 'cache-2')).toThrow(/CRD memcacheds.cache.example.com is already defined/);
  });

  test('valid settings synthesize', () => {
    const app = new App();
    const op = new MemcachedOperator(app, 'cache', {
      namespace: 'ops',
      replicas: 2,
      imageTag: '1.2.3',
      resources: { memoryLimit: '512Mi' },
    });
    expect(op.deployment.name).toBe('cache-operator');
    expect(() => app.synthYaml()).not.toThrow();
  });

  test('watchNamespace turns the ClusterRole into a Role in that namespace', () => {
    const app = new App();
    new MemcachedOperator(app, 'memcached', { watchNamespace: 'team-a' });
    const docs = app.charts.flatMap((c) => c.toJson());
    // Cluster-wide, only what the secure /metrics endpoint needs: reviews of tokens and access.
    expect(
      docs.filter((d) => d.kind === 'ClusterRole' && d.metadata.name === 'memcached-manager-role').map((d) => d.rules),
    ).toEqual([metricsAuthRules()]);
    const role = docs.find((d) => d.kind === 'Role' && d.metadata.name === 'memcached-manager-role');
    expect(role.metadata.namespace).toBe('team-a');
    expect(role.rules.length).toBeGreaterThan(0);
    const dep = docs.find((d) => d.kind === 'Deployment');
    expect(dep.spec.template.spec.containers[0].args).toContain('--namespace=team-a');
  });

  test('metricsSecure: false leaves no cluster-wide grant with watchNamespace, and serves plain HTTP', () => {
    const app = new App();
    // CronTab: a kind without conversions (their CRD, cluster-scoped, is granted by name; below).
    new CronTabOperator(app, 'crontab', { watchNamespace: 'team-a', metricsSecure: false });
    const docs = app.charts.flatMap((c) => c.toJson());
    expect(docs.filter((d) => d.kind === 'ClusterRole')).toEqual([]);
    expect(docs.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].args).toContain(
      '--metrics-secure=false',
    );
    expect(docs.find((d) => d.kind === 'Service').spec.ports[0].name).toBe('http');
  });

  test('with watchNamespace, the only cluster-wide grant of a converting kind is its own CRD, by name', () => {
    const app = new App();
    new MemcachedOperator(app, 'memcached', { watchNamespace: 'team-a', metricsSecure: false });
    const docs = app.charts.flatMap((c) => c.toJson());
    const rules = docs.filter((d) => d.kind === 'ClusterRole').flatMap((d) => d.rules);
    expect(rules).toEqual([
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: ['memcacheds.cache.example.com'],
        verbs: ['get', 'patch'],
      },
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions/status'],
        resourceNames: ['memcacheds.cache.example.com'],
        verbs: ['patch'],
      },
    ]);
  });
});

describe('custom kinds are validated when defined', () => {
  const spec = t.object({ size: t.integer({ required: true }) });
  const status = t.object({ ready: t.integer() });
  const base = { group: 'cache.example.com', kind: 'Thing', versions: ['v1'], description: 'A thing.', spec, status };
  const cases: [string, object, RegExp][] = [
    ['a group without a dot', { group: 'cache' }, /must be a lower-case DNS subdomain with at least one dot/],
    ['a lower-case kind', { kind: 'thing' }, /kind must be CamelCase/],
    ['no versions', { versions: [] }, /give at least one version/],
    ['a malformed version', { versions: ['1.0'] }, /is not a Kubernetes API version/],
    ['a storage version not served', { storageVersion: 'v2' }, /must be one of the served versions/],
    [
      'a scale path to a missing field',
      { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.ready' } },
      /names no field of the schema/,
    ],
    [
      'a scale path to a string',
      {
        spec: t.object({ size: t.string() }),
        scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.ready' },
      },
      /must be of type integer/,
    ],
    [
      'a printer column to nowhere',
      { printerColumns: [{ name: 'X', type: 'string', jsonPath: '.spec.nothing' }] },
      /printer column "X"/,
    ],
    ['an upper-case short name', { shortNames: ['TH'] }, /short name "TH"/],
    [
      'a non-structural schema',
      { spec: { json: { type: 'object', properties: { x: {} } }, present: true } },
      /not structural[\s\S]*\.spec\.x: has no type/,
    ],
  ];
  test.each(cases)('rejects %s', (_what, override, message) => {
    expect(() => new CustomResourceKind({ ...base, ...override })).toThrow(message);
  });
});

test('a printer column may show a condition through the JSONPath filter kubectl evaluates; a wrong step is named', () => {
  const column = (jsonPath: string) => () =>
    new CustomResourceKind({
      group: 'cache.example.com',
      kind: 'Thing',
      versions: ['v1'],
      description: 'A thing.',
      spec: t.object({ size: t.integer() }),
      status: t.object({ conditions: conditionsSchema('Ready.') }),
      printerColumns: [{ name: 'Ready', type: 'string', jsonPath }],
    });
  expect(column('.status.conditions[?(@.type=="Ready")].status')).not.toThrow();
  expect(column('.status.conditions[0].reason')).not.toThrow();
  expect(column('.status.conditions[*].type')).not.toThrow();
  expect(column('.status.conditions[?(@.kind=="Ready")].status')).toThrow(
    /filters on "kind", which the list's items do not have/,
  );
  expect(column('.spec.size[0]')).toThrow(/applies \[0\] to a field that is not a list/);
  expect(column('.status.conditions[?(@.type=="Ready")].nope')).toThrow(/names no field "nope"/);
  expect(column('.status.conditions[?(@.type=Ready)]')).toThrow(/cannot be read at/);
});

test('default plurals follow English, and are required where English is in doubt', () => {
  expect(
    ['Memcached', 'EtcdCluster', 'Redis', 'Box', 'Policy', 'Gateway', 'Match', 'Database'].map(englishPlural),
  ).toEqual(['memcacheds', 'etcdclusters', 'redises', 'boxes', 'policies', 'gateways', 'matches', 'databases']);
  expect(() => englishPlural('Proxy')).not.toThrow();
  expect(() => englishPlural('Analysis')).toThrow(/set plural explicitly/);
  expect(() => englishPlural('Leaf')).toThrow(/words ending in "f" vary/);
  expect(() => englishPlural('Potato')).toThrow(/set plural explicitly/);
});
