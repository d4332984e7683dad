import * as fs from 'node:fs';
import * as path from 'node:path';
import { invalidMemcachedSpecs, memcachedWithSpec } from '../support/memcached-cases';
import { createTestNamespace, eventually, exists, getJson, kubectl, kubectlOk } from '../support/kube';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const SEEDS = path.join(ROOT, 'test', 'fixtures', 'seeds');
const OPERATOR_SA = 'system:serviceaccount:memcached-system:memcached-operator';

jest.setTimeout(120_000);

let ns: string;

beforeAll(() => {
  // What the README tells users to run, against a real API server.
  kubectlOk(['apply', '--server-side', '-f', DIST]);
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/memcacheds.cache.example.com']);
  ns = createTestNamespace('memcached-install');
});

describe('dist/ applied with kubectl to a real API server', () => {
  test('the CRD is Established and its names were accepted', () => {
    const crd = getJson(['get', 'crd', 'memcacheds.cache.example.com']);
    const conditions = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, c.status]));
    expect(conditions).toMatchObject({ Established: 'True', NamesAccepted: 'True' });
    expect(crd.status.acceptedNames).toMatchObject({ kind: 'Memcached', shortNames: ['mc'], categories: ['all'] });
  });

  test('applying dist/ again is a no-op (idempotent install)', () => {
    const out = kubectlOk(['apply', '--server-side', '-f', DIST]);
    expect(out).toMatch(/serverside-applied/);
    const diff = kubectl(['diff', '--server-side', '-f', DIST]);
    expect({ code: diff.code, diff: diff.stdout, stderr: diff.stderr }).toEqual({ code: 0, diff: '', stderr: '' });
  });

  test('the reconciler pod passes restricted Pod Security admission in its namespace', async () => {
    // The namespace enforces `restricted`; a non-compliant template would make the ReplicaSet
    // fail to create pods (FailedCreate). (With simulated nodes the pod is even "Running": kwok
    // runs no container, so this checks admission, not the image.)
    const pods = await eventually(
      'the reconciler pod',
      () => {
        const list = getJson(['get', 'pods', '-n', 'memcached-system', '-l', 'app.kubernetes.io/name=memcached']);
        return list.items.length === 1 ? list.items : undefined;
      },
      60_000,
    );
    expect(pods[0].spec.serviceAccountName).toBe('memcached-operator');
    const events = getJson(['get', 'events', '-n', 'memcached-system']);
    expect(events.items.filter((e: any) => e.reason === 'FailedCreate').map((e: any) => e.message)).toEqual([]);
  });

  test('the synthesized sample and every seed sample apply verbatim', () => {
    kubectlOk(['apply', '-n', ns, '-f', path.join(DIST, 'samples')]);
    for (const file of fs.readdirSync(SEEDS).filter((f) => /memcached.*\.yaml$/.test(f))) {
      const r = kubectl(['apply', '-n', ns, '-f', path.join(SEEDS, file)]);
      expect({ file, code: r.code, stderr: r.stderr }).toEqual({ file, code: 0, stderr: '' });
    }
    const sample = getJson(['get', 'memcached', 'memcached-sample', '-n', ns]);
    // Defaults are applied by the API server from the CRD schema.
    expect(sample.spec).toEqual({ size: 3, image: 'memcached:1.6', containerPort: 11211, memory: '64Mi' });
    // Served at both versions, each with its own schema: v1alpha1's maxMemoryMB is v1's memory.
    const asV1alpha1 = getJson(['get', 'memcacheds.v1alpha1.cache.example.com', 'example-memcached', '-n', ns]);
    expect(asV1alpha1.apiVersion).toBe('cache.example.com/v1alpha1');
    expect(asV1alpha1.spec).toEqual({ size: 3, image: 'memcached:1.6', containerPort: 11211, maxMemoryMB: 64 });
  });

  test('a v1alpha1 Memcached is stored as v1 through the conversion webhook, and a v1 quantity reads back exactly', () => {
    const v1alpha1 = {
      apiVersion: 'cache.example.com/v1alpha1',
      kind: 'Memcached',
      metadata: { name: 'converted' },
      spec: { size: 2, maxMemoryMB: 1536 },
    };
    kubectlOk(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(v1alpha1) });
    expect(getJson(['get', 'memcacheds.v1.cache.example.com', 'converted', '-n', ns]).spec).toMatchObject({
      size: 2,
      memory: '1536Mi',
    });
    kubectlOk([
      'patch',
      'memcacheds.v1.cache.example.com',
      'converted',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"memory":"1G"}}',
    ]);
    const down = getJson(['get', 'memcacheds.v1alpha1.cache.example.com', 'converted', '-n', ns]);
    expect(down.spec.maxMemoryMB).toBe(954);
    // Edited as v1alpha1 without touching the memory: v1 still says exactly 1G.
    kubectlOk([
      'patch',
      'memcacheds.v1alpha1.cache.example.com',
      'converted',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"size":3}}',
    ]);
    expect(getJson(['get', 'memcacheds.v1.cache.example.com', 'converted', '-n', ns]).spec).toMatchObject({
      size: 3,
      memory: '1G',
    });
  });

  test.each(invalidMemcachedSpecs)('the API server rejects %s, naming the field', (_what, spec, field) => {
    const r = kubectl(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(memcachedWithSpec('invalid', spec)) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(field);
    expect(r.stderr).toMatch(/invalid|Invalid|unknown field|not declared/);
  });

  test('kubectl get shows the printer columns; the short name and category work', () => {
    const out = kubectlOk(['get', 'mc', 'memcached-sample', '-n', ns]);
    const [header, row] = out.trim().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'SIZE', 'READY', 'AGE']);
    expect(row!.split(/\s+/).slice(0, 2)).toEqual(['memcached-sample', '3']);
    expect(kubectlOk(['get', 'all', '-n', ns, '-o', 'name'])).toContain('memcached.cache.example.com/memcached-sample');
  });

  test('kubectl scale works through the scale subresource', () => {
    kubectlOk(['scale', 'memcached', 'memcached-sample', '-n', ns, '--replicas=5']);
    expect(getJson(['get', 'memcached', 'memcached-sample', '-n', ns]).spec.size).toBe(5);
    const scale = JSON.parse(
      kubectlOk(['get', '--raw', `/apis/cache.example.com/v1/namespaces/${ns}/memcacheds/memcached-sample/scale`]),
    );
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 5 } });
    // The scale subresource enforces the schema too.
    const r = kubectl(['scale', 'memcached', 'memcached-sample', '-n', ns, '--replicas=11']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.size');
  });

  test('kubectl explain shows the field descriptions', () => {
    expect(kubectlOk(['explain', 'memcached.spec.size'])).toContain('Number of memcached pods');
    expect(kubectlOk(['explain', 'memcached.status.nodes'])).toContain('Names of the pods');
    expect(kubectlOk(['explain', 'memcached'])).toContain('memcached cluster kept at the requested size');
  });
});

describe('the operator ServiceAccount can do exactly what its controller needs', () => {
  const canI = (verb: string, resource: string, namespace?: string, subresource?: string) => {
    const args = ['auth', 'can-i', verb, resource, `--as=${OPERATOR_SA}`];
    if (namespace) args.push('-n', namespace);
    if (subresource) args.push(`--subresource=${subresource}`);
    return kubectl(args).stdout.trim();
  };

  // Objects, not arrays: jest takes a trailing parameter beyond a row's length for `done`.
  interface Access {
    verb: string;
    resource: string;
    namespace?: string;
    subresource?: string;
  }
  const allowed: Access[] = [
    { verb: 'watch', resource: 'memcacheds.cache.example.com', namespace: 'default' },
    { verb: 'list', resource: 'memcacheds.cache.example.com' },
    { verb: 'patch', resource: 'memcacheds.cache.example.com', namespace: 'default', subresource: 'status' },
    { verb: 'update', resource: 'memcacheds.cache.example.com', namespace: 'default', subresource: 'finalizers' },
    { verb: 'create', resource: 'deployments.apps', namespace: 'default' },
    { verb: 'patch', resource: 'deployments.apps', namespace: 'team-x' },
    { verb: 'watch', resource: 'pods', namespace: 'default' },
    { verb: 'create', resource: 'events.events.k8s.io', namespace: 'default' },
    { verb: 'update', resource: 'leases.coordination.k8s.io', namespace: 'memcached-system' },
  ];
  const where = (a: Access) =>
    `${a.subresource ? `/${a.subresource} ` : ''}${a.namespace ? `in ${a.namespace}` : 'cluster-wide'}`;
  test.each(allowed.map((a) => ({ ...a, where: where(a) })))('may $verb $resource $where', (a) => {
    expect(canI(a.verb, a.resource, a.namespace, a.subresource)).toBe('yes');
  });

  const denied: Access[] = [
    { verb: 'get', resource: 'secrets', namespace: 'default' },
    { verb: 'list', resource: 'secrets', namespace: 'memcached-system' },
    { verb: 'delete', resource: 'customresourcedefinitions.apiextensions.k8s.io' },
    { verb: 'create', resource: 'customresourcedefinitions.apiextensions.k8s.io' },
    { verb: 'delete', resource: 'deployments.apps', namespace: 'default' },
    { verb: 'delete', resource: 'memcacheds.cache.example.com', namespace: 'default' },
    { verb: 'update', resource: 'memcacheds.cache.example.com', namespace: 'default' },
    { verb: 'create', resource: 'pods', namespace: 'default' },
    { verb: 'create', resource: 'services', namespace: 'default' },
    { verb: 'create', resource: 'statefulsets.apps', namespace: 'default' },
    { verb: 'create', resource: 'clusterroles.rbac.authorization.k8s.io' },
    { verb: 'create', resource: 'rolebindings.rbac.authorization.k8s.io', namespace: 'memcached-system' },
    { verb: 'update', resource: 'leases.coordination.k8s.io', namespace: 'kube-system' },
    { verb: 'create', resource: 'events', namespace: 'default' },
  ];
  test.each(denied.map((a) => ({ ...a, where: where(a) })))('may not $verb $resource $where', (a) => {
    expect(canI(a.verb, a.resource, a.namespace)).toBe('no');
  });

  test('a SubjectAccessReview agrees with kubectl auth can-i', () => {
    const review = (verb: string, resource: string, group: string) =>
      JSON.parse(
        kubectlOk(['create', '-o', 'json', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: OPERATOR_SA,
              groups: ['system:serviceaccounts', 'system:serviceaccounts:memcached-system', 'system:authenticated'],
              resourceAttributes: { namespace: 'default', verb, group, resource },
            },
          }),
        }),
      ).status.allowed;
    expect(review('list', 'memcacheds', 'cache.example.com')).toBe(true);
    expect(review('get', 'secrets', '')).toBe(false);
  });
});

describe('garbage collection', () => {
  test('an owner-referenced child is deleted when its owner is deleted', async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(memcachedWithSpec('gc-owner', { size: 1 })) });
    const owner = getJson(['get', 'memcached', 'gc-owner', '-n', ns]);
    kubectlOk(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'gc-child',
          ownerReferences: [
            {
              apiVersion: 'cache.example.com/v1',
              kind: 'Memcached',
              name: 'gc-owner',
              uid: owner.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        data: { a: 'b' },
      }),
    });
    kubectlOk(['delete', 'memcached', 'gc-owner', '-n', ns, '--wait=false']);
    await eventually(
      'the child to be garbage-collected',
      () => (exists(['get', 'configmap', 'gc-child', '-n', ns]) ? undefined : true),
      60_000,
    );
  });
});
