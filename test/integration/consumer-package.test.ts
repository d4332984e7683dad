/**
 * The consumer path, as a user takes it: `npm pack` the kit, install the tarball into a copy of
 * examples/platform-app (its own package.json; packages come from the npm cache where they can),
 * then type-check it against the published .d.ts, synthesize it, run its own tests (snapshot and
 * meaning), load the package from CommonJS and from ESM, and start its reconciler.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildImage, deploymentIn, missingContainerTools, ReconcilerContainer } from '../support/container';
import { helm, helmBinary, helmOk } from '../support/helm';
import { freePort } from '../../testing/control-plane';
import { createTestNamespace, eventually, getJsonIfExists, kubectl, kubectlOk, testKubeconfig } from '../support/kube';
import { packKit } from '../support/package';
import { parseYaml } from '../support/synth';

const ROOT = path.resolve(__dirname, '..', '..');

jest.setTimeout(600_000);

let work: string;
let app: string;
let tarball: string;

function run(cmd: string, args: string[], cwd: string, timeoutMs = 300_000): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}) in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-consumer-'));
  tarball = packKit();
  app = path.join(work, 'platform-app');
  fs.cpSync(path.join(ROOT, 'examples', 'platform-app'), app, {
    recursive: true,
    filter: (src) => !/node_modules|\/dist$/.test(src),
  });
  const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8'));
  pkg.dependencies['cdk8s-operator-kit'] = `file:${tarball}`;
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg, null, 2));
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], app, 500_000);
});

test('the tarball holds the compiled library, its types and the harness scripts, nothing else of the repo', () => {
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
  for (const f of [
    'lib/constructs/index.js',
    'lib/constructs/index.d.ts',
    'lib/operator/index.js',
    'lib/testing/index.js',
    'lib/testing/build-control-plane.sh',
    'lib/command/cli.js',
    'LICENSE',
    'CHANGELOG.md',
    'README.md',
    'package.json',
  ]) {
    expect(files).toContain(f);
  }
  // TypeScript only in the examples the docs cite, to read and copy.
  expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('lib/examples/'))).toEqual([]);
  expect(files.filter((f) => f.startsWith('lib/examples/') && f.endsWith('/app.ts')).sort()).toEqual([
    'lib/examples/blog-site/app.ts',
    'lib/examples/key-value-store/app.ts',
    'lib/examples/static-site/app.ts',
  ]);
  expect(
    files.filter(
      (f) =>
        /^(test\/(unit|integration)|bench|dist|imports|examples|scripts)\//.test(f) || f.startsWith('lib/test/support'),
    ),
  ).toEqual([]);
});

test('the app type-checks against the published types, synthesizes, and its own tests pass', () => {
  run('npx', ['tsc', '-p', '.'], app);
  run('npm', ['run', 'synth'], app);
  expect(fs.readdirSync(path.join(app, 'dist')).sort()).toEqual([
    '0000-cluster.k8s.yaml',
    '0001-platform.k8s.yaml',
    '0002-samples.k8s.yaml',
  ]);
  const results = path.join(work, 'app-jest-results.json');
  run('npx', ['jest', '--ci', '--json', `--outputFile=${results}`], app);
  // Among them the Greeting's upgrade test (cdk8s-operator-kit/testing's upgradeTest) and its
  // conformance test (conformanceTest), which passed.
  const files = JSON.parse(fs.readFileSync(results, 'utf8')).testResults.map((r: any) => ({
    file: path.relative(app, r.name),
    status: r.status,
  }));
  expect(files).toContainEqual({ file: path.join('test', 'upgrade.test.ts'), status: 'passed' });
  expect(files).toContainEqual({ file: path.join('test', 'conformance.test.ts'), status: 'passed' });
});

test('the examples the docs cite, as the package ships them, type-check in the app and synthesize their operators', () => {
  const shipped = path.join(app, 'node_modules', 'cdk8s-operator-kit', 'lib', 'examples');
  const copy = path.join(app, 'shipped-examples');
  fs.cpSync(shipped, copy, { recursive: true });
  try {
    // They import the kit by its name, as a user's app does: the app's own compiler settings.
    fs.writeFileSync(
      path.join(copy, 'tsconfig.json'),
      JSON.stringify({ extends: '../tsconfig.json', include: ['**/*.ts'] }),
    );
    run('npx', ['tsc', '-p', copy], app);
    for (const example of ['static-site', 'key-value-store', 'blog-site']) {
      const outdir = path.join(work, `example-${example}`);
      const synth = `require('./shipped-examples/${example}/app').${camel(example)}App(${JSON.stringify(outdir)}).synth()`;
      run('npx', ['tsx', '-e', synth], app);
      const crds = fs
        .readdirSync(outdir)
        .flatMap((f) => fs.readFileSync(path.join(outdir, f), 'utf8').split('\n'))
        .filter((l) => l === 'kind: CustomResourceDefinition');
      expect([example, crds.length]).toEqual([example, 1]);
    }
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
});

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

test("it runs under the cdk8s init template's ts-node and CommonJS tsconfig, subpath imports included", () => {
  fs.rmSync(path.join(app, 'dist'), { recursive: true, force: true });
  run('npm', ['run', 'synth:ts-node'], app);
  expect(fs.readdirSync(path.join(app, 'dist'))).toHaveLength(3);
  expect(run('npx', ['ts-node', '--project', 'tsconfig.cdk8s-init.json', 'reconciler.ts', '--help'], app)).toContain(
    '--leader-elect',
  );
});

test("one copy of cdk8s and constructs: the kit takes the app's (peer dependencies)", () => {
  expect(fs.existsSync(path.join(app, 'node_modules', 'cdk8s-operator-kit', 'node_modules', 'cdk8s'))).toBe(false);
  expect(fs.existsSync(path.join(app, 'node_modules', 'cdk8s-operator-kit', 'node_modules', 'constructs'))).toBe(false);
});

test('the package loads from CommonJS and from ESM, and its reconciler starts', () => {
  expect(
    run(
      process.execPath,
      [
        '-e',
        "const k = require('cdk8s-operator-kit'); console.log(typeof k.MemcachedOperator, typeof require('cdk8s-operator-kit/reconciler').runOperator)",
      ],
      app,
    ).trim(),
  ).toBe('function function');
  expect(
    run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { ConstructOperator } from 'cdk8s-operator-kit'; import { runOperator } from 'cdk8s-operator-kit/reconciler'; import { startControlPlane } from 'cdk8s-operator-kit/testing'; console.log(typeof ConstructOperator, typeof runOperator, typeof startControlPlane)",
      ],
      app,
    ).trim(),
  ).toBe('function function function');
  const help = spawnSync(process.execPath, ['--import', 'tsx', 'reconciler.ts', '--help'], {
    cwd: app,
    encoding: 'utf8',
  });
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('--leader-elect');
  const wrong = spawnSync(process.execPath, ['--import', 'tsx', 'reconciler.ts', '--controllers=memcached'], {
    cwd: app,
    encoding: 'utf8',
  });
  expect(wrong.stderr).toContain('known: greeting');
});

test("the package's run command runs the app's own reconciler out of cluster; Ctrl-C stops it cleanly", async () => {
  if (!fs.existsSync(path.join(app, 'dist'))) run('npm', ['run', 'synth'], app);
  kubectlOk(['apply', '--server-side', '-f', path.join(app, 'dist', '0000-cluster.k8s.yaml')]);
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/greetings.platform.example.com']);
  const port = await freePort();
  const child = spawn(
    path.join(app, 'node_modules', '.bin', 'cdk8s-operator-kit'),
    [
      'run',
      '--entry',
      'reconciler.ts',
      '--',
      `--kubeconfig=${testKubeconfig()}`,
      `--health-probe-bind-address=127.0.0.1:${port}`,
      '--metrics-bind-address=0',
    ],
    { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((r) => {
    child.once('exit', (code) => {
      r(code);
    });
  });
  await eventually(
    'its /readyz',
    async () => ((await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok ? true : undefined),
    120_000,
  );
  expect(output).toContain('"controllers":["greeting"]');
  // A Greeting it reconciles, for plan below.
  const ns = createTestNamespace('greeting-plan');
  kubectlOk(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'platform.example.com/v1',
      kind: 'Greeting',
      metadata: { name: 'hello' },
      spec: { message: 'Hello' },
    }),
  });
  await eventually(
    'its status',
    () => getJsonIfExists(['get', 'greeting', 'hello', '-n', ns])?.status?.conditions,
    60_000,
  );
  // The app's kind has two versions: run routed the Service the CRD's conversion calls to this
  // reconciler on loopback (the CRD keeps its Service), so a v1alpha1 Greeting is stored as v1
  // and reads back in both.
  const crd = getJsonIfExists(['get', 'crd', 'greetings.platform.example.com']);
  expect(crd.spec.conversion.webhook.clientConfig).toEqual({
    service: expect.objectContaining({ path: '/convert', port: 443 }),
    caBundle: expect.any(String),
  });
  expect(output).toContain('webhook Service routed to this process');
  // Once the API server has read the caBundle the run set (a moment; longer on a busy machine).
  const v1alpha1 = JSON.stringify({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'Greeting',
    metadata: { name: 'old' },
    spec: { text: 'Hello from v1alpha1' },
  });
  await eventually(
    'a v1alpha1 Greeting created through the routed conversion webhook',
    () => (kubectl(['apply', '-n', ns, '-f', '-'], { input: v1alpha1 }).code === 0 ? true : undefined),
    120_000,
  );
  expect(getJsonIfExists(['get', 'greetings.v1.platform.example.com', 'old', '-n', ns]).spec).toEqual({
    message: 'Hello from v1alpha1',
    replicas: 1,
  });
  await eventually(
    'the v1alpha1 Greeting reconciled',
    () => getJsonIfExists(['get', 'configmap', 'old', '-n', ns])?.data?.['index.html'],
    60_000,
  );
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(output).toContain('manager stopped');
  // The CRDs stay the owner's to apply: server-side, as the README says, with no conflict.
  kubectlOk(['apply', '--server-side', '-f', path.join(app, 'dist', '0000-cluster.k8s.yaml')]);

  // The package's plan, in the app, with the app's own controllers: the same version changes nothing.
  const plan = spawnSync(
    path.join(app, 'node_modules', '.bin', 'cdk8s-operator-kit'),
    ['plan', '--kind', 'Greeting', '-n', ns, '--controllers', 'greeting.ts', '-o', 'json'],
    { cwd: app, encoding: 'utf8', env: { ...process.env, KUBECONFIG: testKubeconfig() } },
  );
  expect({ code: plan.status, stderr: plan.stderr }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(plan.stdout)).toMatchObject({
    kind: 'Greeting',
    resources: 2,
    children: { changed: 0, created: 0, pruned: 0, refused: 0 },
    requests: { dryRuns: 0 },
  });
});

const helmMissing = helmBinary().missing;
if (helmMissing) test.todo(`the app's operator as a Helm chart — skipped: ${helmMissing}`);

(helmMissing ? test.skip : test)(
  "the app writes its operator's Helm chart from its construct, and helm renders the Deployment it synthesizes",
  () => {
    run('npm', ['run', 'helm'], app);
    const chart = path.join(app, 'charts', 'greeting-operator');
    const lint = helm(['lint', '--strict', chart]);
    expect({ code: lint.code, out: lint.code ? lint.stdout : '' }).toEqual({ code: 0, out: '' });
    if (!fs.existsSync(path.join(app, 'dist'))) run('npm', ['run', 'synth'], app);
    const rendered = parseYaml(helmOk(['template', 'greeting', chart, '-n', 'greeting-system']));
    const deployment = rendered.find((o) => o.kind === 'Deployment');
    // The same object as in dist/, the team chart's labels included.
    expect(deployment).toEqual(deploymentIn(path.join(app, 'dist', '0001-platform.k8s.yaml'), 'greeting-operator'));
    expect(deployment?.metadata.labels).toMatchObject({ team: 'platform' });
  },
);

const missingTools = missingContainerTools();
if (missingTools) test.todo(`the app's own reconciler image is built and run — skipped: ${missingTools}`);

(missingTools ? test.skip : test)(
  "the app builds its own reconciler image with the package's command, and it runs as its Deployment runs it",
  async () => {
    const image = buildImage({
      bin: [path.join(app, 'node_modules', '.bin', 'cdk8s-operator-kit')],
      entry: 'reconciler.ts',
      tag: 'registry.example.com/greeting-operator:1.0.0',
      outDir: path.join(work, 'image'),
      cwd: app,
    });
    expect(image.layers).toHaveLength(2);
    if (!fs.existsSync(path.join(app, 'dist'))) run('npm', ['run', 'synth'], app);
    for (const file of ['0000-cluster.k8s.yaml', '0001-platform.k8s.yaml'])
      kubectlOk(['apply', '--server-side', '-f', path.join(app, 'dist', file)]);
    kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/greetings.platform.example.com']);
    const ns = createTestNamespace('greeting-image');
    const deployment = deploymentIn(path.join(app, 'dist', '0001-platform.k8s.yaml'), 'greeting-operator');
    expect(deployment.spec.template.spec.containers[0].image).toBe('registry.example.com/greeting-operator:1.0.0');
    const container = await ReconcilerContainer.start({ archive: image.archive, deployment, namespace: ns });
    try {
      kubectlOk(['apply', '-n', ns, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'platform.example.com/v1',
          kind: 'Greeting',
          metadata: { name: 'hi' },
          spec: { message: 'Hello from an image' },
        }),
      });
      const cm = await eventually("the Greeting's ConfigMap", () =>
        getJsonIfExists(['get', 'configmap', 'hi', '-n', ns]),
      );
      expect(cm.data['index.html']).toBe('Hello from an image');
      expect(cm.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Greeting', name: 'hi' })]);
    } finally {
      expect((await container.stop()).code).toBe(0);
    }
  },
);
