/**
 * Every cdk8s language (#69): the kit's ready-made operators, compiled with jsii from the packed
 * kit (jsii/build.ts, as `npm run package:jsii` builds them), composed by a Python cdk8s app with
 * cdk8s, constructs and cdk8s-plus-27 from PyPI, synthesize byte for byte what the same
 * TypeScript app synthesizes; a bad option raises in Python with the TypeScript message.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import {
  CronTabOperator,
  DatabaseOperator,
  EtcdClusterOperator,
  MemcachedOperator,
  MongoDbStorage,
  WebAppOperator,
} from '../../constructs';
import { cachedJsiiBuild, installedVersion } from '../../jsii/build';
import { packKit } from '../support/package';
import { cacheDirectory, releaseVersions } from '../../testing/release-binaries';

jest.setTimeout(600_000);

let work: string;
let python: (script: string) => { code: number | null; stdout: string; stderr: string };

/** A virtual environment with cdk8s, constructs and cdk8s-plus-27 from PyPI, at the versions the repository uses (cached). */
function pythonWithCdk8s(): string {
  const peers = ['cdk8s', 'constructs', 'cdk8s-plus-27'].map((p) => `${p}==${installedVersion(p)}`);
  const venv = path.join(cacheDirectory(releaseVersions()), '..', `python-${peers.join('-')}`);
  const bin = path.join(venv, 'bin', 'python');
  if (!fs.existsSync(path.join(venv, 'installed'))) {
    fs.rmSync(venv, { recursive: true, force: true });
    run('python3', ['-m', 'venv', venv]);
    run(bin, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...peers]);
    fs.writeFileSync(path.join(venv, 'installed'), peers.join('\n'));
  }
  return bin;
}

function run(command: string, args: readonly string[], cwd?: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-languages-'));
  // Built from the packed kit as `npm run package:jsii` builds it; the same kit and facade as the
  // last run's are that run's packages (cached outside the repository).
  const built = cachedJsiiBuild({
    kitTarball: packKit(),
    cacheDir: path.join(cacheDirectory(releaseVersions()), '..', 'jsii-builds'),
  });
  // The built wheel beside the cached peers, not in them: the cache stays as PyPI made it.
  const site = path.join(work, 'site');
  const bin = pythonWithCdk8s();
  run(bin, [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--no-deps',
    '--target',
    site,
    built.wheel,
  ]);
  python = (script) => {
    const r = spawnSync(bin, ['-c', script], {
      cwd: work,
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, PYTHONPATH: site },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
});

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** Every file an app wrote, by name. */
function synthesized(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
}

test('a Python app composing every ready-made operator, with options, synthesizes what the TypeScript app does, byte for byte', () => {
  const outdir = path.join(work, 'python-dist');
  const r = python(`
from cdk8s import App, Chart
import cdk8s_operator_kit as kit

app = App(outdir=${JSON.stringify(outdir)})
cluster = Chart(app, "cluster")
memcached = kit.MemcachedOperator(Chart(app, "memcached"), "memcached", cluster_scope=cluster,
    log_level=kit.LogLevel.DEBUG, watch_namespaces=["shop", "blog"], monitoring=True)
kit.EtcdClusterOperator(Chart(app, "etcd"), "etcd", cluster_scope=cluster, namespace="etcd-ops",
    resources=kit.OperatorResources(cpu_request="20m", memory_limit="512Mi"), max_concurrent_reconciles=2)
kit.DatabaseOperator(Chart(app, "database"), "database", cluster_scope=cluster,
    image_pull_policy=kit.ImagePullPolicy.ALWAYS, metrics_port=9090, image_tag="1.2.3")
kit.CronTabOperator(Chart(app, "crontab"), "crontab", cluster_scope=cluster, leader_election=False)
kit.WebAppOperator(Chart(app, "webapp"), "webapp", cluster_scope=cluster,
    monitoring=kit.MonitoringOptions(labels={"release": "kps"}, interval="1m"))
kit.MongoDbStorage(Chart(app, "mongodb"), "storage", replica_set_name="rs", namespace="mongo",
    data=kit.MongoDbVolumeOptions(capacity="2Gi", nfs=kit.NfsExports(server="nfs.example.com",
        paths=["/exports/rs-0", "/exports/rs-1", "/exports/rs-2"])))
app.synth()
print(memcached.operator_name, memcached.operator_namespace, ",".join(memcached.crd_names),
      memcached.deployment.name, memcached.service_account.name)
`);
  expect(r.stderr.replace(/^.*(Node 20|!!).*$/gm, '').trim()).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout.trim()).toBe(
    'memcached memcached-system memcacheds.cache.example.com memcached-operator memcached-operator',
  );

  const app = new App({ outdir: path.join(work, 'typescript-dist') });
  const cluster = new Chart(app, 'cluster');
  new MemcachedOperator(new Chart(app, 'memcached'), 'memcached', {
    clusterScope: cluster,
    logLevel: 'debug',
    watchNamespaces: ['shop', 'blog'],
    monitoring: true,
  });
  new EtcdClusterOperator(new Chart(app, 'etcd'), 'etcd', {
    clusterScope: cluster,
    namespace: 'etcd-ops',
    resources: { cpuRequest: '20m', memoryLimit: '512Mi' },
    maxConcurrentReconciles: 2,
  });
  new DatabaseOperator(new Chart(app, 'database'), 'database', {
    clusterScope: cluster,
    imagePullPolicy: 'Always',
    metricsPort: 9090,
    imageTag: '1.2.3',
  });
  new CronTabOperator(new Chart(app, 'crontab'), 'crontab', { clusterScope: cluster, leaderElection: false });
  new WebAppOperator(new Chart(app, 'webapp'), 'webapp', {
    clusterScope: cluster,
    monitoring: { labels: { release: 'kps' }, interval: '1m' },
  });
  new MongoDbStorage(new Chart(app, 'mongodb'), 'storage', {
    replicaSetName: 'rs',
    namespace: 'mongo',
    data: {
      capacity: '2Gi',
      nfs: { server: 'nfs.example.com', paths: ['/exports/rs-0', '/exports/rs-1', '/exports/rs-2'] },
    },
  });
  app.synth();

  const fromPython = synthesized(outdir);
  expect(Object.keys(fromPython)).toHaveLength(7);
  expect(fromPython).toEqual(synthesized(path.join(work, 'typescript-dist')));
  // The options reached the objects: not a pair of empty apps.
  expect(fromPython['0001-memcached.k8s.yaml']).toContain('--log-level=debug');
  expect(fromPython['0003-database.k8s.yaml']).toContain('imagePullPolicy: Always');
});

test('a bad option raises in Python with the TypeScript message', () => {
  const r = python(`
from cdk8s import App, Chart
import cdk8s_operator_kit as kit
try:
    kit.MemcachedOperator(Chart(App(), "c"), "memcached", namespace="Not_Valid")
except Exception as e:
    print(e)
`);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    'Operator "memcached": namespace "Not_Valid" must be a lower-case DNS label (letters, digits, dashes; at most 63 characters)',
  );
});
