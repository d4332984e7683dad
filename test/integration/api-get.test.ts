/**
 * The suite's reads (`getJson`) go to the API directly where that answers as `kubectl get -o json`
 * does (test/support/api-get.ts): here each form they use is read both ways and compared, and the
 * forms it does not take are shown to be left to kubectl. Two helpers write that way too (a test's
 * namespace, a ServiceAccount's token): what they make is checked with kubectl.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { apiGet } from '../support/api-get';
import {
  createTestNamespace,
  kubeconfigCluster,
  kubectl,
  kubectlOk,
  serviceAccountToken,
  testKubeconfig,
} from '../support/kube';

let ns: string;

/**
 * Two groups serving `twins` (kind Twin), one object of it in each: which one kubectl picks is told
 * by its group. A third, ranked before them, names its kind Twin too, but its resource `kindtwins`.
 */
const TWIN_GROUPS = ['zz-twins.api-get.example.com', 'mm-twins.api-get.example.com'];
const KIND_TWIN_GROUP = 'aa-kind-twins.api-get.example.com';
const TWIN_CRDS = [...TWIN_GROUPS.map((g) => `twins.${g}`), `kindtwins.${KIND_TWIN_GROUP}`];

function twinCrd(group: string, plural = 'twins'): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind: 'Twin' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

beforeAll(() => {
  ns = createTestNamespace('api-get');
  for (const name of ['a', 'b']) kubectlOk(['create', 'configmap', name, '-n', ns, `--from-literal=name=${name}`]);
  kubectlOk(['label', 'configmap', 'a', '-n', ns, 'tier=front']);
  for (const crd of [...TWIN_GROUPS.map((g) => twinCrd(g)), twinCrd(KIND_TWIN_GROUP, 'kindtwins')])
    kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(crd) });
  kubectlOk(['wait', '--for=condition=established', ...TWIN_CRDS.map((c) => `crd/${c}`)]);
  for (const group of TWIN_GROUPS)
    kubectlOk(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Twin', metadata: { name: group.split('.')[0] } }),
    });
});

afterAll(() => {
  kubectl(['delete', 'namespace', ns, '--wait=false']);
  kubectl(['delete', 'crd', ...TWIN_CRDS, '--wait=false']);
});

/** What a list or object says that the tests read: kinds, versions, names, data. */
function gist(json: string): unknown {
  const parsed = JSON.parse(json) as Record<string, any>;
  const one = (o: Record<string, any>) => [o.apiVersion, o.kind, o.metadata?.namespace, o.metadata?.name, o.data];
  return parsed.items ? [parsed.kind, parsed.items.map(one)] : one(parsed);
}

function bothWays(args: string[]): { api: unknown; kubectl: unknown } {
  const api = apiGet(args, testKubeconfig());
  const real = kubectl([...args, '-o', 'json']);
  expect(api).toBeDefined();
  expect(api!.code).toBe(real.code);
  return api!.code === 0
    ? { api: gist(api!.stdout), kubectl: gist(real.stdout) }
    : { api: api!.stderr.trim(), kubectl: real.stderr.trim() };
}

test.each([
  ['an object by name', ['get', 'configmap', 'a', '-n', '$ns']],
  ['a list in a namespace, by short name', ['get', 'cm', '-n', '$ns']],
  ['a list by label selector, kind spelled as a Kind', ['get', 'ConfigMap', '-n', '$ns', '-l', 'tier=front']],
  ['a cluster-scoped object', ['get', 'namespace', '$ns']],
  ['a type named with its group', ['get', 'events.events.k8s.io', '-n', '$ns']],
  ['a type named with its version and group', ['get', 'deployments.v1.apps', '-n', '$ns']],
  ['a name in the core group and another (core wins)', ['get', 'events', '-n', '$ns']],
  ['a custom resource definition', ['get', 'crd', 'memcacheds.cache.example.com']],
  ['an object that is not there', ['get', 'configmap', 'missing', '-n', '$ns']],
  ['a list by field selector', ['get', 'configmaps', '-n', '$ns', '--field-selector', 'metadata.name=b']],
  ['an object asked for as -o json', ['get', 'configmap', 'a', '-n', '$ns', '-o', 'json']],
  ['a name two custom groups serve (kubectl picks one by discovery order)', ['get', 'twins', '-n', '$ns']],
  ['an object of a kind two groups serve, by its singular', ['get', 'twin', 'mm-twins', '-n', '$ns']],
  ['a kind three groups share, two of them as a resource name', ['get', 'twin', 'zz-twins', '-n', '$ns']],
])('%s reads as kubectl prints it', (_, template) => {
  const args = template.map((a) => a.replace('$ns', ns));
  const { api, kubectl: real } = bothWays(args);
  expect(api).toEqual(real);
});

test('every namespace (-A) lists the same objects as kubectl', () => {
  const names = (json: string) =>
    (JSON.parse(json) as { items: { metadata: { namespace: string; name: string } }[] }).items
      .filter((i) => i.metadata.namespace === ns)
      .map((i) => i.metadata.name);
  const api = apiGet(['get', 'configmaps', '-A'], testKubeconfig());
  expect(names(api!.stdout)).toEqual(names(kubectlOk(['get', 'configmaps', '-A', '-o', 'json'])));
  expect(names(api!.stdout)).toEqual(expect.arrayContaining(['a', 'b']));
});

test.each([
  ['another flag', ['get', 'pods', '--sort-by', '.metadata.name']],
  ['another output', ['get', 'configmap', 'a', '-n', 'default', '-o', 'yaml']],
  ['two types at once', ['get', 'configmap,secret', '-n', 'default']],
  ['type/name', ['get', 'configmap/a', '-n', 'default']],
  ['a type no server serves', ['get', 'nosuchthings']],
  ['not a get', ['describe', 'configmap', 'a']],
])('%s is left to kubectl', (_, args) => {
  expect(apiGet(args, testKubeconfig())).toBeUndefined();
});

test('a namespace the helper makes is there for kubectl; a name the server refuses fails as kubectl fails', () => {
  const made = createTestNamespace('api-made');
  try {
    expect(kubectlOk(['get', 'namespace', made, '-o', 'name']).trim()).toBe(`namespace/${made}`);
  } finally {
    kubectl(['delete', 'namespace', made, '--wait=false']);
  }
  const refused = kubectl(['create', 'namespace', 'Not_A_Name']);
  expect(refused.stderr).toContain('is invalid');
  expect(() => createTestNamespace('Not_A_Name')).toThrow(
    /creating namespace Not_A_Name-\w+: Error from server \(Invalid\): .* is invalid/,
  );
});

test("a ServiceAccount's token from the helper authenticates as that ServiceAccount, for the time asked", () => {
  kubectlOk(['create', 'serviceaccount', 'reader', '-n', ns]);
  const token = serviceAccountToken(ns, 'reader', 600);
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
  expect(claims.sub).toBe(`system:serviceaccount:${ns}:reader`);
  expect(claims.exp - claims.iat).toBe(600);
  const { server } = kubeconfigCluster(testKubeconfig());
  const whoami = kubectlOk(['auth', 'whoami', '-o', 'json', `--server=${server}`, `--token=${token}`]);
  expect(JSON.parse(whoami).status.userInfo.username).toBe(`system:serviceaccount:${ns}:reader`);
  expect(() => serviceAccountToken(ns, 'nobody-here', 600)).toThrow(/not found/);
});

test("the run's kubectl calls keep their caches in the run's directory, not in ~/.kube/cache", () => {
  kubectlOk(['get', 'namespace', ns, '-o', 'name']);
  const { server } = kubeconfigCluster(testKubeconfig());
  const address = new URL(server).host.replace(':', '_');
  const cache = process.env.KUBECACHEDIR ?? path.join(os.homedir(), '.kube', 'cache');
  expect(fs.existsSync(path.join(cache, 'discovery', address))).toBe(true);
  expect(fs.existsSync(path.join(os.homedir(), '.kube', 'cache', 'discovery', address))).toBe(false);
});
