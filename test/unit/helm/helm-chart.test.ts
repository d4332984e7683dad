/**
 * The operator's Helm chart (`writeHelmChart`, `npm run helm`), rendered by the real `helm`: every
 * combination of values renders exactly what the Operator construct makes with the same settings,
 * the values schema refuses what the construct refuses, and `helm lint` passes.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import { stringify } from 'yaml';
import {
  memcachedController,
  Operator,
  operatorHelmChart,
  type OperatorProps,
  webAppController,
  writeHelmChart,
} from '../../../constructs';
import { helm, helmBinary, helmOk } from '../../support/helm';
import { parseYaml } from '../../support/synth';
import { tempDir } from '../../support/temp-dir';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const RELEASE_NAMESPACE = 'ops';
const { missing } = helmBinary();

jest.setTimeout(120_000);

/** A CRD as the chart installs it: kept by `helm uninstall`. */
function kept(crd: any): any {
  return { ...crd, metadata: { ...crd.metadata, annotations: { 'helm.sh/resource-policy': 'keep' } } };
}

/**
 * What the construct makes with these props, in the release's namespace (the CRDs' conversion
 * Service too); `objects` holds the CRDs as the chart installs them.
 */
function constructObjects(props: OperatorProps): { crds: any[]; objects: any[] } {
  const chart = new Chart(new App({ outdir: '/dev/null' }), 'direct');
  new Operator(chart, props.name!, { ...props, namespace: RELEASE_NAMESPACE, createNamespace: false });
  const all = chart.toJson();
  const crds = all.filter((o) => o.kind === 'CustomResourceDefinition');
  return {
    crds,
    objects: sortObjects([...all.filter((o) => o.kind !== 'CustomResourceDefinition'), ...crds.map(kept)]),
  };
}

function sortObjects(objects: any[]): any[] {
  const key = (o: any) => `${o.kind}/${o.metadata.name}`;
  return [...objects].sort((a, b) => key(a).localeCompare(key(b)));
}

/** `helm template` of the chart with these values (a values file, so types stay as written). */
function render(chart: string, values: object): any[] {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-values-')), 'values.yaml');
  fs.writeFileSync(file, stringify(values));
  return sortObjects(parseYaml(helmOk(['template', 'r', chart, '-n', RELEASE_NAMESPACE, '-f', file])));
}

/** Settings as chart values and as the construct's props: the same operator two ways. */
interface Setting {
  readonly name: string;
  readonly values: Record<string, unknown>;
  readonly props: Partial<OperatorProps>;
}

const SWITCH_SETTINGS: Setting[][] = [
  [
    { name: 'leader election', values: { leaderElection: { enabled: true } }, props: { leaderElection: true } },
    { name: 'no leader election', values: { leaderElection: { enabled: false } }, props: { leaderElection: false } },
  ],
  [
    { name: 'secure metrics', values: { metrics: { secure: true } }, props: { metricsSecure: true } },
    { name: 'plain metrics', values: { metrics: { secure: false } }, props: { metricsSecure: false } },
  ],
  [
    { name: 'every namespace', values: { watchNamespaces: [] }, props: {} },
    { name: 'one namespace', values: { watchNamespaces: ['team-a'] }, props: { watchNamespace: 'team-a' } },
    {
      name: 'two namespaces',
      values: { watchNamespaces: ['team-a', 'team-b'] },
      props: { watchNamespaces: ['team-a', 'team-b'] },
    },
  ],
  [
    { name: 'no monitoring', values: { monitoring: { enabled: false } }, props: {} },
    { name: 'monitoring', values: { monitoring: { enabled: true } }, props: { monitoring: true } },
  ],
];

/** Every value other than its default (more replicas only where leader election allows them). */
function customScalars(leaderElection: boolean): Setting {
  return {
    name: 'custom image, replicas, resources, log level, concurrency, port',
    values: {
      image: { repository: 'ghcr.io/acme/memcached-operator', tag: '2.0.1', pullPolicy: 'Always' },
      replicaCount: leaderElection ? 3 : 1,
      resources: { requests: { cpu: '50m', memory: '100Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      logLevel: 'debug',
      maxConcurrentReconciles: 8,
      metrics: { port: 9443 },
    },
    props: {
      image: 'ghcr.io/acme/memcached-operator',
      imageTag: '2.0.1',
      imagePullPolicy: 'Always',
      replicas: leaderElection ? 3 : 1,
      resources: { cpuRequest: '50m', memoryRequest: '100Mi', cpuLimit: '1', memoryLimit: '512Mi' },
      logLevel: 'debug',
      maxConcurrentReconciles: 8,
      metricsPort: 9443,
    },
  };
}

function merge(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && typeof a[k] === 'object' ? merge(a[k], v) : v;
  }
  return out;
}

/** All 24 combinations of the switches, with default values and with every other value changed. */
const COMBINATIONS = SWITCH_SETTINGS.reduce<Setting[][]>(
  (acc, choices) => acc.flatMap((combo) => choices.map((c) => [...combo, c])),
  [[]],
).flatMap((combo) => {
  const leader = combo[0]!.props.leaderElection!;
  return [combo, [...combo, customScalars(leader)]];
});

const MEMCACHED: OperatorProps = { name: 'memcached', controllers: [memcachedController] };

if (missing) test.todo(`the operator Helm chart, rendered by helm — skipped: ${missing}`);

(missing ? describe.skip : describe)('the operator Helm chart', () => {
  const chart = path.join(tempDir('opkit-chart-'), 'memcached-operator');
  beforeAll(() => {
    writeHelmChart(chart, { operator: { name: 'memcached', controllers: [memcachedController] } });
  });

  test.each(COMBINATIONS.map((combo) => [combo.map((s) => s.name).join('; '), combo] as const))(
    'helm template with %s renders what the construct makes with the same settings',
    (_name, combo) => {
      const values = combo.reduce((v, s) => merge(v, s.values), {});
      const props = combo.reduce<OperatorProps>((p, s) => ({ ...p, ...s.props }), MEMCACHED);
      expect(render(chart, values)).toEqual(constructObjects(props).objects);
    },
  );

  test('the CRDs are templates: their conversion Service follows the release namespace, helm uninstall keeps them, crds.install=false leaves them out', () => {
    expect(fs.existsSync(path.join(chart, 'crds'))).toBe(false);
    const crds = render(chart, {}).filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds).toEqual(constructObjects(MEMCACHED).crds.map(kept));
    expect(crds.map((c) => c.metadata.name)).toEqual(['memcacheds.cache.example.com']);
    expect(crds[0]!.spec.conversion.webhook.clientConfig.service.namespace).toBe(RELEASE_NAMESPACE);
    expect(crds[0]!.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    const without = render(chart, { crds: { install: false } });
    expect(without.filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);
    expect(without).toEqual(render(chart, {}).filter((o) => o.kind !== 'CustomResourceDefinition'));
  });

  test('customResources: each object given is in the release, in its namespace unless it names one; crdsDirectory puts the CRDs in crds/ so one release carries both', () => {
    const memcached = (name: string, namespace?: string) => ({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name, ...(namespace ? { namespace } : {}) },
      spec: { size: 2 },
    });
    const given = render(chart, { customResources: [memcached('cache'), memcached('other', 'team-b')] });
    expect(given.filter((o) => o.kind === 'Memcached')).toEqual([memcached('cache'), memcached('other', 'team-b')]);
    expect(render(chart, {}).some((o) => o.kind === 'Memcached')).toBe(false);
    const refused = helm(['template', 'r', chart, '--set', 'customResources[0].kind=Memcached']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('customResources');
    // crds/: a kind without a conversion webhook (the Memcached CRD converts through one).
    const dir = path.join(tempDir('opkit-chart-'), 'webapp-operator');
    writeHelmChart(dir, { operator: { name: 'webapp', controllers: [webAppController] }, crdsDirectory: true });
    expect(fs.readdirSync(path.join(dir, 'crds'))).toEqual(['webapps.apps.example.com.yaml']);
    expect(fs.readdirSync(path.join(dir, 'templates')).filter((f) => f.startsWith('crd-'))).toEqual([]);
    expect(parseYaml(fs.readFileSync(path.join(dir, 'values.yaml'), 'utf8'))[0]?.crds).toBeUndefined();
    const withCrds = parseYaml(helmOk(['template', 'r', dir, '-n', RELEASE_NAMESPACE, '--include-crds']));
    expect(withCrds.filter((o: any) => o.kind === 'CustomResourceDefinition').map((o: any) => o.metadata.name)).toEqual(
      ['webapps.apps.example.com'],
    );
    expect(() =>
      operatorHelmChart({ operator: { name: 'memcached', controllers: [memcachedController] }, crdsDirectory: true }),
    ).toThrow(/converts through a webhook/);
  });

  test('values.yaml holds the construct’s defaults, each documented', () => {
    const text = fs.readFileSync(path.join(chart, 'values.yaml'), 'utf8');
    expect(parseYaml(text)[0]).toEqual({
      image: { repository: 'cdk8s-operator-kit/reconciler', tag: '0.1.0', pullPolicy: 'IfNotPresent' },
      replicaCount: 1,
      resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
      watchNamespaces: [],
      logLevel: 'info',
      maxConcurrentReconciles: 4,
      metrics: { port: 8080, secure: true },
      leaderElection: { enabled: true },
      monitoring: { enabled: false },
      crds: { install: true },
      customResources: [],
    });
    // A comment before every leaf value.
    const leaves = text.split('\n').filter((l) => /^\s*[\w.]+: \S/.test(l));
    for (const leaf of leaves.filter((l) => !/^\s+(cpu|memory):/.test(l))) {
      const at = text.split('\n').indexOf(leaf);
      expect({ leaf, comment: text.split('\n')[at - 1]!.trim().startsWith('#') }).toEqual({ leaf, comment: true });
    }
  });

  const refused: [string, Record<string, unknown>, Partial<OperatorProps>, RegExp][] = [
    [
      'two replicas without leader election',
      { replicaCount: 2, leaderElection: { enabled: false } },
      { replicas: 2, leaderElection: false },
      /replicaCount/,
    ],
    ['an unknown log level', { logLevel: 'loud' }, { logLevel: 'loud' as never }, /logLevel/],
    ['a privileged metrics port', { metrics: { port: 80 } }, { metricsPort: 80 }, /metrics\.port|port/],
    [
      'a namespace that is not a DNS label',
      { watchNamespaces: ['Team_A'] },
      { watchNamespaces: ['Team_A'] },
      /watchNamespaces/,
    ],
    [
      'a namespace listed twice',
      { watchNamespaces: ['team-a', 'team-a'] },
      { watchNamespaces: ['team-a', 'team-a'] },
      /watchNamespaces/,
    ],
    [
      'zero reconciles at once',
      { maxConcurrentReconciles: 0 },
      { maxConcurrentReconciles: 0 },
      /maxConcurrentReconciles/,
    ],
  ];
  test.each(refused)('helm refuses %s naming the value, as the construct refuses it', (_what, values, props, field) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-values-')), 'values.yaml');
    fs.writeFileSync(file, stringify(values));
    const r = helm(['template', 'r', chart, '-f', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(field);
    expect(() => constructObjects({ ...MEMCACHED, ...props })).toThrow();
  });

  test('a misspelt value is refused, not ignored', () => {
    const r = helm(['template', 'r', chart, '--set', 'replicas=3']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/replicas/);
  });

  test("a user's operator: its own settings are the chart's defaults, and an Operator construct makes the same chart", () => {
    const props: OperatorProps = {
      name: 'cache',
      controllers: [memcachedController],
      image: 'registry.example.com:5000/team/cache-operator:1.4.2',
      leaderElection: false,
      watchNamespace: 'apps',
      logLevel: 'warn',
    };
    const own = path.join(tempDir('opkit-chart-'), 'cache');
    writeHelmChart(own, { operator: props as OperatorProps & { name: string }, version: '1.4.2' });
    expect(parseYaml(fs.readFileSync(path.join(own, 'Chart.yaml'), 'utf8'))[0]).toMatchObject({
      apiVersion: 'v2',
      name: 'cache-operator',
      version: '1.4.2',
      appVersion: '1.4.2',
    });
    expect(render(own, {})).toEqual(constructObjects(props).objects);
    // From the construct itself, placed in a chart of the user's app with a cluster-scope chart.
    const app = new App({ outdir: '/dev/null' });
    const operator = new Operator(new Chart(app, 'ops'), 'cache', {
      ...props,
      clusterScope: new Chart(app, 'cluster'),
    });
    const fromConstruct = path.join(tempDir('opkit-chart-'), 'cache');
    writeHelmChart(fromConstruct, { operator, version: '1.4.2' });
    for (const f of [
      'values.yaml',
      'templates/deployment-cache-operator.yaml',
      'templates/crd-memcacheds.cache.example.com.yaml',
    ]) {
      expect(fs.readFileSync(path.join(fromConstruct, f), 'utf8')).toBe(fs.readFileSync(path.join(own, f), 'utf8'));
    }
  });

  test("an operator watching several namespaces, with admission hooks: its chart's defaults render what it makes, a Role and RoleBinding in each and the hooks selecting them", () => {
    const props: OperatorProps = {
      name: 'web',
      controllers: [webAppController],
      admissionWebhooks: true,
      watchNamespaces: ['shop', 'blog'],
    };
    const own = path.join(tempDir('opkit-chart-'), 'web');
    writeHelmChart(own, { operator: props as OperatorProps & { name: string } });
    expect(parseYaml(fs.readFileSync(path.join(own, 'values.yaml'), 'utf8'))[0]?.watchNamespaces).toEqual([
      'shop',
      'blog',
    ]);
    const rendered = render(own, {});
    expect(rendered).toEqual(constructObjects(props).objects);
    const namespacesOf = (kind: string) =>
      rendered
        .filter((o) => o.kind === kind && o.metadata.name === 'web-manager-role')
        .map((o) => o.metadata.namespace);
    expect(namespacesOf('Role').sort()).toEqual(['blog', 'shop']);
    const hook = rendered.find((o) => o.kind === 'ValidatingWebhookConfiguration');
    expect(hook.webhooks[0].namespaceSelector.matchExpressions[0].values).toEqual(['shop', 'blog']);
    const args = rendered.find((o) => o.kind === 'Deployment').spec.template.spec.containers[0].args;
    expect(args).toContain('--namespaces=shop,blog');
    // Another list at install time: the chart follows it as the construct would.
    const three = ['a', 'b', 'c'];
    expect(render(own, { watchNamespaces: three })).toEqual(
      constructObjects({ ...props, watchNamespaces: three }).objects,
    );
  });

  test("the chart is named as the operator is: '-operator' is added once, never twice", () => {
    const named = (name: string) => {
      const [chartYaml] = parseYaml(
        operatorHelmChart({ operator: { name, controllers: [memcachedController] } })['Chart.yaml'] ?? '',
      );
      return chartYaml?.name;
    };
    expect(named('memcached')).toBe('memcached-operator');
    expect(named('kv-operator')).toBe('kv-operator');
  });

  test('npm run helm writes a chart per kit operator, and helm lint --strict passes each', () => {
    const out = tempDir('opkit-charts-');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/helm.ts', '--output', out], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const charts = fs.readdirSync(out).sort();
    expect(charts).toEqual([
      'crontab-operator',
      'database-operator',
      'etcd-operator',
      'memcached-operator',
      'webapp-operator',
    ]);
    for (const c of charts) {
      const lint = helm(['lint', '--strict', path.join(out, c)]);
      expect({ chart: c, code: lint.code, out: lint.code ? lint.stdout + lint.stderr : '' }).toEqual({
        chart: c,
        code: 0,
        out: '',
      });
    }
  });
});
