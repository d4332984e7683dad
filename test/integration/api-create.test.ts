/**
 * The suite's `kubectl create … -f -` of one object is sent as a request (test/support/api-create.ts):
 * here each form the tests use is made both ways — by the real kubectl and by the request — and
 * the answers compared, exit code, output and refusal, and the forms it does not take are shown to
 * be left to kubectl.
 */
import { apiCreate, apiCreateAsync } from '../support/api-create';
import { createTestNamespace, getJson, getJsonIfExists, kubectlOk, realKubectl, testKubeconfig } from '../support/kube';

const GROUP = 'api-create.example.com';
const CRD = `sizes.${GROUP}`;
let ns: string;

beforeAll(() => {
  ns = createTestNamespace('api-create');
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'sizes', singular: 'size', kind: 'Size' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    count: { type: 'integer', minimum: 1 },
                    label: { type: 'string', pattern: '^[a-z]+$' },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(crd) });
  kubectlOk(['wait', '--for=condition=established', `crd/${CRD}`]);
});

afterAll(() => {
  realKubectl(['delete', 'namespace', ns, '--wait=false']);
  realKubectl(['delete', 'crd', CRD, '--wait=false']);
});

const size = (name: string, spec: object, namespace?: string) =>
  JSON.stringify({
    apiVersion: `${GROUP}/v1`,
    kind: 'Size',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec,
  });

/** The request's answer to `args` (it must take the form) and the real kubectl's. */
function bothWays(args: (name: string) => string[], input: (name: string) => string, names: [string, string]) {
  const byRequest = apiCreate(args(names[0]), input(names[0]), testKubeconfig());
  expect(byRequest).toBeDefined();
  const byKubectl = realKubectl(args(names[1]), { input: input(names[1]) });
  return { byRequest: byRequest!, byKubectl };
}

test('a valid object: created, and said so as kubectl says it (a core type, and a custom one named by -n or by its metadata)', () => {
  const configMap = (name: string) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
  const core = bothWays(() => ['create', '-n', ns, '-f', '-'], configMap, ['cm-request', 'cm-kubectl']);
  expect(core.byRequest).toEqual({ code: 0, stdout: 'configmap/cm-request created\n', stderr: '' });
  expect(core.byKubectl).toEqual({ code: 0, stdout: 'configmap/cm-kubectl created\n', stderr: '' });
  expect(getJson(['get', 'configmap', 'cm-request', '-n', ns]).data).toEqual({ a: '1' });

  const custom = bothWays(
    () => ['create', '-f', '-'],
    (name) => size(name, { count: 2 }, ns),
    ['s-request', 's-kubectl'],
  );
  expect(custom.byKubectl.stdout).toBe(`size.${GROUP}/s-kubectl created\n`);
  expect(custom.byRequest.stdout).toBe(`size.${GROUP}/s-request created\n`);
  expect(getJson(['get', `sizes.${GROUP}`, 's-request', '-n', ns]).spec).toEqual({ count: 2 });
});

test('--dry-run=server: the server answers, nothing is stored; -o json prints the object made', () => {
  const dry = bothWays(
    () => ['create', '--dry-run=server', '-n', ns, '-f', '-'],
    (name) => size(name, { count: 3 }),
    ['dry-request', 'dry-kubectl'],
  );
  expect(dry.byRequest).toEqual({
    code: 0,
    stdout: `size.${GROUP}/dry-request created (server dry run)\n`,
    stderr: '',
  });
  expect(dry.byKubectl).toEqual({
    code: 0,
    stdout: `size.${GROUP}/dry-kubectl created (server dry run)\n`,
    stderr: '',
  });
  expect(getJsonIfExists(['get', `sizes.${GROUP}`, 'dry-request', '-n', ns])).toBeUndefined();

  const json = bothWays(
    () => ['create', '-n', ns, '-o', 'json', '-f', '-'],
    (name) => size(name, { count: 4 }),
    ['json-request', 'json-kubectl'],
  );
  const made = [json.byRequest, json.byKubectl].map((r) => JSON.parse(r.stdout));
  expect(made.map((o) => [o.kind, o.metadata.name, o.metadata.namespace, o.spec, !!o.metadata.uid])).toEqual([
    ['Size', 'json-request', ns, { count: 4 }, true],
    ['Size', 'json-kubectl', ns, { count: 4 }, true],
  ]);
});

test.each([
  ['out of range', { count: 0 }, 'spec.count'],
  ['a pattern missed', { label: 'UPPER' }, 'spec.label'],
  ['of the wrong type', { count: 'two' }, 'spec.count'],
  ['an unknown field (strict field validation, as kubectl asks)', { colour: 'red' }, 'spec.colour'],
  ['wrong in two fields', { count: 0, label: 'UPPER' }, 'spec.label'],
])('an object %s is refused naming the field, the same words both ways', (_what, spec, field) => {
  const r = bothWays(
    () => ['create', '-n', ns, '-f', '-'],
    (name) => size(name, spec),
    ['bad', 'bad'],
  );
  expect(r.byKubectl.code).not.toBe(0);
  expect(r.byKubectl.stderr).toContain(field);
  // Several causes come in the server's order, which varies from one request to the next.
  const lines = (text: string) => text.split('\n').sort();
  expect({ ...r.byRequest, stderr: lines(r.byRequest.stderr) }).toEqual({
    code: 1,
    stdout: '',
    stderr: lines(r.byKubectl.stderr),
  });
});

test('an object that exists already is refused as kubectl refuses it', () => {
  kubectlOk(['create', '-n', ns, '-f', '-'], { input: size('taken', { count: 1 }) });
  const r = bothWays(
    () => ['create', '-n', ns, '-f', '-'],
    (name) => size(name, { count: 1 }),
    ['taken', 'taken'],
  );
  expect(r.byKubectl.stderr).toContain('AlreadyExists');
  expect(r.byRequest).toEqual({ code: 1, stdout: '', stderr: r.byKubectl.stderr });
});

test.each([
  ['YAML on stdin', ['create', '-n', 'x', '-f', '-'], 'kind: ConfigMap\napiVersion: v1\n'],
  ['a List', ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [] })],
  ['a file', ['create', '-f', 'dist/'], undefined],
  ['a generator', ['create', 'configmap', 'x'], undefined],
  ['another flag', ['create', '--save-config', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap' })],
  [
    'a kind not served',
    ['create', '-f', '-'],
    JSON.stringify({ apiVersion: 'nowhere.example.com/v1', kind: 'Nothing' }),
  ],
  [
    'two different namespaces',
    ['create', '-n', 'one', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'two' } }),
  ],
])('%s is left to kubectl', (_what, args, input) => {
  expect(apiCreate(args, input, testKubeconfig())).toBeUndefined();
});

test('kubectlAsync sends the same request and gives the same answer, this thread free while the server answers', async () => {
  const args = ['create', '-n', ns, '-f', '-'];
  const sync = apiCreate(args, size('async-bad', { count: 0 }), testKubeconfig());
  let ticks = 0;
  const ticking = setInterval(() => ticks++, 0);
  const [refused, made] = await Promise.all([
    apiCreateAsync(args, size('async-bad', { count: 0 }), testKubeconfig()),
    apiCreateAsync(args, size('async-made', { count: 5 }), testKubeconfig()),
  ]);
  clearInterval(ticking);
  expect(refused).toEqual(sync);
  expect(made).toEqual({ code: 0, stdout: `size.${GROUP}/async-made created\n`, stderr: '' });
  expect(getJson(['get', `sizes.${GROUP}`, 'async-made', '-n', ns]).spec).toEqual({ count: 5 });
  expect(ticks).toBeGreaterThan(0);
  expect(apiCreateAsync(['create', 'configmap', 'x'], undefined, testKubeconfig())).toBeUndefined();
});
